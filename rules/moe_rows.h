// moe_rows (waiting for qwen3moe): the k selected experts' gate and up
// matrices are read as k row blocks of one GEMV launch (rows indexed through
// the routing ids on the device), then down likewise, so a step costs two
// launches for all experts.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_moe_rows_rule();

}  // namespace lanec
