// gate_projections (waiting for qwen3next): the two small projections that
// produce b and a (one value per head each) fused with the gates math, so the
// per-head values never leave registers.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gate_projections_rule();

}  // namespace lanec
