// ffn_fused: the gate/up GEMV, the SwiGLU and the down GEMV with its
// residual add as one launch; declines other numerics and formats, a
// residual read after the block, shared products and a chip the intermediate
// blocks do not fill.
#include <catch2/catch.hpp>

#include "rules/ffn_fused.h"
#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

struct Block {
  GgmlType weights = GgmlType::Q8_0;
  bool act_is_output = false;
  bool residual_is_output = false;
  bool residual_read_after = false;
};

// r = x + x0; n = rms_norm(r); y = r + W_d silu(W_g n) * (W_u n).
Graph ffn_block(const Block& b) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId x0 = g.state("x0", GgmlType::F32, {64});
  TensorId r = g.apply_like(OpKind::add, "r", {x, x0});
  TensorId n = g.apply_like(OpKind::rms_norm, "n", {r, g.constant("nw", GgmlType::F32, {64})}, {{"eps", 1e-6}});
  TensorId gate = g.apply(OpKind::matmul, "gate", {128}, {n, g.constant("wg", b.weights, {128, 64})});
  TensorId up = g.apply(OpKind::matmul, "up", {128}, {n, g.constant("wu", b.weights, {128, 64})});
  TensorId act = g.apply_like(OpKind::swiglu, "act", {gate, up});
  TensorId down = g.apply(OpKind::matmul, "down", {64}, {act, g.constant("wd", b.weights, {64, 128})});
  TensorId y = g.apply_like(OpKind::add, "y", {down, r});
  if (b.residual_read_after) y = g.apply_like(OpKind::add, "z", {y, r});
  g.output(y);
  if (b.act_is_output) g.output(act);
  if (b.residual_is_output) g.output(r);
  return g.finish();
}

// Two-word int8 activations on a chip of `sms` SMs.
Knobs knobs_on(int sms, const std::string& activations = "two-pass-int8") {
  Knobs k = test::rule_knobs(activations);
  k.chip.sms = sms;
  return k;
}

const std::vector<std::string> kBefore = {"gemv_norm_epilogue", "gemv_parts"};

TEST_CASE("ffn_fused makes the FFN block one launch", "[rules]") {
  auto run = test::run_rule(ffn_block({}), "ffn_fused", kBefore, knobs_on(8));
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "#0 add r = x, x0\n"
        "#1 rms_norm n = r, nw eps=1e-06\n"
        "ffn [gemv_parts, gemv_norm_epilogue, ffn_fused] {\n"
        "  #2 matmul gate = n, wg\n"
        "  #3 matmul up = n, wu\n"
        "  #4 swiglu act = gate, up\n"
        "  #5 matmul down = act, wd\n"
        "  #6 add y = down, r\n"
        "}\n");
}

TEST_CASE("ffn_fused declines other numerics and weight formats", "[rules]") {
  CHECK(test::run_rule(ffn_block({}), "ffn_fused", kBefore, knobs_on(8, "int8"))->reason() ==
        "the fused FFN kernel takes two-word int8 activations (activations: two-pass-int8), these knobs ask for int8");
  CHECK(test::run_rule(ffn_block({}), "ffn_fused", kBefore, knobs_on(8, "dequant"))->fired == 0);
  Block f16;
  f16.weights = GgmlType::F16;
  CHECK(test::run_rule(ffn_block(f16), "ffn_fused", kBefore, knobs_on(8))->reason() ==
        "the fused FFN kernel takes q8_0 weights, wg is f16");
}

TEST_CASE("ffn_fused declines a chip its intermediate blocks do not fill", "[rules]") {
  // 128 intermediate values: 4 blocks of 32, under half of 132 SMs, at least half of 8.
  CHECK(test::run_rule(ffn_block({}), "ffn_fused", kBefore, knobs_on(132))->reason() ==
        "4 intermediate blocks of 32 for 132 SMs: the fused launch was measured where they fill at least half the "
        "chip");
  CHECK(test::run_rule(ffn_block({}), "ffn_fused", kBefore, knobs_on(9))->fired == 0);
  CHECK(test::run_rule(ffn_block({}), "ffn_fused", kBefore, knobs_on(8))->fired == 1);
  CHECK(kFfnFusedMinBlocksPerSm == 0.5);
}

TEST_CASE("ffn_fused declines a residual it would overwrite while read, and shared products", "[rules]") {
  Block after;
  after.residual_read_after = true;
  CHECK(test::run_rule(ffn_block(after), "ffn_fused", kBefore, knobs_on(8))->reason() ==
        "the residual r is read after the FFN by #7 add z (it is overwritten in place)");
  Block output;
  output.residual_is_output = true;
  CHECK(test::run_rule(ffn_block(output), "ffn_fused", kBefore, knobs_on(8))->reason() ==
        "the residual r is a graph output (it is overwritten in place)");
  Block act;
  act.act_is_output = true;
  CHECK(test::run_rule(ffn_block(act), "ffn_fused", kBefore, knobs_on(8))->reason() ==
        "act is also read by the graph outputs");
}

TEST_CASE("ffn_fused needs gate and up as one GEMV launch", "[rules]") {
  // Without gemv_parts the SwiGLU's inputs come from two launches: no site.
  auto run = test::run_rule(ffn_block({}), "ffn_fused", {"gemv_norm_epilogue"}, knobs_on(8));
  CHECK(run->fired == 0);
  CHECK(run->matched() == 0);
}

}  // namespace
}  // namespace lanec
