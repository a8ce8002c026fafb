// join_in_place: a concat of computed vectors becomes one buffer its parts
// are written into; declines parts not computed here and interleaved joins.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph joined(bool state_part, int64_t rows) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId a = g.apply(OpKind::matmul, "a", {rows, 32 / rows * 1}, {x, g.constant("wa", GgmlType::Q8_0, {32, 64})});
  TensorId b = state_part ? g.state("s", GgmlType::F32, {rows, 32 / rows})
                          : g.apply(OpKind::matmul, "b", {rows, 32 / rows}, {x, g.constant("wb", GgmlType::Q8_0, {32, 64})});
  g.output(g.apply(OpKind::concat, "y", {rows, 64 / rows}, {a, b}));
  return g.finish();
}

TEST_CASE("join_in_place writes the parts into the joined buffer", "[rules]") {
  auto run = test::run_rule(joined(false, 1), "join_in_place");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "#0 matmul a = x, wa\n"
        "#1 matmul b = x, wb\n"
        "join [join_in_place] {\n"
        "  #2 concat y = a, b\n"
        "}\n");
}

TEST_CASE("join_in_place declines parts not computed here and interleaved joins", "[rules]") {
  CHECK(test::run_rule(joined(true, 1), "join_in_place")->reason() ==
        "part s is a state, not computed in this step");
  CHECK(test::run_rule(joined(false, 2), "join_in_place")->reason() ==
        "joining the last dim of y [2, 32] interleaves the parts; in-place parts must be contiguous");
}

}  // namespace
}  // namespace lanec
