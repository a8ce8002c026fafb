// sequences: registered, waiting for batched decode (see rules/sequences.h for its intent).
#include "rules/sequences.h"

namespace lanec {

std::unique_ptr<FusionRule> make_sequences_rule() {
  return std::make_unique<WaitingRule>("sequences", "per-sequence launches of one kind merged into one launch over all sequences", "batched decode");
}

}  // namespace lanec
