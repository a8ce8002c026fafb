// gemv_parts: GEMVs sharing one input -> one GEMV launch with parts
// (math in rules/gemv_parts.h).
#include "rules/gemv_parts.h"

#include <map>

namespace lanec {
namespace {

using namespace rule_helpers;

constexpr size_t kMaxParts = 4;  // kernels/gemv.cuh kGemvMaxParts

class GemvPartsRule : public FusionRule {
 public:
  const char* name() const override { return "gemv_parts"; }
  const char* intent() const override { return "y_p = W_p x for up to 4 parts in one GEMV launch"; }

  // Pattern: two or more plain GEMV nodes whose matmuls read the same input.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::map<TensorId, RuleMatch> by_input;
    std::vector<TensorId> order;
    for (const FusedNode& n : g.nodes()) {
      if (!is_plain_gemv(g, n)) continue;
      TensorId x = matmuls_of(g, n).front()->inputs[0];
      if (!by_input.count(x)) order.push_back(x);
      by_input[x].nodes.push_back(n.id);
    }
    std::vector<RuleMatch> sites;
    for (TensorId x : order)
      if (by_input[x].nodes.size() >= 2) sites.push_back(by_input[x]);
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Graph& gr = g.graph();
    size_t parts = 0;
    GgmlType format = gr.tensor(matmuls_of(g, g.node(site.nodes[0])).front()->inputs[1]).type;
    for (int id : site.nodes) {
      for (const Op* mm : matmuls_of(g, g.node(id))) {
        ++parts;
        GgmlType f = gr.tensor(mm->inputs[1]).type;
        if (f != format)
          return std::string("weight formats differ (") + elem_type_name(format) + ", " +
                 elem_type_name(f) + "); one launch streams one format";
      }
    }
    if (parts > kMaxParts)
      return std::to_string(parts) + " GEMVs read the input; one launch takes at most " +
             std::to_string(kMaxParts) + " parts";
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::gemv, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_gemv_parts_rule() { return std::make_unique<GemvPartsRule>(); }

}  // namespace lanec
