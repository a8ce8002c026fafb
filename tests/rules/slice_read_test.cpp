// slice_read: a contiguous slice becomes a view; a strided one declines.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph sliced(std::vector<int64_t> shape) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, shape);
  std::vector<int64_t> out = shape;
  out.back() = 32;
  g.output(g.apply(OpKind::slice, "s", out, {x}, {{"offset", int64_t{32}}}));
  return g.finish();
}

TEST_CASE("slice_read reads a contiguous slice in place", "[rules]") {
  auto run = test::run_rule(sliced({96}), "slice_read");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "view [slice_read] {\n"
        "  #0 slice s = x offset=32\n"
        "}\n");
}

TEST_CASE("slice_read declines a strided slice", "[rules]") {
  auto run = test::run_rule(sliced({2, 96}), "slice_read");
  CHECK(run->fired == 0);
  CHECK(run->reason() ==
        "slicing the last dim of x [2, 96] is strided (2 rows); a view reads contiguous ranges");
}

}  // namespace
}  // namespace lanec
