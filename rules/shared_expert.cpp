// shared_expert: registered, waiting for qwen3next (see rules/shared_expert.h for its intent).
#include "rules/shared_expert.h"

namespace lanec {

std::unique_ptr<FusionRule> make_shared_expert_rule() {
  return std::make_unique<WaitingRule>("shared_expert", "the shared expert's GLU MLP inside the MoE launch", "qwen3next");
}

}  // namespace lanec
