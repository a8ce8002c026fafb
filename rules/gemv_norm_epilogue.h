// gemv_norm_epilogue: the residual add after a projection (attention output,
// FFN down) runs in the GEMV's epilogue, so the norm that follows reads a
// finished residual stream.
//
// Math: h = W x + r.  Each output row adds r[row] after its dot product.
// Legal because every row of h depends only on its own dot product and r[row];
// the kernel may even write h over r (y aliases residual). It runs before
// add_norm in the registry, so the norm after a projection reads a finished
// h: the register GEMV loads r before its wait (GemvParams::residual_early,
// where the launch before does not write r), so the add costs the GEMV no
// round trip, and the norm reads one vector, not two (+0.5, +1.1 and +0.6 %
// tg128 on Qwen3-0.6B, 1.7B and 8B over add_norm taking the sum,
// docs/performance.md). Declines when the product without the residual is
// read elsewhere or the shapes differ.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gemv_norm_epilogue_rule();

}  // namespace lanec
