// moe_deferred_finalize (waiting for qwen3moe): the experts write their
// down-projection rows unweighted; the weighted sum sum_e w_e y_e and the
// residual add are finished by the next norm launch, which reads all k rows.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_moe_deferred_finalize_rule();

}  // namespace lanec
