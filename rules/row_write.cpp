// row_write: K and V cache writes of one position -> stored by the RoPE
// launch that makes the K row, else one kv_write launch (math in rules/row_write.h).
#include "rules/row_write.h"

namespace lanec {
namespace {

using namespace rule_helpers;

// The rope op of node n whose output is `row`, or nullptr.
const Op* rope_making(const FusedGraph& g, const FusedNode& n, TensorId row) {
  for (size_t i : n.ops) {
    const Op& op = g.op(i);
    if (op.kind == OpKind::rope && op.outputs.front() == row) return &op;
  }
  return nullptr;
}

bool has_cache_write(const FusedGraph& g, const FusedNode& n) {
  for (size_t i : n.ops)
    if (g.op(i).kind == OpKind::kv_write) return true;
  return false;
}

// The rope node that can also store the rows of the K write `k` and V write
// `v`, or nullopt (then the writes become a kv_write launch).
std::optional<int> joinable_rope(const FusedGraph& g, int k, int v) {
  const Op& kw = g.only_op(g.node(k));
  const Op& vw = g.only_op(g.node(v));
  std::optional<int> maker = g.producer(kw.inputs[0]);
  if (!maker) return std::nullopt;
  const FusedNode& r = g.node(*maker);
  if (r.kind != NodeKind::rope && r.kind != NodeKind::single) return std::nullopt;
  const Op* rope = rope_making(g, r, kw.inputs[0]);
  if (!rope || has_cache_write(g, r) || rope->inputs[1] != kw.inputs[1] || vw.inputs[1] != kw.inputs[1])
    return std::nullopt;
  // One launch has one head size: the caches' rows must be the rope's heads.
  const Graph& gr = g.graph();
  const Tensor& kc = gr.tensor(kw.outputs[0]);
  const Tensor& vc = gr.tensor(vw.outputs[0]);
  const Tensor& heads = gr.tensor(rope->outputs[0]);
  if (kc.shape.size() != 3 || kc.shape != vc.shape || heads.shape.size() != 2 ||
      kc.shape[1] != heads.shape[0] || kc.shape[2] != heads.shape[1] ||
      gr.tensor(vw.inputs[0]).numel() != heads.numel())
    return std::nullopt;
  if (g.merge_blocker({*maker, k, v})) return std::nullopt;
  return maker;
}

class RowWriteRule : public FusionRule {
 public:
  const char* name() const override { return "row_write"; }
  const char* intent() const override {
    return "k_cache[pos] = k and v_cache[pos] = v, stored by the RoPE launch that makes k (else one kv_write launch)";
  }

  // Pattern: an attention whose K and V caches are written by two single
  // kv_write nodes; with the rope node making K in front when it can take
  // the writes (extra[0] = 1).
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const Op* attn : lone_attentions(g)) {
      std::optional<int> k = g.producer(attn->inputs[1]);
      std::optional<int> v = g.producer(attn->inputs[2]);
      if (!k || !v || *k == *v) continue;
      if (!single_op(g, g.node(*k), OpKind::kv_write) || !single_op(g, g.node(*v), OpKind::kv_write)) continue;
      if (std::optional<int> rope = joinable_rope(g, *k, *v))
        sites.push_back({{*rope, *k, *v}, {1}});
      else
        sites.push_back({{*k, *v}, {0}});
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const size_t first_write = joined(site) ? 1 : 0;
    const Op& k = g.only_op(g.node(site.nodes[first_write]));
    const Op& v = g.only_op(g.node(site.nodes[first_write + 1]));
    const Graph& gr = g.graph();
    if (k.inputs[1] != v.inputs[1])
      return "K and V are written at different positions (" + gr.tensor(k.inputs[1]).name + ", " +
             gr.tensor(v.inputs[1]).name + ")";
    if (gr.tensor(k.inputs[0]).shape != gr.tensor(v.inputs[0]).shape)
      return "K rows " + shape_to_string(gr.tensor(k.inputs[0]).shape) + " and V rows " +
             shape_to_string(gr.tensor(v.inputs[0]).shape) + " differ in shape";
    if (gr.tensor(k.outputs[0]).shape != gr.tensor(v.outputs[0]).shape)
      return "the K and V caches differ in shape";
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, joined(site) ? NodeKind::rope : NodeKind::kv_write, name());
  }

 private:
  static bool joined(const RuleMatch& site) { return !site.extra.empty() && site.extra[0] == 1; }
};

}  // namespace

std::unique_ptr<FusionRule> make_row_write_rule() { return std::make_unique<RowWriteRule>(); }

}  // namespace lanec
