// early_trigger: a small launch (an RMS norm, a quantize or a rope) lets the
// next launch start before its own wait instead of after it
// (kernels/common.cuh pdl_trigger_early), so the GEMV after a norm or a
// quantize is resident and loading its first weight chunks while the launch
// before the norm still runs, not only once the norm has passed its wait.
//
// Math unchanged: every launch still waits for the one before it to
// complete before it touches what that launch writes; only where the next
// launch's blocks sit while they wait moves. A launch-stage rule over the
// final launch order: the planner asks choose_early_trigger per small
// launch, with its neighbours. Fires where the next launch reads before its
// wait nothing the launch before writes (what verify_schedule checks of
// every launch that may still run) and, for a norm or a quantize, where the
// launch before it is a GEMV whose warps leave at least an eighth of the
// SMs' warp slots free (room for the next GEMV's early blocks); a rope fires
// whatever launch comes before it. Below sm_90 there is no programmatic
// launch to trigger: it declines. Measured on an H100 (docs/performance.md,
// h100-2026-12-06c): Qwen3-0.6B (every GEMV at most 6,144 warps) +1.9 % a
// token with all three kinds, +1.05 % with norms and quantizes; Qwen3-1.7B
// (its GEMVs 8,192 warps or more) -2.4 % with its norms, -0.2 % with its
// quantize, +0.3 % with its ropes. At a 4,096-token context an early rope
// cost Qwen3-8B 1.8 % (the attention after it loads its cached rows during
// the Q/K/V GEMV), so the rope kernel triggers early only at positions below
// kRopeEarlyTriggerRows (kernels/rope.cuh), a condition of the run, not of
// the plan.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_early_trigger_rule();

// The launch before must leave this share of the SMs' warp slots free (as
// 1 / kEarlyTriggerFreeShare): 0.6B's GEMVs leave 27-52 %, 1.7B's 3 % or none.
constexpr int64_t kEarlyTriggerFreeShare = 8;

// One small launch as the rule sees it, with its neighbours in launch order.
struct EarlyTriggerQuery {
  std::string kind;               // launch kind name: rms_norm, quantize, swiglu or rope
  int arch_number = 90;           // the knob file's architecture (89 for sm_89)
  bool has_next = false;          // a launch follows it in the step
  std::optional<std::string> next_reads_early;  // what the next launch reads before its wait that the launch before writes
  bool prev_is_gemv = false;      // the launch before is a GEMV on the register kernel (not staged)
  std::string prev_name;
  int64_t prev_warps = 0;         // its grid's warps
  int64_t warp_slots = 0;         // sms x resident warps an SM
};

struct EarlyTriggerChoice {
  bool early = false;
  std::optional<std::string> declined;
};
EarlyTriggerChoice choose_early_trigger(const EarlyTriggerQuery& q);

// Whether a launch of this kind (and int8 output, for a SwiGLU) has a kernel
// that takes the early trigger: the launches the rule matches.
bool early_trigger_candidate(const std::string& kind, bool writes_int8);

}  // namespace lanec
