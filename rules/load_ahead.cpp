// load_ahead: a GEMV's second trip loaded with its first activations
// (conditions in rules/load_ahead.h).
#include "rules/load_ahead.h"

#include "kernels/limits.h"
#include "lib/plan/size.h"

namespace lanec {

LoadAheadChoice choose_load_ahead(const LoadAheadQuery& q) {
  auto decline = [](std::string why) { return LoadAheadChoice{false, std::move(why)}; };
  if (q.format != GgmlType::Q8_0 || !q.int8_activations || !q.two_word)
    return decline("measured only for q8_0 weights with two-word int8 activations");
  if (q.staged) return decline("the staged kernel runs it");
  if (q.row_loop) return decline("the row loop runs it");
  if (q.swiglu) return decline("the SwiGLU pair's two rows a warp: not measured");
  if (q.rows_per_warp != 1)
    return decline(std::to_string(q.rows_per_warp) + " rows a warp: measured no faster in the ahead form");
  const int64_t chunks = gemv_chunks_a_lane(q.format, q.k, q.split_k);
  if (chunks != kLoadAheadChunksPerLane)
    return decline(std::to_string(chunks) + (chunks == 1 ? " chunk" : " chunks") + " a lane at split " + std::to_string(q.split_k) + ", not " +
                   std::to_string(kLoadAheadChunksPerLane));
  const int64_t warps = q.rows * q.split_k;  // one row a warp
  const int64_t wave = static_cast<int64_t>(q.sms) * kernels::kGemvMaxWarps * kernels::kGemvAheadMinBlocks;
  if (warps > wave)
    return decline(std::to_string(warps) + " warps: more than the one wave of " + std::to_string(wave) +
                   " the kernel's register bound guarantees");
  return {true, std::nullopt};
}

// The planner calls choose_load_ahead per GEMV launch.
std::unique_ptr<FusionRule> make_load_ahead_rule() {
  return std::make_unique<LaunchStageRule>("load_ahead",
                                           "a GEMV lane's two chunks load together right after the wait");
}

}  // namespace lanec
