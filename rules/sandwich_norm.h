// sandwich_norm (waiting for gemma3): gemma3 normalizes a block's output
// before the residual add and the sum again before the next block:
//   h = r + rms_norm(o) * w_post;  y = rms_norm(h) * w_pre.
// One launch can do both norms of the vector (two block reductions) because
// both reduce over the same whole vector. Registered so the census and
// --hold know the name; it never matches until gemma3 lands.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_sandwich_norm_rule();

}  // namespace lanec
