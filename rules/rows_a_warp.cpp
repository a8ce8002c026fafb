// rows_a_warp: GEMV rows per warp from the chip (math in rules/rows_a_warp.h).
#include "rules/rows_a_warp.h"

namespace lanec {

RowsAWarpChoice choose_rows_a_warp(int64_t rows, GgmlType format, bool dequant, int sms) {
  if (format != GgmlType::Q8_0 || !dequant)
    return {1, std::string("measured fastest at 1 row a warp for ") + ggml_type_name(format) +
                   " weights with " + (dequant ? "f32" : "int8 (one- or two-word)") + " activations"};
  const int64_t wanted = static_cast<int64_t>(sms) * kGemvWarpsPerSm;
  if (rows / 2 >= wanted) return {2, std::nullopt};
  return {1, "too few rows: at 2 rows a warp fewer than " + std::to_string(kGemvWarpsPerSm) +
                 " warps would run on each of the " + std::to_string(sms) + " SMs"};
}

// The planner calls choose_rows_a_warp per GEMV launch.
std::unique_ptr<FusionRule> make_rows_a_warp_rule() {
  return std::make_unique<LaunchStageRule>("rows_a_warp", "each GEMV warp computes 2 rows from one x chunk load");
}

}  // namespace lanec
