// conv_silu_l2 (waiting for qwen3next): conv_silu plus the per-head L2 norm
// of the Q and K channels that follows: q_h = v_h / sqrt(sum v_h^2 + eps).
// A block owning a head's channels can reduce the head after the conv.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_conv_silu_l2_rule();

}  // namespace lanec
