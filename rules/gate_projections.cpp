// gate_projections: registered, waiting for qwen3next (see rules/gate_projections.h for its intent).
#include "rules/gate_projections.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gate_projections_rule() {
  return std::make_unique<WaitingRule>("gate_projections", "the b and a projections and their gates, one launch", "qwen3next");
}

}  // namespace lanec
