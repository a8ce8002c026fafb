// qkv_head_epilogue: Q, K and V results as parts of one qkv buffer, read in
// place by the head epilogue (math in rules/qkv_head_epilogue.h).
#include "rules/qkv_head_epilogue.h"

#include <cctype>

namespace lanec {
namespace {

using namespace rule_helpers;

// Walks back from t through the per-head epilogue (rope, head norm, reshape,
// a constant bias add) to the tensor a GEMV part delivers.
TensorId epilogue_source(const FusedGraph& g, TensorId t) {
  const Graph& gr = g.graph();
  for (int depth = 0; depth < 8; ++depth) {
    std::optional<int> p = g.producer(t);
    if (!p) return t;
    const FusedNode& n = g.node(*p);
    const Op* op = nullptr;
    for (size_t i : n.ops)
      for (TensorId out : g.op(i).outputs)
        if (out == t) op = &g.op(i);
    if (!op) return t;
    bool through = op->kind == OpKind::rope || op->kind == OpKind::head_rms_norm ||
                   op->kind == OpKind::reshape;
    bool bias = op->kind == OpKind::add && gr.tensor(op->inputs[1]).role == Role::constant &&
                n.kind == NodeKind::single;
    if (!through && !bias) return t;
    t = op->inputs[0];
  }
  return t;
}

// The GEMV node delivering t as one of its part results, if any.
std::optional<int> gemv_part_node(const FusedGraph& g, TensorId t) {
  std::optional<int> p = g.producer(t);
  if (!p || !is_plain_gemv(g, g.node(*p))) return std::nullopt;
  for (const Op* mm : matmuls_of(g, g.node(*p)))
    if (gemv_part_result(g, g.node(*p), *mm) == t) return p;
  return std::nullopt;
}

std::string pack_name(const std::string& attn_out) {
  size_t at = attn_out.rfind("_l");
  if (at != std::string::npos && at + 2 < attn_out.size()) {
    bool digits = true;
    for (size_t i = at + 2; i < attn_out.size(); ++i)
      digits = digits && std::isdigit(static_cast<unsigned char>(attn_out[i]));
    if (digits) return "qkv" + attn_out.substr(at);
  }
  return "qkv_" + attn_out;
}

class QkvHeadEpilogueRule : public FusionRule {
 public:
  const char* name() const override { return "qkv_head_epilogue"; }
  const char* intent() const override { return "Q, K, V written as parts of one qkv buffer, read in place"; }

  // Pattern: per attention, the GEMV nodes delivering its Q, K and V.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const Op* attn : lone_attentions(g)) {
      const Op* kw = cache_writer(g, attn->inputs[1]);
      const Op* vw = cache_writer(g, attn->inputs[2]);
      if (!kw || !vw) continue;
      std::vector<TensorId> sources = {epilogue_source(g, attn->inputs[0]),
                                       epilogue_source(g, kw->inputs[0]),
                                       epilogue_source(g, vw->inputs[0])};
      RuleMatch site;
      bool all = true;
      for (TensorId s : sources) {
        std::optional<int> node = gemv_part_node(g, s);
        all = all && node && g.node(*node).pack.empty();
        if (node) site.nodes.push_back(*node);
        site.extra.push_back(static_cast<int64_t>(s));
      }
      if (all) sites.push_back(site);
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Graph& gr = g.graph();
    TensorId x = matmuls_of(g, g.node(site.nodes[0])).front()->inputs[0];
    for (int id : site.nodes) {
      TensorId other = matmuls_of(g, g.node(id)).front()->inputs[0];
      if (other != x)
        return "Q, K and V read different inputs (" + gr.tensor(x).name + ", " +
               gr.tensor(other).name + ")";
    }
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    // The attention's output names the layer: attn_l03 -> qkv_l03.
    const Op* attn = nullptr;
    const Graph& gr = g.graph();
    TensorId q = static_cast<TensorId>(site.extra[0]);
    for (const Op& op : gr.ops())
      if (op.kind == OpKind::attention && epilogue_source(g, op.inputs[0]) == q) attn = &op;
    std::string pack = pack_name(attn ? gr.tensor(attn->outputs.front()).name : gr.tensor(q).name);
    for (int id : site.nodes) {
      FusedNode& n = g.node_mut(id);
      n.pack = pack;
      bool has = false;
      for (const std::string& r : n.rules) has = has || r == name();
      if (!has) n.rules.push_back(name());
    }
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_qkv_head_epilogue_rule() {
  return std::make_unique<QkvHeadEpilogueRule>();
}

}  // namespace lanec
