// rope_parts: the RoPE of Q and the RoPE of K at one position, as one rope
// launch with two parts.
//
// Math: each part's heads rotate by pos * theta^(-2i/n_rot) (after the
// part's own per-head norm when head_norm_rope fused one). Warps take heads of
// part 0 then part 1. Legal because heads are independent; declines when the
// parts differ in rotation attributes (mode, n_rot, freq_base), head size or
// norm epsilon, since one launch has one set of these.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_rope_parts_rule();

}  // namespace lanec
