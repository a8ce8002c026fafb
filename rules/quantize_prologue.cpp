// quantize_prologue: quantize launch -> staged prologue of the GEMV reading
// the int8 form (math in rules/quantize_prologue.h).
#include "rules/quantize_prologue.h"

#include "kernels/limits.h"

namespace lanec {
namespace {

class QuantizePrologueRule : public FusionRule {
 public:
  const char* name() const override { return "quantize_prologue"; }
  const char* intent() const override { return "the GEMV quantizes its f32 input in its prologue, no quantize launch"; }
  RuleStage stage() const override { return RuleStage::launches; }
  // A launch-stage rule: the size stage calls quantize_prologue_declines.
  std::vector<RuleMatch> match(const FusedGraph&) const override { return {}; }
  std::optional<std::string> guard(const FusedGraph&, const RuleMatch&,
                                   const RuleContext&) const override {
    return std::nullopt;
  }
  void rewrite(FusedGraph&, const RuleMatch&) const override {}
};

}  // namespace

std::optional<std::string> quantize_prologue_declines(int64_t k, bool two_words) {
  const long long bytes = kernels::gemv_stage_bytes(true, two_words, k);
  if (bytes <= kernels::kGemvMaxStageBytes) return std::nullopt;
  return "the staged input of " + std::to_string(k) + " elements takes " + std::to_string(bytes) +
         " bytes of shared memory, more than the " + std::to_string(kernels::kGemvMaxStageBytes) +
         " a GEMV block stages";
}

std::unique_ptr<FusionRule> make_quantize_prologue_rule() { return std::make_unique<QuantizePrologueRule>(); }

}  // namespace lanec
