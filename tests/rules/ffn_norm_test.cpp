// ffn_norm: the RMS norm before a fused FFN block as the ffn launch's
// prologue; declines a normed vector read elsewhere, a norm of another
// vector than the block's residual, and a residual no GEMV writes.
#include <catch2/catch.hpp>

#include "rules/ffn_norm.h"
#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

struct Block {
  bool residual_from_gemv = true;  // r = W_o a + x, else r = a + x
  bool normed_is_output = false;
  bool norm_of_other = false;      // the FFN's input is the norm of x, not of r
};

// r = W_o a + x; n = rms_norm(r); y = r + W_d silu(W_g n) * (W_u n).
Graph ffn_block(const Block& b) {
  GraphBuilder g;
  TensorId a = g.state("a", GgmlType::F32, {64});
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId o = b.residual_from_gemv ? g.apply(OpKind::matmul, "o", {64}, {a, g.constant("wo", GgmlType::Q8_0, {64, 64})})
                                    : a;
  TensorId r = g.apply_like(OpKind::add, "r", {o, x});
  TensorId n = g.apply_like(OpKind::rms_norm, "n", {b.norm_of_other ? x : r, g.constant("nw", GgmlType::F32, {64})},
                            {{"eps", 1e-6}});
  TensorId gate = g.apply(OpKind::matmul, "gate", {128}, {n, g.constant("wg", GgmlType::Q8_0, {128, 64})});
  TensorId up = g.apply(OpKind::matmul, "up", {128}, {n, g.constant("wu", GgmlType::Q8_0, {128, 64})});
  TensorId act = g.apply_like(OpKind::swiglu, "act", {gate, up});
  TensorId down = g.apply(OpKind::matmul, "down", {64}, {act, g.constant("wd", GgmlType::Q8_0, {64, 128})});
  g.output(g.apply_like(OpKind::add, "y", {down, r}));
  if (b.normed_is_output) g.output(n);
  return g.finish();
}

Knobs eight_sms() {
  Knobs k = test::rule_knobs("two-pass-int8");
  k.chip.sms = 8;
  return k;
}

const std::vector<std::string> kBefore = {"gemv_norm_epilogue", "gemv_parts", "ffn_fused"};

TEST_CASE("ffn_norm takes the norm into the ffn launch", "[rules]") {
  auto run = test::run_rule(ffn_block({}), "ffn_norm", kBefore, eight_sms());
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "gemv [gemv_norm_epilogue] {\n"
        "  #0 matmul o = a, wo\n"
        "  #1 add r = o, x\n"
        "}\n"
        "ffn [gemv_parts, gemv_norm_epilogue, ffn_fused, ffn_norm] {\n"
        "  #2 rms_norm n = r, nw eps=1e-06\n"
        "  #3 matmul gate = n, wg\n"
        "  #4 matmul up = n, wu\n"
        "  #5 swiglu act = gate, up\n"
        "  #6 matmul down = act, wd\n"
        "  #7 add y = down, r\n"
        "}\n");
}

TEST_CASE("ffn_norm declines a normed vector read elsewhere and a norm of another vector", "[rules]") {
  Block output;
  output.normed_is_output = true;
  CHECK(test::run_rule(ffn_block(output), "ffn_norm", kBefore, eight_sms())->reason() ==
        "the normed vector n is also read by the graph outputs");
  Block other;
  other.norm_of_other = true;
  CHECK(test::run_rule(ffn_block(other), "ffn_norm", kBefore, eight_sms())->reason() ==
        "the norm's input x is not the FFN block's residual");
}

TEST_CASE("ffn_norm declines a residual no GEMV launch writes", "[rules]") {
  // The residual comes from an add launch: no GEMV stores it twice.
  Block plain;
  plain.residual_from_gemv = false;
  CHECK(test::run_rule(ffn_block(plain), "ffn_norm", kBefore, eight_sms())->reason() ==
        "the residual r is not written by a GEMV launch (its second store is the norm's input)");
}

TEST_CASE("ffn_norm needs the fused FFN launch", "[rules]") {
  // Without ffn_fused there is no ffn node: no site.
  auto run = test::run_rule(ffn_block({}), "ffn_norm", {"gemv_norm_epilogue", "gemv_parts"}, eight_sms());
  CHECK(run->matched() == 0);
}

}  // namespace
}  // namespace lanec
