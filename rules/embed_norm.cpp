// embed_norm: gather + RMS norm of the row -> one embed launch (math in rules/embed_norm.h).
#include "rules/embed_norm.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class EmbedNormRule : public FusionRule {
 public:
  const char* name() const override { return "embed_norm"; }
  const char* intent() const override { return "y = rms_norm(table[token]) * w in the gather launch"; }

  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    return chain_sites(g, OpKind::embed_get_rows, OpKind::rms_norm);
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Op& gather = g.only_op(g.node(site.nodes[0]));
    TensorId row = gather.outputs.front();
    std::string others = other_readers(g, row, site.nodes[1]);
    if (!others.empty() || g.is_graph_output(row))
      return "the gathered row " + g.graph().tensor(row).name + " is also read by " +
             (others.empty() ? std::string("the graph outputs") : others) +
             "; the fused gather keeps only the normed row";
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::embed_norm, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_embed_norm_rule() { return std::make_unique<EmbedNormRule>(); }

}  // namespace lanec
