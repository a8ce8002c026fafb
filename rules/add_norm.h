// add_norm: a residual add followed by the RMS norm of the sum, as one
// rms_norm launch with its residual input.
//
// Math: h = a + b;  y = h * rsqrt(mean(h^2) + eps) * w.  The kernel forms h
// element by element, writes it (the new residual stream, still needed by the
// next residual add) and normalizes it in the same block. Legal because the
// sum is written exactly as the unfused add writes it, every reader of h
// sees the same values, and the norm reads h only after the block has formed
// all of it. Declines when the add broadcasts (the kernel adds two vectors of
// one length) or when an addend is a constant (that is a bias: gemv_bias).
// gemv_norm_epilogue runs first and takes the adds after a GEMV; this rule
// takes the rest (and those adds where gemv_norm_epilogue is held or declines).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_add_norm_rule();

}  // namespace lanec
