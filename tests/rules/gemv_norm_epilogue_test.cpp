// gemv_norm_epilogue: fires on matmul + residual add; declines when the
// product is read without the residual; it takes precedence over add_norm.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph residual(bool product_is_output, bool norm_after) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId r = g.state("r", GgmlType::F32, {64});
  TensorId y = g.apply(OpKind::matmul, "y", {64}, {x, g.constant("w", GgmlType::Q8_0, {64, 64})});
  TensorId h = g.apply_like(OpKind::add, "h", {r, y});
  g.output(h);
  if (norm_after)
    g.output(g.apply_like(OpKind::rms_norm, "n", {h, g.constant("nw", GgmlType::F32, {64})},
                          {{"eps", 1e-6}}));
  if (product_is_output) g.output(y);
  return g.finish();
}

TEST_CASE("gemv_norm_epilogue adds the residual in the GEMV epilogue", "[rules]") {
  auto run = test::run_rule(residual(false, false), "gemv_norm_epilogue");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "gemv [gemv_norm_epilogue] {\n"
        "  #0 matmul y = x, w\n"
        "  #1 add h = r, y\n"
        "}\n");
}

TEST_CASE("gemv_norm_epilogue declines a product read elsewhere; before a norm it leaves add_norm nothing",
          "[rules]") {
  auto read = test::run_rule(residual(true, false), "gemv_norm_epilogue");
  CHECK(read->reason() == "the product y is also read by the graph outputs");
  auto before_norm = test::run_rule(residual(false, true), "gemv_norm_epilogue");
  CHECK(before_norm->fired == 1);
  auto after = test::run_rule(residual(false, true), "add_norm", {"gemv_norm_epilogue"});
  CHECK(after->matched() == 0);
}

}  // namespace
}  // namespace lanec
