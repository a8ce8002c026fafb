// attn_output_gate (waiting for qwen3next): gated attention,
//   y_h = attn_h * sigmoid(g_h),
// elementwise per head; the attention epilogue multiplies before writing.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_attn_output_gate_rule();

}  // namespace lanec
