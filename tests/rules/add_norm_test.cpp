// add_norm: fires on a residual add feeding a norm; declines broadcasts and
// constant addends (biases).
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph add_then_norm(std::vector<int64_t> b_shape, bool b_constant) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId r = b_constant ? g.constant("bias", GgmlType::F32, b_shape)
                          : g.state("r", GgmlType::F32, b_shape);
  TensorId h = g.apply_like(OpKind::add, "h", {x, r});
  TensorId w = g.constant("norm.weight", GgmlType::F32, {64});
  TensorId y = g.apply_like(OpKind::rms_norm, "y", {h, w}, {{"eps", 1e-6}});
  g.output(y);
  g.output(h);
  return g.finish();
}

TEST_CASE("add_norm fuses a residual add and the norm of the sum", "[rules]") {
  auto run = test::run_rule(add_then_norm({64}, false), "add_norm");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "add_norm [add_norm] {\n"
        "  #0 add h = x, r\n"
        "  #1 rms_norm y = h, norm.weight eps=1e-06\n"
        "}\n");
}

TEST_CASE("add_norm declines a broadcast add and a constant addend", "[rules]") {
  auto broadcast = test::run_rule(add_then_norm({1}, false), "add_norm");
  CHECK(broadcast->fired == 0);
  CHECK(broadcast->reason() ==
        "the add broadcasts r [1] over x [64]; the fused norm adds two vectors of one length");
  auto bias = test::run_rule(add_then_norm({64}, true), "add_norm");
  CHECK(bias->fired == 0);
  CHECK(bias->reason() == "the addend bias is a constant (a bias), not a residual stream");
}

}  // namespace
}  // namespace lanec
