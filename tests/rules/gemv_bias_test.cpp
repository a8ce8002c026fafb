// gemv_bias: fires on matmul + bias vector; declines broadcast biases and
// products read without the bias.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph biased(std::vector<int64_t> bias_shape, bool product_is_output) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId y = g.apply(OpKind::matmul, "y", {96}, {x, g.constant("w", GgmlType::Q8_0, {96, 64})});
  TensorId yb = g.apply_like(OpKind::add, "yb", {y, g.constant("b", GgmlType::F32, bias_shape)});
  g.output(yb);
  if (product_is_output) g.output(y);
  return g.finish();
}

TEST_CASE("gemv_bias folds the bias into the GEMV epilogue", "[rules]") {
  auto run = test::run_rule(biased({96}, false), "gemv_bias");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "gemv [gemv_bias] {\n"
        "  #0 matmul y = x, w\n"
        "  #1 add yb = y, b\n"
        "}\n");
}

TEST_CASE("gemv_bias declines a broadcast bias and a product read elsewhere", "[rules]") {
  auto broadcast = test::run_rule(biased({1}, false), "gemv_bias");
  CHECK(broadcast->reason() == "the bias b [1] broadcasts over the product y [96]");
  auto read = test::run_rule(biased({96}, true), "gemv_bias");
  CHECK(read->fired == 0);
  CHECK(read->reason() == "the product y is also read by the graph outputs");
}

}  // namespace
}  // namespace lanec
