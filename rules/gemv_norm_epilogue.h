// gemv_norm_epilogue: the residual add after a projection (attention output,
// FFN down) runs in the GEMV's epilogue, and the RMS norm of that sum (the
// next block's input norm) runs in the same launch, by its last block.
//
// Math: h = W x + r;  y = h * rsqrt(mean(h^2) + eps) * w_norm.
// Each output row adds r[row] after its dot product (the kernel may write h
// over r). The norm needs all of h: every block counts itself done after its
// rows are stored, and the last one normalizes the whole vector (and writes
// its int8 form under int8 activations), so the launch that used to follow
// (an rms_norm, or add_norm's fused one) disappears. Legal because h is
// written exactly as the unfused add writes it and the norm reads h only
// after every row is final.
//
// Sites, in the order the fixed point meets them:
//  - matmul + residual add (the add_norm rule held, or no norm follows);
//  - a GEMV node + the add_norm node whose add takes its product;
//  - a GEMV node that already adds the residual + the rms_norm of its sum.
// Declines when the product is read without the residual, the shapes differ,
// the GEMV has more than one part, or h is too long for the tail's shared
// memory (n ≤ 8,192 and a multiple of 32).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gemv_norm_epilogue_rule();

// Longest h the norm tail takes (kernels/gemv.cuh kGemvNormTailMaxRows).
constexpr int64_t kGemvNormTailMaxElements = 8192;

}  // namespace lanec
