// moe_deferred_finalize: registered, waiting for qwen3moe (see rules/moe_deferred_finalize.h for its intent).
#include "rules/moe_deferred_finalize.h"

namespace lanec {

std::unique_ptr<FusionRule> make_moe_deferred_finalize_rule() {
  return std::make_unique<WaitingRule>("moe_deferred_finalize", "the weighted expert sum finished in the next norm launch", "qwen3moe");
}

}  // namespace lanec
