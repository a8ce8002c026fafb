// embed_norm: fires when only the norm reads the gathered row; declines when
// the raw row is read again (llama's residual stream).
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph gather_norm(bool row_read_again) {
  GraphBuilder g;
  TensorId token = g.param("token", GgmlType::I32, {1});
  TensorId row = g.apply(OpKind::embed_get_rows, "row", {64},
                         {g.constant("table", GgmlType::Q8_0, {512, 64}), token});
  TensorId y = g.apply_like(OpKind::rms_norm, "y", {row, g.constant("w", GgmlType::F32, {64})},
                            {{"eps", 1e-6}});
  g.output(row_read_again ? g.apply_like(OpKind::add, "sum", {row, y}) : y);
  return g.finish();
}

TEST_CASE("embed_norm fuses the gather and the norm of the row", "[rules]") {
  auto run = test::run_rule(gather_norm(false), "embed_norm");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "embed_norm [embed_norm] {\n"
        "  #0 embed_get_rows row = table, token\n"
        "  #1 rms_norm y = row, w eps=1e-06\n"
        "}\n");
}

TEST_CASE("embed_norm declines when the raw row is read again", "[rules]") {
  auto run = test::run_rule(gather_norm(true), "embed_norm");
  CHECK(run->fired == 0);
  CHECK(run->reason() ==
        "the gathered row row is also read by #2 add sum; the fused gather keeps only the normed row");
}

}  // namespace
}  // namespace lanec
