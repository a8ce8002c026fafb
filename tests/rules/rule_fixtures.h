// Shared pieces of the rule tests: run one rule (after optional others) on a
// small graph and read back what it did.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/graph/builder.h"
#include "lib/knobs/knobs.h"
#include "lib/plan/fused_graph.h"
#include "lib/plan/rewrite.h"
#include "lib/plan/rule_tally.h"
#include "rules/gemv_query.h"

namespace lanec::test {

// A q8_0 GEMV of rows x k with int8 activations on an H200's 132 SMs, as
// the launch-stage GEMV rules see it.
inline GemvQuery h200_q8_gemv(int64_t rows, int64_t k) {
  GemvQuery q;
  q.sms = 132;
  q.format = GgmlType::Q8_0;
  q.int8_activations = true;
  q.rows = rows;
  q.k = k;
  return q;
}

struct RuleRun {
  Graph graph;
  std::unique_ptr<FusedGraph> fused;
  RuleTally tally;
  int fired = 0;
  std::string rule;

  std::string text() const { return print_fused_graph(*fused); }
  // reason -> sites for the rule under test.
  std::map<std::string, int> declined() const {
    for (const RuleCount& c : tally.counts({}))
      if (c.rule == rule) return c.declined;
    return {};
  }
  int matched() const {
    for (const RuleCount& c : tally.counts({}))
      if (c.rule == rule) return c.matched;
    return 0;
  }
  // The single decline reason (empty when there is not exactly one).
  std::string reason() const {
    auto d = declined();
    return d.size() == 1 ? d.begin()->first : std::string();
  }
};

inline Knobs rule_knobs(const std::string& activations = "dequant") {
  return parse_knobs(
      "chip: { name: test, arch: sm_90, sms: 132, smem_kib_per_block: 227 }\n"
      "cache_precision: f32\nrecurrent_state: f32\nactivations: " + activations + "\n",
      "rule-test-knobs");
}

inline std::unique_ptr<RuleRun> run_rule(Graph graph, const std::string& rule,
                                         const std::vector<std::string>& first = {},
                                         const Knobs& knobs = rule_knobs()) {
  auto run = std::make_unique<RuleRun>();
  run->graph = std::move(graph);
  run->rule = rule;
  run->fused = std::make_unique<FusedGraph>(run->graph);
  RuleTally before;
  for (const std::string& r : first) apply_rule(*run->fused, r, knobs, before);
  run->fired = apply_rule(*run->fused, rule, knobs, run->tally);
  verify_fused_graph(*run->fused, rule);
  return run;
}

}  // namespace lanec::test

namespace lanec::test {

// One attention block: q, k, v projections of x (v of `v_input` when set),
// optional per-head norms, RoPE of q and k, the cache writes and attention.
struct AttnBlock {
  int64_t n_head = 4, n_kv = 2, hd = 32, v_dim = 32, n_ctx = 256;
  bool head_norms = false;
  bool separate_v_input = false;
  double k_freq_base = 10000.0;
  bool rope_k = true;          // false: the K cache takes k as it is (no rope makes the K row)
};

inline Graph attention_graph(const AttnBlock& a) {
  GraphBuilder g;
  TensorId pos = g.param("pos", GgmlType::I32, {1});
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId x2 = a.separate_v_input ? g.state("x2", GgmlType::F32, {64}) : x;
  TensorId q = g.apply(OpKind::matmul, "q_l00", {a.n_head, a.hd},
                       {x, g.constant("wq", GgmlType::Q8_0, {a.n_head * a.hd, 64})});
  TensorId k = g.apply(OpKind::matmul, "k_l00", {a.n_kv, a.hd},
                       {x, g.constant("wk", GgmlType::Q8_0, {a.n_kv * a.hd, 64})});
  TensorId v = g.apply(OpKind::matmul, "v_l00", {a.n_kv, a.v_dim},
                       {x2, g.constant("wv", GgmlType::Q8_0, {a.n_kv * a.v_dim, 64})});
  if (a.head_norms) {
    q = g.apply_like(OpKind::head_rms_norm, "q_norm_l00", {q, g.constant("q_norm", GgmlType::F32, {a.hd})},
                     {{"eps", 1e-6}});
    k = g.apply_like(OpKind::head_rms_norm, "k_norm_l00", {k, g.constant("k_norm", GgmlType::F32, {a.hd})},
                     {{"eps", 1e-6}});
  }
  Attrs rope{{"mode", std::string("neox")}, {"n_rot", a.hd}, {"freq_base", 10000.0}};
  Attrs krope = rope;
  krope["freq_base"] = a.k_freq_base;
  TensorId qr = g.apply_like(OpKind::rope, "q_rope_l00", {q, pos}, rope);
  TensorId kr = a.rope_k ? g.apply_like(OpKind::rope, "k_rope_l00", {k, pos}, krope) : k;
  TensorId kc = g.state("cache_k_l00", GgmlType::F32, {a.n_ctx, a.n_kv, a.hd});
  TensorId vc = g.state("cache_v_l00", GgmlType::F32, {a.n_ctx, a.n_kv, a.v_dim});
  g.op(OpKind::kv_write, {kr, pos}, {kc});
  g.op(OpKind::kv_write, {v, pos}, {vc});
  TensorId out = g.apply(OpKind::attention, "attn_l00", {a.n_head, a.v_dim}, {qr, kc, vc, pos},
                         {{"scale", 0.125}});
  g.output(out);
  return g.finish();
}

}  // namespace lanec::test
