// act_gate: registered, waiting for qwen3next (see rules/act_gate.h for its intent).
#include "rules/act_gate.h"

namespace lanec {

std::unique_ptr<FusionRule> make_act_gate_rule() {
  return std::make_unique<WaitingRule>("act_gate", "y = rms_norm(o) * silu(z) in the delta-net output launch", "qwen3next");
}

}  // namespace lanec
