// ffn_fused: the SwiGLU FFN block of a layer (the gate/up GEMV, the SwiGLU,
// the down GEMV with its residual add) as one launch (kernels/ffn.cuh).
//
// Math: y = r + W_d q(silu(W_g x) * (W_u x)), q the two-word int8 form.
// Each thread block forms 32-element blocks of a = silu(W_g x) * (W_u x),
// their int8 words exactly as the SwiGLU quantize launch forms them, and
// their whole share W_d[:, j] q(a_j) of every output row, which it adds to
// y with atomics; y is planned as a view of r, so the residual add is the
// accumulation itself. Legal because the down product is a sum over the
// intermediate blocks and each block's term depends only on its own 32
// values of a; the sum's order varies from run to run (f32 rounding).
// No block waits for another, where the chain waits twice on the whole grid.
//
// Declines: other activation numerics than two-pass int8 (the kernel's
// only form), weights other than q8_0, lengths not multiples of 32, an
// intermediate vector or the gate/up products read elsewhere, a residual
// read after the block or that is a graph output (it is overwritten in
// place), and fewer intermediate blocks than half the chip's SMs (where
// it was not measured; the tiny presets).
//
// Measured (bench/ffn_fold.cu, H100, the FFN block and its norm a layer):
// 0.6B 7.63 -> 6.29 µs, 1.7B 18.49 -> 16.27 µs, 8B 57.0 -> 55.3 µs
// (docs/performance.md).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

// Fewest intermediate blocks of 32, as a fraction of the chip's SMs, for
// which the rule fires (the measured shapes have 96 to 384 on 132 SMs).
constexpr double kFfnFusedMinBlocksPerSm = 0.5;

std::unique_ptr<FusionRule> make_ffn_fused_rule();

}  // namespace lanec
