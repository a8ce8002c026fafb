// shared_expert (waiting for qwen3next): a shared expert's
//   s = sigmoid(w_g . x) * down(silu(gate x) * up x)
// is added to the routed experts' sum; it runs as one more expert row set of
// the MoE launch.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_shared_expert_rule();

}  // namespace lanec
