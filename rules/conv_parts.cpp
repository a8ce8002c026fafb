// conv_parts: registered, waiting for qwen3next (see rules/conv_parts.h for its intent).
#include "rules/conv_parts.h"

namespace lanec {

std::unique_ptr<FusionRule> make_conv_parts_rule() {
  return std::make_unique<WaitingRule>("conv_parts", "the Q, K and V short convolutions of one step, one launch", "qwen3next");
}

}  // namespace lanec
