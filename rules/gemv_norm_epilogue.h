// gemv_norm_epilogue: the residual add after a projection (attention output,
// FFN down) runs in the GEMV's epilogue, so the norm that follows reads a
// finished residual stream.
//
// Math: h = W x + r.  Each output row adds r[row] after its dot product.
// Legal because every row of h depends only on its own dot product and r[row];
// the kernel may even write h over r (y aliases residual). It runs after
// add_norm in the registry: where add_norm took the sum into the norm there is
// nothing left to match. Declines when the product without the residual is
// read elsewhere or the shapes differ.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gemv_norm_epilogue_rule();

}  // namespace lanec
