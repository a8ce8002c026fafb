// row_write: K and V cache writes of one position -> one kv_write launch
// (math in rules/row_write.h).
#include "rules/row_write.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class RowWriteRule : public FusionRule {
 public:
  const char* name() const override { return "row_write"; }
  const char* intent() const override { return "k_cache[pos] = k and v_cache[pos] = v in one launch"; }

  // Pattern: an attention whose K and V caches are written by two single
  // kv_write nodes.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes()) {
      const Op* attn = single_op(g, n, OpKind::attention);
      if (!attn) continue;
      std::optional<int> k = g.producer(attn->inputs[1]);
      std::optional<int> v = g.producer(attn->inputs[2]);
      if (!k || !v || *k == *v) continue;
      if (single_op(g, g.node(*k), OpKind::kv_write) && single_op(g, g.node(*v), OpKind::kv_write))
        sites.push_back({{*k, *v}, {}});
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Op& k = g.only_op(g.node(site.nodes[0]));
    const Op& v = g.only_op(g.node(site.nodes[1]));
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
    g.merge(site.nodes, NodeKind::kv_write, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_row_write_rule() { return std::make_unique<RowWriteRule>(); }

}  // namespace lanec
