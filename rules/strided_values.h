// strided_values (waiting for qwen3next): when V (or the gate) is a strided
// slice of a wider per-head projection, attention reads it with a row pitch
// instead of a copy: v_h[d] = p[h * pitch + offset + d].
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_strided_values_rule();

}  // namespace lanec
