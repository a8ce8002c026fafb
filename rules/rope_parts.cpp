// rope_parts: RoPE of Q and of K -> one rope launch with two parts
// (math in rules/rope_parts.h).
#include "rules/rope_parts.h"

namespace lanec {
namespace {

using namespace rule_helpers;

// The rope node producing t, looking through reshape views.
std::optional<int> rope_node_of(const FusedGraph& g, TensorId t) {
  for (int depth = 0; depth < 8; ++depth) {
    std::optional<int> p = g.producer(t);
    if (!p) return std::nullopt;
    const FusedNode& n = g.node(*p);
    if (const Op* r = single_op(g, n, OpKind::reshape)) {
      t = r->inputs[0];
      continue;
    }
    if (single_op(g, n, OpKind::rope)) return p;
    if (n.kind == NodeKind::rope) {
      int ropes = 0;
      for (size_t i : n.ops) ropes += g.op(i).kind == OpKind::rope;
      if (ropes == 1) return p;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

const Op& rope_op(const FusedGraph& g, const FusedNode& n) {
  for (size_t i : n.ops)
    if (g.op(i).kind == OpKind::rope) return g.op(i);
  return g.op(n.ops.front());
}

const Op* norm_op(const FusedGraph& g, const FusedNode& n) {
  for (size_t i : n.ops)
    if (g.op(i).kind == OpKind::head_rms_norm) return &g.op(i);
  return nullptr;
}

class RopePartsRule : public FusionRule {
 public:
  const char* name() const override { return "rope_parts"; }
  const char* intent() const override { return "RoPE of Q and of K in one launch (two parts)"; }

  // Pattern: per attention, the rope of its query and the rope of the keys
  // its K cache is written from.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const Op* attn : lone_attentions(g)) {
      const Op* kw = cache_writer(g, attn->inputs[1]);
      if (!kw) continue;
      std::optional<int> q = rope_node_of(g, attn->inputs[0]);
      std::optional<int> k = rope_node_of(g, kw->inputs[0]);
      if (q && k && *q != *k) sites.push_back({{*q, *k}, {}});
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Graph& gr = g.graph();
    const FusedNode& qn = g.node(site.nodes[0]);
    const FusedNode& kn = g.node(site.nodes[1]);
    const Op& q = rope_op(g, qn);
    const Op& k = rope_op(g, kn);
    if (q.inputs[1] != k.inputs[1]) return std::string("Q and K rotate at different positions");
    if (gr.tensor(q.inputs[0]).cols() != gr.tensor(k.inputs[0]).cols())
      return "Q and K head sizes differ (" + std::to_string(gr.tensor(q.inputs[0]).cols()) + ", " +
             std::to_string(gr.tensor(k.inputs[0]).cols()) + ")";
    if (q.attrs != k.attrs) return std::string("Q and K rotation attributes differ");
    if (q.inputs.size() != k.inputs.size() || (q.inputs.size() == 3 && q.inputs[2] != k.inputs[2]))
      return std::string("Q and K use different frequency factors");
    const Op* qnorm = norm_op(g, qn);
    const Op* knorm = norm_op(g, kn);
    if (qnorm && knorm && qnorm->get_float("eps") != knorm->get_float("eps"))
      return std::string("Q and K head norms differ in epsilon");
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::rope, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_rope_parts_rule() { return std::make_unique<RopePartsRule>(); }

}  // namespace lanec
