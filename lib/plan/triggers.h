// What may run before a launch's wait, decided over the final launch order:
// the GEMV residuals loaded early, and the launch-stage rule early_trigger
// (rules/early_trigger.h), which small launches let the next launch start
// before their wait.
#pragma once

#include "lib/knobs/knobs.h"
#include "lib/plan/rule_tally.h"
#include "lib/plan/schedule.h"

namespace lanec {

// Whether launch l's kernel has the early form (the launches the rule
// matches: norms, quantizes, int8 SwiGLUs, ropes).
bool takes_early_trigger(const Launch& l);

// Marks GemvLaunch::residual_early on the register-kernel GEMVs with a
// residual epilogue whose residual the launch before does not write (the
// only launch that may still run when a launch's blocks start, before any
// early trigger; choose_early_triggers then keeps that true).
void mark_early_residuals(Schedule& s);

// Marks Launch::early_trigger on the norm, quantize and rope launches the
// rule fires for, in launch order, and tallies each verdict.
void choose_early_triggers(Schedule& s, const Knobs& knobs, RuleTally& tally);

}  // namespace lanec
