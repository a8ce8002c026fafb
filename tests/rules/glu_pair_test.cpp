// glu_pair: gate and up GEMVs + SwiGLU in one launch; declines differing
// formats or inputs and products read elsewhere.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

struct Ffn {
  GgmlType up_type = GgmlType::Q8_0;
  bool separate_up_input = false;
  bool gate_is_output = false;
  GgmlType down_type = GgmlType::F32;  // F32: no down projection, the SwiGLU is the output
};

Graph ffn(const Ffn& f) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId x2 = f.separate_up_input ? g.state("x2", GgmlType::F32, {64}) : x;
  TensorId gate = g.apply(OpKind::matmul, "gate", {128}, {x, g.constant("wg", GgmlType::Q8_0, {128, 64})});
  TensorId up = g.apply(OpKind::matmul, "up", {128}, {x2, g.constant("wu", f.up_type, {128, 64})});
  TensorId act = g.apply_like(OpKind::swiglu, "act", {gate, up});
  if (f.down_type == GgmlType::F32)
    g.output(act);
  else
    g.output(g.apply(OpKind::matmul, "down", {64}, {act, g.constant("wd", f.down_type, {64, 128})}));
  if (f.gate_is_output) g.output(gate);
  return g.finish();
}

TEST_CASE("glu_pair makes gate, up and SwiGLU one GEMV launch", "[rules]") {
  auto run = test::run_rule(ffn({}), "glu_pair");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "gemv [glu_pair] {\n"
        "  #0 matmul gate = x, wg\n"
        "  #1 matmul up = x, wu\n"
        "  #2 swiglu act = gate, up\n"
        "}\n");
}

TEST_CASE("glu_pair declines differing formats, inputs and shared products", "[rules]") {
  Ffn f16;
  f16.up_type = GgmlType::F16;
  CHECK(test::run_rule(ffn(f16), "glu_pair")->reason() == "gate and up weights differ in format (q8_0, f16)");
  Ffn inputs;
  inputs.separate_up_input = true;
  CHECK(test::run_rule(ffn(inputs), "glu_pair")->reason() == "gate reads x but up reads x2");
  Ffn shared;
  shared.gate_is_output = true;
  CHECK(test::run_rule(ffn(shared), "glu_pair")->reason() == "the gate gate is also read by the graph outputs");
}

TEST_CASE("glu_pair declines under int8 activations where a q8_0 GEMV reads the SwiGLU", "[rules]") {
  Ffn down;
  down.down_type = GgmlType::Q8_0;
  for (const char* numerics : {"int8", "two-pass-int8"}) {
    auto run = test::run_rule(ffn(down), "glu_pair", {}, test::rule_knobs(numerics));
    INFO(numerics);
    CHECK(run->fired == 0);
    CHECK(run->reason() ==
          "the SwiGLU output is quantized for an int8 GEMV: its quantize launch forms the SwiGLU, and "
          "gate and up stream one row a warp (measured faster)");
  }
  // Dequant numerics read the f32 SwiGLU, and an f16 down GEMV reads f32 too.
  CHECK(test::run_rule(ffn(down), "glu_pair")->fired == 1);
  Ffn f16_down;
  f16_down.down_type = GgmlType::F16;
  CHECK(test::run_rule(ffn(f16_down), "glu_pair", {}, test::rule_knobs("int8"))->fired == 1);
}

}  // namespace
}  // namespace lanec
