// rows_a_warp: GEMV rows per warp from the chip (math in rules/rows_a_warp.h).
#include "rules/rows_a_warp.h"

namespace lanec {
namespace {

class RowsAWarpRule : public FusionRule {
 public:
  const char* name() const override { return "rows_a_warp"; }
  const char* intent() const override { return "each GEMV warp computes 2 rows from one x chunk load"; }
  RuleStage stage() const override { return RuleStage::launches; }
  // A launch-stage rule: the planner calls choose_rows_a_warp per GEMV launch.
  std::vector<RuleMatch> match(const FusedGraph&) const override { return {}; }
  std::optional<std::string> guard(const FusedGraph&, const RuleMatch&,
                                   const RuleContext&) const override {
    return std::nullopt;
  }
  void rewrite(FusedGraph&, const RuleMatch&) const override {}
};

}  // namespace

RowsAWarpChoice choose_rows_a_warp(int64_t rows, GgmlType format, bool dequant, int sms) {
  if (format != GgmlType::Q8_0 || !dequant)
    return {1, std::string("measured fastest at 1 row a warp for ") + ggml_type_name(format) +
                   " weights with " + (dequant ? "f32" : "int8 (one- or two-word)") + " activations"};
  const int64_t wanted = static_cast<int64_t>(sms) * kGemvWarpsPerSm;
  if (rows / 2 >= wanted) return {2, std::nullopt};
  return {1, "too few rows: at 2 rows a warp fewer than " + std::to_string(kGemvWarpsPerSm) +
                 " warps would run on each of the " + std::to_string(sms) + " SMs"};
}

std::unique_ptr<FusionRule> make_rows_a_warp_rule() { return std::make_unique<RowsAWarpRule>(); }

}  // namespace lanec
