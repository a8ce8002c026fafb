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
// quantize, +0.3 % with its ropes. A quantize after a GEMV of several waves
// fires too (kEarlyTriggerQuantizeWaves).
//
// A rope's trigger has a second condition, of the run: the attention it
// lets in loads its cached rows before its wait, during the Q/K/V GEMV
// before the rope, and at long positions those loads compete with that
// GEMV's weight stream. Where the GEMV streams more than
// kRopeLongTriggerMaxBytesPerSm a SM the rope triggers early only at
// positions below kRopeShortTriggerRows (RopeLaunch::early_trigger_rows,
// checked by the kernel), at every position otherwise. Measured on an H100
// at 1,024 and 4,096 positions (h100-2026-12-07): an early rope at every
// position +3.7 % and +2.9 % a token on Qwen3-0.6B (its Q/K/V GEMV 34 KB a
// SM), +2.3 % and +1.6 % on 1.7B (67 KB), -0.6 % and -0.6 % on 4B (126 KB),
// -1.7 % and -1.7 % on 8B (202 KB).
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

// A quantize (not a norm) fires after a GEMV of at least this many waves of
// the warp slots, whatever it leaves free: the GEMV after the quantize then
// takes the slots that the GEMV before frees in its last wave, instead of
// starting only once the quantize has passed its wait. Qwen3-8B's gate/up
// GEMV (24,576 warps, 2.9 waves on the H200's 8,448 slots) gained; 1.7B's
// (12,288, 1.45 waves) lost 0.2 %, and 8B's norms, after GEMVs of one wave,
// lost 0.4 % (docs/performance.md, h100-2026-12-07g).
constexpr int64_t kEarlyTriggerQuantizeWaves = 2;

// A rope after a GEMV of more weight bytes a SM than this triggers early
// only below kRopeShortTriggerRows positions: between the 67 KB a SM that
// gained (Qwen3-1.7B) and the 126 KB that lost (4B), neither boundary
// measured closer.
constexpr int64_t kRopeLongTriggerMaxBytesPerSm = 96 * 1024;
// Below this position every early rope triggers early: measured +0.5 % a
// token on Qwen3-8B up to 128 positions, -1.7 % at 1,024.
constexpr int64_t kRopeShortTriggerRows = 512;

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
  int64_t prev_weight_bytes = 0;  // the GEMV before: the weight bytes it streams
  int64_t sms = 0;                // the chip's SMs
};

struct EarlyTriggerChoice {
  bool early = false;
  std::optional<std::string> declined;
  // A rope that fires: the position from which it triggers after its wait
  // instead (kRopeShortTriggerRows), 0 = early at every position.
  int64_t rope_rows = 0;
};
EarlyTriggerChoice choose_early_trigger(const EarlyTriggerQuery& q);

// Whether a launch of this kind (and int8 output, for a SwiGLU) has a kernel
// that takes the early trigger: the launches the rule matches.
bool early_trigger_candidate(const std::string& kind, bool writes_int8);

}  // namespace lanec
