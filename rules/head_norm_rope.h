// head_norm_rope: qwen3's per-head RMS norm of Q (or K) followed by RoPE, as
// one rope launch with its norm weight.
//
// Math: for each head h: x_h = x_h * rsqrt(mean(x_h^2) + eps) * w;  then
// rotate pairs of x_h by pos * theta^(-2i/n_rot).  One warp owns a head: it
// reduces the head's sum of squares before any element is written, then
// rotates the normalized values. Legal because the norm is per head and the
// rotation of a head reads only that head; declines when the normed tensor is
// read elsewhere (the launch rotates it in place).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_head_norm_rope_rule();

}  // namespace lanec
