// sandwich_norm: registered, waiting for gemma3 (see rules/sandwich_norm.h for its intent).
#include "rules/sandwich_norm.h"

namespace lanec {

std::unique_ptr<FusionRule> make_sandwich_norm_rule() {
  return std::make_unique<WaitingRule>("sandwich_norm", "rms_norm(x) * w_post + r then rms_norm, as one norm launch", "gemma3");
}

}  // namespace lanec
