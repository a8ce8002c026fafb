// staged_weights: a GEMV launch copies all of its weights into shared memory
// before its wait (kernels/gemv_staged.cuh), instead of loading one chunk a
// lane before the wait and the rest after it.
//
// Math unchanged: the same dot products over the same chunks; only where the
// weight bytes wait changes. A launch-stage rule: the planner asks
// choose_staged_weights per GEMV launch at the size stage. Fires on a q8_0
// GEMV with int8 activations that reads an attention's output (the long
// launch before it hides the copies), on sm_90+, when the register GEMV
// would leave more than one chunk a lane for after the wait, the weights
// are at most kStagedMaxBytes and every block fits on the chip at once.
// Measured on an H200 (docs/performance.md): Qwen3-1.7B's output projection
// +1.3 % a token; staged after a norm, the Q/K/V and gate/up GEMVs of
// Qwen3-0.6B lost 2-8 %, and Qwen3-0.6B's output projection (all its
// weights already before the wait) and Qwen3-8B's (17.8 MB) gained nothing.
// Declines where rule load_ahead would take the register GEMV (its lanes'
// two chunks in one round trip after the wait): on an H100 that form, with
// the early trigger of the norm after it, beat the staged one on Qwen3-1.7B's
// output projection by 0.8 % a token (0.4 % at 4k context; h100-2026-12-07c).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lib/gguf/ggml_types.h"
#include "rules/gemv_query.h"
#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_staged_weights_rule();

// Weight bytes a staged GEMV may copy: what the launch before it hides.
constexpr int64_t kStagedMaxBytes = int64_t{8} << 20;

// One GEMV launch as the rule sees it.
struct StagedWeightsQuery : GemvQuery {
  int arch_number = 0;  // 90 for sm_90
  int smem_kib_per_block = 0;
  bool reads_attention_output = false;
  int register_split_k = 1;     // the register GEMV's split (choose_gemv_split_k)
  bool register_loads_ahead = false;  // rule load_ahead (not held) would take the register GEMV
};

// Staged: the kernel's warps a row group (split_k) and rows a warp; else the
// reason it declined.
struct StagedWeightsChoice {
  bool staged = false;
  int split_k = 1;
  int rows_per_warp = 1;
  std::optional<std::string> declined;
};
StagedWeightsChoice choose_staged_weights(const StagedWeightsQuery& q);

}  // namespace lanec
