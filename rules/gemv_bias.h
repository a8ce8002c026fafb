// gemv_bias: a matmul followed by the add of a constant bias vector, as the
// GEMV's bias epilogue.
//
// Math: y = W x + b.  Each output row's dot product gets b[row] added by the
// lane that writes it. Legal because the addition happens once per row after
// the full dot product, exactly as the separate add does; declines when the
// bias broadcasts (shape differs from the product) or the product without
// the bias is read elsewhere.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gemv_bias_rule();

}  // namespace lanec
