// gather_scale: registered, waiting for gemma3 (see rules/gather_scale.h for its intent).
#include "rules/gather_scale.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gather_scale_rule() {
  return std::make_unique<WaitingRule>("gather_scale", "y = table[token] * scale in the gather launch", "gemma3");
}

}  // namespace lanec
