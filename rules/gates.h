// gates (waiting for qwen3next): the delta rule's per-head gates,
//   beta = sigmoid(b),  g = -exp(A_log) * softplus(a + dt_bias),
// are elementwise over heads and computed in one small launch.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gates_rule();

}  // namespace lanec
