// act_gate (waiting for qwen3next): the delta net's gated output norm,
//   y_h = rms_norm(o_h) * w * silu(z_h),
// per head; the launch computing o_h applies it before writing.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_act_gate_rule();

}  // namespace lanec
