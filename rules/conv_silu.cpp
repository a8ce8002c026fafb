// conv_silu: registered, waiting for qwen3next (see rules/conv_silu.h for its intent).
#include "rules/conv_silu.h"

namespace lanec {

std::unique_ptr<FusionRule> make_conv_silu_rule() {
  return std::make_unique<WaitingRule>("conv_silu", "y = silu(short_conv(x)) in the conv launch", "qwen3next");
}

}  // namespace lanec
