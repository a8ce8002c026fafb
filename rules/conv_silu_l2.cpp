// conv_silu_l2: registered, waiting for qwen3next (see rules/conv_silu_l2.h for its intent).
#include "rules/conv_silu_l2.h"

namespace lanec {

std::unique_ptr<FusionRule> make_conv_silu_l2_rule() {
  return std::make_unique<WaitingRule>("conv_silu_l2", "silu(conv(x)) then per-head L2 norm of q and k, one launch", "qwen3next");
}

}  // namespace lanec
