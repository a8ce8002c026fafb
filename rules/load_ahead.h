// load_ahead: a GEMV whose lanes take two 16-byte chunks of a row loads the
// second chunk's weights and both chunks' activations together right after
// the wait (kernels/gemv.cuh gemv_ahead_kernel), so a lane makes one round
// trip to memory after the wait instead of one to L2 and then one to DRAM.
//
// Math unchanged: y_r = W_r . x for each row, the same chunks to each lane
// and the same reduction; the two chunks' products are summed before they
// join the accumulator (one rounding order of the same terms). A launch-
// stage rule: the planner asks choose_load_ahead per GEMV launch at the
// size stage, after the split, the staged kernel and the row loop, which it
// needs settled. Fires on the register kernel over q8_0 weights with
// two-word int8 activations at one row a warp (no SwiGLU pair; the forms
// measured and checked on a GPU) whose lanes take exactly
// kLoadAheadChunksPerLane chunks and whose grid is one wave at the
// registers the kernel's bound allows (kGemvMaxWarps x
// kGemvAheadMinBlocks warps an SM); declines otherwise, naming why.
// Measured on an H100 (docs/performance.md, h100-2026-12-06b): Qwen3-0.6B's
// Q/K/V and down GEMVs +1.6 % a token; with its gate/up GEMV too (6,144
// warps, a second wave at 47 registers) -1.9 %; at two rows a warp (0.6B's
// gate/up, 1.7B's Q/K/V: one wave at 60 registers) +-0.1 %.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rules/gemv_query.h"
#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_load_ahead_rule();

constexpr int64_t kLoadAheadChunksPerLane = 2;

// One GEMV launch as the rule sees it, with the parameters chosen before.
struct LoadAheadQuery : GemvQuery {
  bool two_word = false;  // two-word int8 activations (two-pass-int8)
  bool staged = false;
  bool row_loop = false;
  int rows_per_warp = 1;
  int split_k = 1;
};

struct LoadAheadChoice {
  bool ahead = false;
  std::optional<std::string> declined;
};
LoadAheadChoice choose_load_ahead(const LoadAheadQuery& q);

}  // namespace lanec
