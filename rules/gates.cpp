// gates: registered, waiting for qwen3next (see rules/gates.h for its intent).
#include "rules/gates.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gates_rule() {
  return std::make_unique<WaitingRule>("gates", "beta = sigmoid(b); g = -exp(a_log) * softplus(a + dt_bias), one launch", "qwen3next");
}

}  // namespace lanec
