// gather_scale (waiting for gemma3): gemma3 scales the embedding row by
// sqrt(n_embd): y = table[token] * s. The gather multiplies each element as it
// dequantizes it, which is exact in f32 (one rounding either way).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gather_scale_rule();

}  // namespace lanec
