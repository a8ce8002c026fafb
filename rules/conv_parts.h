// conv_parts (waiting for qwen3next): the short convolutions over the Q, K
// and V channel groups, each with its own ring state, as one launch with
// parts (channels are independent).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_conv_parts_rule();

}  // namespace lanec
