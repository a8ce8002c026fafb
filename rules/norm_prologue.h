// norm_prologue: an RMS norm whose only reader is one GEMV launch is computed
// by that launch: every block normalizes the vector while it stages its input
// in shared memory (kernels/gemv.cuh, Staged), so no norm launch remains.
//
// Math: y = x * rsqrt(mean(x^2) + eps) * w;  out = W y. Each block reduces
// the same sum of squares over all of x (in its own order: the norm's scale
// may differ from a standalone norm's in the last bit), normalizes, quantizes
// y to the launch's int8 words (int8 numerics) and runs its rows against the
// staged y. Legal because y has no other reader and is no graph output, so
// nothing needs it in memory; x is read, never written.
//
// Cost: the prologue is repeated by every block, so staged launches take 16
// warps a block (fewer blocks repeat it); a vector is staged only when it
// fits kGemvMaxStageBytes of shared memory (kernels/limits.h).
//
// Registry order: after glu_pair and gemv_parts, so the Q, K, V (or gate,
// up) projections are already one launch. add_norm, earlier in the
// registry, leaves a residual add to gemv_norm_epilogue when the sum's norm
// feeds GEMVs only and this rule is not held, so the norm is left alone for
// this rule to take.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_norm_prologue_rule();

// Whether norm_prologue can take the norm whose output is `normed` once its
// readers share one launch: every reader is a matmul of it (the input, not
// the weight), it is no graph output, and it fits a block's staged input
// (norm_stage_declines).
bool norm_feeds_only_gemvs(const FusedGraph& g, TensorId normed, const Knobs& knobs);
// Why the normed vector cannot be staged by a GEMV over `weight` weights, or nullopt.
std::optional<std::string> norm_stage_declines(const FusedGraph& g, TensorId normed, GgmlType weight,
                                               const Knobs& knobs);

}  // namespace lanec
