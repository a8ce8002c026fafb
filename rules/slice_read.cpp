// slice_read: a contiguous slice becomes a view (math in rules/slice_read.h).
#include "rules/slice_read.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class SliceReadRule : public FusionRule {
 public:
  const char* name() const override { return "slice_read"; }
  const char* intent() const override { return "y = x[offset : offset + width] read in place as a view"; }

  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes())
      if (single_op(g, n, OpKind::slice)) sites.push_back({{n.id}, {}});
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Op& op = g.only_op(g.node(site.nodes[0]));
    const Tensor& x = g.graph().tensor(op.inputs[0]);
    int64_t leading = x.numel() / x.cols();
    if (leading > 1)
      return "slicing the last dim of " + x.name + " " + shape_to_string(x.shape) +
             " is strided (" + std::to_string(leading) + " rows); a view reads contiguous ranges";
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::view, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_slice_read_rule() { return std::make_unique<SliceReadRule>(); }

}  // namespace lanec
