// gemv_norm_epilogue: matmul + residual add -> GEMV residual epilogue
// (math in rules/gemv_norm_epilogue.h).
#include "rules/gemv_norm_epilogue.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class GemvNormEpilogueRule : public FusionRule {
 public:
  const char* name() const override { return "gemv_norm_epilogue"; }
  const char* intent() const override { return "h = W x + r (residual) in the GEMV epilogue"; }
  std::vector<RuleMatch> match(const FusedGraph& g) const override { return epilogue_sites(g, false); }
  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    return epilogue_guard(g, site, "residual");
  }
  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::gemv, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_gemv_norm_epilogue_rule() {
  return std::make_unique<GemvNormEpilogueRule>();
}

}  // namespace lanec
