// head_norm_rope: fires on head_rms_norm -> rope; declines when the normed
// heads are read elsewhere (the launch rotates them in place).
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph norm_rope(bool normed_is_output) {
  GraphBuilder g;
  TensorId pos = g.param("pos", GgmlType::I32, {1});
  TensorId q = g.state("q", GgmlType::F32, {4, 32});
  TensorId n = g.apply_like(OpKind::head_rms_norm, "n", {q, g.constant("w", GgmlType::F32, {32})},
                            {{"eps", 1e-6}});
  TensorId r = g.apply_like(OpKind::rope, "r", {n, pos},
                            {{"mode", std::string("neox")}, {"n_rot", int64_t{32}}, {"freq_base", 1e6}});
  g.output(r);
  if (normed_is_output) g.output(n);
  return g.finish();
}

TEST_CASE("head_norm_rope puts the per-head norm into the rope launch", "[rules]") {
  auto run = test::run_rule(norm_rope(false), "head_norm_rope");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "rope [head_norm_rope] {\n"
        "  #0 head_rms_norm n = q, w eps=1e-06\n"
        "  #1 rope r = n, pos freq_base=1000000.0 mode=\"neox\" n_rot=32\n"
        "}\n");
}

TEST_CASE("head_norm_rope declines when the normed heads are read elsewhere", "[rules]") {
  auto run = test::run_rule(norm_rope(true), "head_norm_rope");
  CHECK(run->fired == 0);
  CHECK(run->reason() ==
        "the normed heads n are also read by the graph outputs; the fused launch rotates them in place");
}

}  // namespace
}  // namespace lanec
