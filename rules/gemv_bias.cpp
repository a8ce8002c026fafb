// gemv_bias: matmul + constant bias add -> GEMV bias epilogue (math in rules/gemv_bias.h).
#include "rules/gemv_bias.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class GemvBiasRule : public FusionRule {
 public:
  const char* name() const override { return "gemv_bias"; }
  const char* intent() const override { return "y = W x + b in the GEMV epilogue"; }
  std::vector<RuleMatch> match(const FusedGraph& g) const override { return epilogue_sites(g, true); }
  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    return epilogue_guard(g, site, "bias");
  }
  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::gemv, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_gemv_bias_rule() { return std::make_unique<GemvBiasRule>(); }

}  // namespace lanec
