// strided_values: registered, waiting for qwen3next (see rules/strided_values.h for its intent).
#include "rules/strided_values.h"

namespace lanec {

std::unique_ptr<FusionRule> make_strided_values_rule() {
  return std::make_unique<WaitingRule>("strided_values", "attention reads V as a strided slice of a wider projection", "qwen3next");
}

}  // namespace lanec
