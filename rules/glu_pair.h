// glu_pair: the gate and up projections of a SwiGLU FFN and the SwiGLU
// itself, as one GEMV launch with the SwiGLU epilogue.
//
// Math: a = silu(W_g x) * (W_u x).  A warp computes row r of both products
// (the same x chunk feeds both) and writes silu(g_r) * u_r. Legal because a_r
// depends only on row r of the two products; declines when the two read
// different inputs, use different weight formats or row counts, or a product
// is read elsewhere.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_glu_pair_rule();

}  // namespace lanec
