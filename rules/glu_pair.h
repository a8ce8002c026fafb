// glu_pair: the gate and up projections of a SwiGLU FFN and the SwiGLU
// itself, as one GEMV launch with the SwiGLU epilogue.
//
// Math: a = silu(W_g x) * (W_u x).  A warp computes row r of both products
// (the same x chunk feeds both) and writes silu(g_r) * u_r. Legal because a_r
// depends only on row r of the two products; declines when the two read
// different inputs, use different weight formats or row counts, or a product
// is read elsewhere. Under int8 activations it also declines when a q8_0
// GEMV reads a: a's int8 form then needs a launch of its own, which forms
// the SwiGLU itself (kernels/quantize.cuh), and the gate/up GEMV without the
// epilogue keeps one row a warp and fewer registers: +4.5 % tg128 on
// Qwen3-8B, +0.8 % on 1.7B, +0.5 % on 0.6B (docs/performance.md).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_glu_pair_rule();

}  // namespace lanec
