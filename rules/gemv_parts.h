// gemv_parts: GEMVs that read the same input (Q, K and V; gate and up when
// glu_pair is held), as one GEMV launch with up to four parts.
//
// Math: y_p = W_p x for each part p, with each part's own bias or residual
// epilogue. Rows are numbered part after part and warps take consecutive
// rows, so x is read once per block for all parts. Legal because rows are
// independent; declines when the formats differ (one launch has one weight
// format) or there are more than four parts.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gemv_parts_rule();

}  // namespace lanec
