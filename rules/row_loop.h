// row_loop: a tall GEMV of short rows runs as a one-wave grid whose warps
// each loop over rows (kernels/gemv.cuh launch_gemv_row_loop), loading a
// row's weights while the row before is reduced and stored.
//
// Math unchanged: y_r = W_r . x for each row, each row's lanes and warp
// reduction as in the one-row-a-warp grid; only which warp takes a row and
// when its loads issue change. A launch-stage rule: the planner asks
// choose_row_loop per GEMV launch at the size stage, after the split and
// the staged kernel. Fires on one q8_0 matrix with int8 activations at
// split 1 and 1 row a warp, of at most kRowLoopMaxChunksPerLane 16-byte
// chunks a lane, whose one-row-a-warp grid would take kRowLoopMinWaves
// waves or more of the chip's resident warps. Measured on an H200
// (docs/performance.md): Qwen3-0.6B's logits GEMV (151,936 rows, k 1024,
// 2 chunks a lane) +1.2 % a token; Qwen3-1.7B's (k 2048, 4 chunks a lane)
// -0.2 %, its doubled chunks in flight costing warps (78 registers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lib/gguf/ggml_types.h"
#include "rules/gemv_query.h"
#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_row_loop_rule();

constexpr int kRowLoopMaxChunksPerLane = 2;
constexpr int64_t kRowLoopMinWaves = 4;

// One GEMV launch as the rule sees it, with the parameters chosen before.
struct RowLoopQuery : GemvQuery {
  int warps_per_sm = 0;  // resident warps an SM (resident_warps_per_sm)
  bool staged = false;
  int n_parts = 1;
  int rows_per_warp = 1;
  int split_k = 1;
};

// The row loop with its chunks a lane (the kernel's C), else the reason it
// declined.
struct RowLoopChoice {
  bool row_loop = false;
  int chunks_per_lane = 0;
  std::optional<std::string> declined;
};
RowLoopChoice choose_row_loop(const RowLoopQuery& q);

}  // namespace lanec
