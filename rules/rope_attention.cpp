// rope_attention: the RoPE launch before an attention -> the attention
// launch's prologue (math in rules/rope_attention.h).
#include "rules/rope_attention.h"

#include "kernels/limits.h"

namespace lanec {
namespace {

using namespace rule_helpers;

// The ops of kind `kind` in node n.
std::vector<const Op*> ops_of(const FusedGraph& g, const FusedNode& n, OpKind kind) {
  std::vector<const Op*> out;
  for (size_t i : n.ops)
    if (g.op(i).kind == kind) out.push_back(&g.op(i));
  return out;
}

// The op of node n writing tensor t, or nullptr.
const Op* writer_in(const FusedGraph& g, const FusedNode& n, TensorId t) {
  for (size_t i : n.ops)
    if (g.op(i).outputs.front() == t) return &g.op(i);
  return nullptr;
}

class RopeAttentionRule : public FusionRule {
 public:
  const char* name() const override { return "rope_attention"; }
  const char* intent() const override {
    return "the query's and new key's head norm and RoPE and the K/V cache rows, done by the attention launch";
  }

  // Pattern: an attention whose query is rotated by a rope node.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes()) {
      const Op* attn = single_op(g, n, OpKind::attention);
      if (!attn) continue;
      std::optional<int> maker = g.producer(attn->inputs[0]);
      if (!maker) continue;
      const FusedNode& r = g.node(*maker);
      if (r.kind == NodeKind::rope || single_op(g, r, OpKind::rope)) sites.push_back({{*maker, n.id}, {}});
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Graph& gr = g.graph();
    const FusedNode& r = g.node(site.nodes[0]);
    const Op& attn = g.only_op(g.node(site.nodes[1]));
    const Op* q_rope = writer_in(g, r, attn.inputs[0]);
    const Op* k_write = writer_in(g, r, attn.inputs[1]);
    const Op* v_write = writer_in(g, r, attn.inputs[2]);
    const std::vector<const Op*> ropes = ops_of(g, r, OpKind::rope);
    if (!q_rope || q_rope->kind != OpKind::rope || !k_write || !v_write || ropes.size() != 2)
      return std::string("the rope launch does not also rotate the key and store this attention's K and V rows "
                         "(rope_parts or row_write held or declined)");
    const Op* k_rope = ropes[0] == q_rope ? ropes[1] : ropes[0];
    if (k_write->inputs[0] != k_rope->outputs[0])
      return "the K cache takes " + gr.tensor(k_write->inputs[0]).name + ", not the rotated key";
    if (q_rope->inputs[1] != attn.inputs[3] || k_write->inputs[1] != attn.inputs[3])
      return std::string("the rows are rotated or stored at another position than the attention's");
    for (TensorId rotated : {q_rope->outputs[0], k_rope->outputs[0]}) {
      std::string others = other_readers(g, rotated, site.nodes[1]);
      if (!others.empty() || g.is_graph_output(rotated))
        return gr.tensor(rotated).name + " is also read by " + (others.empty() ? "the graph's outputs" : others);
    }
    if (q_rope->inputs.size() == 3) return std::string("the prologue has no per-frequency factors");
    const int64_t head_dim = gr.tensor(q_rope->inputs[0]).cols();
    const int64_t rope_dims = q_rope->get_int("n_rot");
    const bool neox = q_rope->get_string("mode") == "neox";
    if (!kernels::attention_rope_fits(neox, static_cast<int>(head_dim), static_cast<int>(rope_dims)))
      return "a lane cannot rotate its run of a " + std::to_string(head_dim) + "-element head by " +
             std::to_string(rope_dims) + " dims (" + (neox ? "neox" : "norm") + " pairs)";
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::attention, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_rope_attention_rule() { return std::make_unique<RopeAttentionRule>(); }

}  // namespace lanec
