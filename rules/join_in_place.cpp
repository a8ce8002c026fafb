// join_in_place: a concat of vectors becomes one buffer its producers write in
// place (math in rules/join_in_place.h).
#include "rules/join_in_place.h"

#include <algorithm>

namespace lanec {
namespace {

using namespace rule_helpers;

class JoinInPlaceRule : public FusionRule {
 public:
  const char* name() const override { return "join_in_place"; }
  const char* intent() const override { return "y = [a | b | ...] with the parts written in place into y"; }

  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes())
      if (single_op(g, n, OpKind::concat)) sites.push_back({{n.id}, {}});
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Graph& gr = g.graph();
    const Op& op = g.only_op(g.node(site.nodes[0]));
    const Tensor& y = gr.tensor(op.outputs.front());
    if (y.numel() / y.cols() > 1)
      return "joining the last dim of " + y.name + " " + shape_to_string(y.shape) +
             " interleaves the parts; in-place parts must be contiguous";
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const Tensor& part = gr.tensor(op.inputs[i]);
      if (part.role != Role::activation)
        return "part " + part.name + " is a " + role_name(part.role) + ", not computed in this step";
      if (std::count(op.inputs.begin(), op.inputs.end(), op.inputs[i]) > 1)
        return "part " + part.name + " appears twice";
      std::optional<int> p = g.producer(op.inputs[i]);
      if (!p) return "part " + part.name + " has no producer";
      const FusedNode& maker = g.node(*p);
      bool view = maker.kind == NodeKind::view || maker.kind == NodeKind::join ||
                  maker.kind == NodeKind::rope || !maker.pack.empty() ||
                  single_op(g, maker, OpKind::reshape) || single_op(g, maker, OpKind::slice) ||
                  single_op(g, maker, OpKind::rope);
      if (view) return "part " + part.name + " is already planned as a view of another buffer";
      if (g.is_graph_output(op.inputs[i])) return "part " + part.name + " is a graph output";
    }
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::join, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_join_in_place_rule() { return std::make_unique<JoinInPlaceRule>(); }

}  // namespace lanec
