// attn_output_gate: registered, waiting for qwen3next (see rules/attn_output_gate.h for its intent).
#include "rules/attn_output_gate.h"

namespace lanec {

std::unique_ptr<FusionRule> make_attn_output_gate_rule() {
  return std::make_unique<WaitingRule>("attn_output_gate", "attention output times sigmoid(gate) in the attention epilogue", "qwen3next");
}

}  // namespace lanec
