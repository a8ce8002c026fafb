// early_trigger: a small launch lets the next one start before its wait
// (conditions in rules/early_trigger.h).
#include "rules/early_trigger.h"

namespace lanec {

bool early_trigger_candidate(const std::string& kind, bool writes_int8) {
  return kind == "rms_norm" || kind == "quantize" || kind == "rope" || (kind == "swiglu" && writes_int8);
}

EarlyTriggerChoice choose_early_trigger(const EarlyTriggerQuery& q) {
  auto decline = [](std::string why) { return EarlyTriggerChoice{false, std::move(why)}; };
  if (q.arch_number < 90)
    return decline("sm_" + std::to_string(q.arch_number) + " has no programmatic dependent launch to trigger");
  if (!q.has_next) return decline("the last launch of the step: nothing follows it");
  if (q.next_reads_early)
    return decline("the next launch reads before its wait what a launch still running writes (" +
                   *q.next_reads_early + ")");
  if (q.kind == "rope") {
    // The GEMV before it streams enough that the attention's early cache
    // loads slow it at long positions (rules/early_trigger.h).
    const bool long_gemv = !q.prev_is_gemv || q.sms <= 0 ||
                           q.prev_weight_bytes > kRopeLongTriggerMaxBytesPerSm * q.sms;
    return {true, std::nullopt, long_gemv ? kRopeShortTriggerRows : 0};
  }
  if (!q.prev_is_gemv) return decline("the launch before is not a register-kernel GEMV (measured between GEMVs only)");
  // A quantize after a GEMV of several waves: the next GEMV's blocks take the
  // slots its last wave frees (rules/early_trigger.h).
  if (q.kind != "rms_norm" && q.warp_slots > 0 && q.prev_warps >= kEarlyTriggerQuantizeWaves * q.warp_slots)
    return {true, std::nullopt};
  if (q.prev_warps * kEarlyTriggerFreeShare > q.warp_slots * (kEarlyTriggerFreeShare - 1))
    return decline(q.prev_name + "'s " + std::to_string(q.prev_warps) + " warps leave less than 1/" +
                   std::to_string(kEarlyTriggerFreeShare) + " of the " + std::to_string(q.warp_slots) +
                   " warp slots free (measured slower: Qwen3-1.7B's norms)");
  return {true, std::nullopt};
}

// The planner calls choose_early_trigger per small launch over the final order.
std::unique_ptr<FusionRule> make_early_trigger_rule() {
  return std::make_unique<LaunchStageRule>("early_trigger",
                                           "a small launch lets the next one start before its wait");
}

}  // namespace lanec
