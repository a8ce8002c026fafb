// Early residuals and early triggers over the final launch order (triggers.h).
#include "lib/plan/triggers.h"

#include <algorithm>
#include <optional>
#include <string>
#include <variant>

#include "lib/plan/size.h"
#include "lib/plan/verify_schedule.h"
#include "rules/early_trigger.h"

namespace lanec {
namespace {

// Warps of a GEMV launch's grid on the register kernel (the row loop's grid
// is sized to fill the chip).
int64_t gemv_warps(const GemvLaunch& g, int64_t warp_slots) {
  if (g.row_loop_chunks > 0) return warp_slots;
  return (gemv_rows(g) + g.rows_per_warp - 1) / g.rows_per_warp * g.split_k;
}

// The warp slots a launch that streams weights from its first blocks holds
// (a register-kernel GEMV, an ffn launch), or nullopt for any other launch.
// Each ffn block holds a whole SM's registers (kernels/ffn.cuh), so it
// fills the SMs it runs on.
std::optional<int64_t> streaming_warps(const Launch& l, const Knobs& knobs, int64_t warp_slots) {
  if (const auto* g = std::get_if<GemvLaunch>(&l.params); g != nullptr && !g->staged) return gemv_warps(*g, warp_slots);
  if (const auto* f = std::get_if<FfnLaunch>(&l.params)) {
    const int64_t blocks = f->ffn / (32 * f->chunks);
    return std::min<int64_t>(blocks, knobs.chip.sms) * resident_warps_per_sm(knobs.arch_number());
  }
  return std::nullopt;
}

}  // namespace

void mark_early_residuals(Schedule& s) {
  for (size_t i = 0; i < s.launches.size(); ++i) {
    auto* g = std::get_if<GemvLaunch>(&s.launches[i].params);
    if (g == nullptr || g->staged || g->row_loop_chunks != 0 || !gemv_has_residual(*g)) continue;
    g->residual_early = true;
    if (i > 0 && early_read_clash(s, s.launches[i - 1], s.launches[i])) g->residual_early = false;
  }
}

bool takes_early_trigger(const Launch& l) {
  const auto* e = std::get_if<ElementwiseLaunch>(&l.params);
  return early_trigger_candidate(launch_kind_name(l.kind), e != nullptr && !e->out_q8.empty());
}

void choose_early_triggers(Schedule& s, const Knobs& knobs, RuleTally& tally) {
  const int64_t slots = static_cast<int64_t>(knobs.chip.sms) * resident_warps_per_sm(knobs.arch_number());
  for (size_t i = 0; i < s.launches.size(); ++i) {
    Launch& l = s.launches[i];
    if (!takes_early_trigger(l)) continue;
    EarlyTriggerQuery q;
    q.kind = launch_kind_name(l.kind);
    q.arch_number = knobs.arch_number();
    q.warp_slots = slots;
    q.sms = knobs.chip.sms;
    q.has_next = i + 1 < s.launches.size();
    // If launch i triggers early, launch i + 1 may start while launch i - 1
    // (and those before it that trigger early) still run.
    if (q.has_next) q.next_reads_early = early_read_clash_before(s, s.launches[i + 1], i);
    if (i > 0) {
      const Launch& prev = s.launches[i - 1];
      if (std::optional<int64_t> warps = streaming_warps(prev, knobs, slots)) {
        q.prev_is_gemv = true;
        q.prev_name = prev.name;
        q.prev_warps = *warps;
        q.prev_weight_bytes = static_cast<int64_t>(s.weight_bytes_read(prev));
      }
    }
    const EarlyTriggerChoice choice = choose_early_trigger(q);
    l.early_trigger = settle_launch_rule(tally, "early_trigger", l, choice.declined);
    if (auto* r = std::get_if<RopeLaunch>(&l.params); r != nullptr && l.early_trigger)
      r->early_trigger_rows = choice.rope_rows;
  }
}

}  // namespace lanec
