// gemv_prologue: a GEMV forms its own input. The rms_norm (with its residual
// add) or quantize launch that would make the GEMV's input runs instead at the
// start of the GEMV, in every block, into shared memory.
//
// Math unchanged: h = x (+ r), y = h * rsqrt(mean(h^2) + eps) * w, and under
// int8 numerics the same per-32 quantization of y, so the GEMV multiplies the
// values the two launches would have produced (the sum of squares is added in
// another order: the norm scale may differ in its last bits). One block writes
// h, which no other block reads. Costs every block a few L2 reads of k-long
// vectors; the kernel caps the grid (kernels/gemv.cuh) so the repeated work
// stays bounded, and saves one launch and one dependency wait per site.
//
// A launch-stage rule (lanec's own, after the seed's 27): the planner applies
// it at the size stage, once the int8 forms are known. Per GEMV launch it
// first takes a quantize launch that makes the GEMV's int8 input, then an
// rms_norm launch that makes its input (f32 or int8). Declines when the
// producer's output is read by another launch or is a graph output, when a
// launch between them touches what the producer reads or writes, when h
// would overwrite the vectors it is formed from, when k is not a multiple of
// 32, or when the formed input does not fit the chip's shared memory a block.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lib/plan/rule_tally.h"
#include "lib/plan/schedule.h"
#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gemv_prologue_rule();

struct GemvPrologueContext {
  int sms = 1;                          // the chip's SMs (the GEMV's grid cap)
  int64_t smem_bytes_per_block = 0;     // the chip's shared memory a block
  // The buffer whose storage a name resolves to (views followed).
  std::function<std::string(const std::string&)> storage_of;
  // Whether the tensor is an output of the step graph.
  std::function<bool(const std::string&)> is_graph_output;
};

// Dynamic shared memory of a prologue GEMV over k inputs (kernels/gemv.cuh
// gemv_prologue_smem_bytes).
int64_t gemv_prologue_smem_bytes(int64_t k, GemvNumerics numerics);

// Applies the rule to every GEMV launch, in order; records firings and
// declines in `tally`.
void apply_gemv_prologue(std::vector<Launch>& launches, const GemvPrologueContext& context, RuleTally& tally);

}  // namespace lanec
