// add_norm: residual add + RMS norm -> one rms_norm launch (math in rules/add_norm.h).
#include "rules/add_norm.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class AddNormRule : public FusionRule {
 public:
  const char* name() const override { return "add_norm"; }
  const char* intent() const override { return "h = a + b; y = rms_norm(h) * w in one norm launch"; }

  // Pattern: a single rms_norm whose input is written by a single add.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    return chain_sites(g, OpKind::add, OpKind::rms_norm);
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Op& add = g.only_op(g.node(site.nodes[0]));
    const Tensor& a = g.graph().tensor(add.inputs[0]);
    const Tensor& b = g.graph().tensor(add.inputs[1]);
    if (a.shape != b.shape)
      return "the add broadcasts " + b.name + " " + shape_to_string(b.shape) + " over " + a.name +
             " " + shape_to_string(a.shape) + "; the fused norm adds two vectors of one length";
    for (const Tensor* t : {&a, &b})
      if (t->role == Role::constant)
        return "the addend " + t->name + " is a constant (a bias), not a residual stream";
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::add_norm, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_add_norm_rule() { return std::make_unique<AddNormRule>(); }

}  // namespace lanec
