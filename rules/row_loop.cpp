// row_loop: tall GEMVs of short rows as a one-wave grid of looping warps
// (conditions in rules/row_loop.h).
#include "rules/row_loop.h"

#include "lib/plan/size.h"

namespace lanec {

RowLoopChoice choose_row_loop(const RowLoopQuery& q) {
  auto decline = [](std::string why) { return RowLoopChoice{false, 0, std::move(why)}; };
  if (q.format != GgmlType::Q8_0 || !q.int8_activations)
    return decline("measured only for q8_0 weights with int8 activations");
  if (q.staged) return decline("the staged kernel runs it");
  if (q.swiglu || q.n_parts != 1) return decline("the row loop takes one matrix, no SwiGLU epilogue");
  if (q.split_k != 1 || q.rows_per_warp != 1)
    return decline("its rows are split over " + std::to_string(q.split_k) + " warps or " +
                   std::to_string(q.rows_per_warp) + " a warp; the row loop takes whole rows one at a time");
  const int64_t chunks = gemv_chunks_a_lane(q.format, q.k);
  if (chunks > kRowLoopMaxChunksPerLane)
    return decline(std::to_string(chunks) + " chunks a lane: at more than " +
                   std::to_string(kRowLoopMaxChunksPerLane) + " two rows' chunks in registers cost warps");
  const int64_t wave = static_cast<int64_t>(q.sms) * q.warps_per_sm;
  if (q.rows < kRowLoopMinWaves * wave)
    return decline(std::to_string(q.rows) + " rows: fewer than " + std::to_string(kRowLoopMinWaves) +
                   " waves of the " + std::to_string(wave) + " warps the SMs hold");
  return {true, static_cast<int>(chunks), std::nullopt};
}

// The planner calls choose_row_loop per GEMV launch.
std::unique_ptr<FusionRule> make_row_loop_rule() {
  return std::make_unique<LaunchStageRule>("row_loop",
                                           "a tall GEMV of short rows as one wave of warps each looping over rows");
}

}  // namespace lanec
