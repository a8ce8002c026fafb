// staged_weights: GEMV weights copied into shared memory before the wait
// (conditions in rules/staged_weights.h).
#include "rules/staged_weights.h"

#include <algorithm>
#include <cstdio>

#include "kernels/limits.h"
#include "lib/plan/size.h"

namespace lanec {
namespace {

constexpr int kStagedRowsPerWarp = 2;       // measured: as fast as 1 (docs/performance.md)
// Blocks of the staged kernel an SM holds by registers (47 a thread, 256
// threads a block).
constexpr int64_t kStagedBlocksPerSmByRegisters = 5;

std::string mib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(bytes) / (1 << 20));
  return text;
}

}  // namespace

StagedWeightsChoice choose_staged_weights(const StagedWeightsQuery& q) {
  auto decline = [](std::string why) { return StagedWeightsChoice{false, 1, 1, std::move(why)}; };
  if (q.arch_number < 90)
    return decline("bulk copies into shared memory need sm_90 or newer (the chip is sm_" +
                   std::to_string(q.arch_number) + ")");
  if (q.format != GgmlType::Q8_0 || !q.int8_activations || q.swiglu)
    return decline("only q8_0 weights with int8 activations and no SwiGLU epilogue are staged");
  if (!q.reads_attention_output)
    return decline("its input is not an attention output: staged after a norm or quantize launch "
                   "measured slower");
  if (q.k % kernels::kGemvStagedKMultiple != 0)
    return decline("k = " + std::to_string(q.k) + " is not a multiple of " +
                   std::to_string(kernels::kGemvStagedKMultiple) + " (a row's scales fill whole 16-byte copies)");
  const int64_t chunks = q.k / gemv_chunk_elems(GgmlType::Q8_0);
  const int64_t lanes = 32 * static_cast<int64_t>(q.register_split_k);
  if (chunks <= lanes)
    return decline("the register GEMV already loads all its weights before the wait (" + std::to_string(chunks) +
                   " chunks a row over " + std::to_string(lanes) + " lanes)");
  const int64_t bytes = q.rows * static_cast<int64_t>(ggml_row_bytes(GgmlType::Q8_0, q.k).value_or(0));
  if (bytes > kStagedMaxBytes)
    return decline(mib(bytes) + " MiB of weights, more than the " + mib(kStagedMaxBytes) +
                   " MiB the launch before can hide");
  const int split = q.rows >= 4096 ? 1 : q.rows >= 2048 ? 2 : 4;  // at least 4,096 warps
  const int64_t rows_a_block = kernels::gemv_staged_rows_a_block(split, kStagedRowsPerWarp);
  const int64_t blocks = (q.rows + rows_a_block - 1) / rows_a_block;
  const int64_t block_smem =
      kernels::gemv_staged_smem_bytes(static_cast<int>(q.k), split, kStagedRowsPerWarp) + kernels::kGemvStagedStaticSmem;
  const int64_t by_smem = static_cast<int64_t>(q.smem_kib_per_block) * 1024 / block_smem;
  const int64_t resident = static_cast<int64_t>(q.sms) * std::min(kStagedBlocksPerSmByRegisters, by_smem);
  if (blocks > resident)
    return decline(std::to_string(blocks) + " blocks would not all be resident at once (" +
                   std::to_string(resident) + " fit the " + std::to_string(q.sms) + " SMs)");
  if (q.register_loads_ahead)
    return decline("the register GEMV loads its second chunk a lane with its first activations (load_ahead), "
                   "measured faster than staging");
  return {true, split, kStagedRowsPerWarp, std::nullopt};
}

// The planner calls choose_staged_weights per GEMV launch.
std::unique_ptr<FusionRule> make_staged_weights_rule() {
  return std::make_unique<LaunchStageRule>(
      "staged_weights", "a GEMV after the attention copies all its weights into shared memory before its wait");
}

}  // namespace lanec
