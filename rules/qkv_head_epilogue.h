// qkv_head_epilogue: the Q, K and V projections write consecutive parts of
// one qkv buffer, and the head epilogue (bias, per-head norm, RoPE, the cache
// write and attention) reads those parts in place.
//
// Math: qkv = [W_q x | W_k x | W_v x];  q, k, v are views at offsets 0,
// n_q and n_q + n_k. No values change: the rule only decides where results
// live. Legal because each projection writes its own disjoint range and the
// in-place RoPE rotates only its own part. Declines when the three
// projections read different inputs or one of them is not a plain GEMV.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_qkv_head_epilogue_rule();

}  // namespace lanec
