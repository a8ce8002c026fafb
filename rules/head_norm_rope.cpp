// head_norm_rope: per-head RMS norm + RoPE -> one rope launch (math in rules/head_norm_rope.h).
#include "rules/head_norm_rope.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class HeadNormRopeRule : public FusionRule {
 public:
  const char* name() const override { return "head_norm_rope"; }
  const char* intent() const override { return "x_h = rms_norm(x_h) * w, then RoPE, one warp a head"; }

  // Pattern: a single rope whose input is written by a single head_rms_norm.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    return chain_sites(g, OpKind::head_rms_norm, OpKind::rope);
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Op& norm = g.only_op(g.node(site.nodes[0]));
    TensorId normed = norm.outputs.front();
    std::string others = other_readers(g, normed, site.nodes[1]);
    if (!others.empty() || g.is_graph_output(normed))
      return "the normed heads " + g.graph().tensor(normed).name + " are also read by " +
             (others.empty() ? std::string("the graph outputs") : others) +
             "; the fused launch rotates them in place";
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::rope, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_head_norm_rope_rule() { return std::make_unique<HeadNormRopeRule>(); }

}  // namespace lanec
