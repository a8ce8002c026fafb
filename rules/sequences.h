// sequences (waiting for batched decode): when a step decodes several
// sequences, each sequence's launches of one kind (GEMVs against the same
// weights, ropes, cache writes, attention over each sequence's cache) merge
// into one launch over the sequences' rows. The merge-sequences stage runs
// it; lanec plans one sequence a step today, so it never matches.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_sequences_rule();

}  // namespace lanec
