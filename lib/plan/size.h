// The size stage: linked launches -> launches with their int8 activation
// forms, per-launch parameters chosen from the chip, and the buffers.
//
//  - int8 forms: a GEMV over q8_0 weights reads "<x>.q8" when the knobs ask
//    for int8 activations (two words each under two-pass-int8). The rms_norm
//    or attention that makes x writes the int8 form itself (and its f32 form
//    only if something else reads it); otherwise a quantize launch runs just
//    before the first GEMV that reads it.
//  - parameters: GEMV rows a warp (rule rows_a_warp), split_k, the staged
//    kernel (rule staged_weights), the row loop (rule row_loop) and the second
//    trip loaded ahead (rule load_ahead), attention
//    context splits from the SM count, the argmax grid (blocks over the
//    logits), and the attention smem check against smem_kib_per_block.
//  - buffers: one per tensor the launches touch, views where link placed a
//    tensor inside another, head-major KV caches in the cache precision,
//    workspaces for split attention and for the argmax block winners and
//    counter (zero-filled at start; the kernel leaves the counter zero);
//    sorted by name.
#pragma once

#include <optional>
#include <vector>

#include "lib/knobs/knobs.h"
#include "lib/plan/link.h"
#include "lib/plan/rule_tally.h"
#include "lib/plan/schedule.h"

namespace lanec {

struct SizedPlan {
  std::vector<Launch> launches;
  std::vector<Buffer> buffers;  // sorted by name
};

// The launch-stage rules it applies unless held: rows_a_warp, staged_weights,
// row_loop, load_ahead, gemv_argmax.
struct SizeRules {
  bool rows_a_warp = true;
  bool staged_weights = true;
  bool row_loop = true;
  bool load_ahead = true;
  bool gemv_argmax = true;
};

SizedPlan size_plan(const Graph& graph, const LinkedPlan& linked, const Knobs& knobs,
                    const SizeRules& rules, RuleTally& tally);

// The chip-derived parameters (exposed for tests and docs/planner.md).
// `rows`: output rows (a SwiGLU pair: the gate rows); `warps_per_sm`: the
// chip's resident warps an SM (resident_warps_per_sm); `swiglu`: the GEMV
// has the SwiGLU epilogue (two rows a warp).
int choose_gemv_split_k(int64_t rows, int rows_per_warp, int64_t k, GgmlType format, int sms, int warps_per_sm,
                        bool swiglu = false);
// Output rows of a GEMV launch as its grid counts them: every part's rows,
// or a SwiGLU pair's gate rows (gate and up share a warp).
int64_t gemv_rows(const GemvLaunch& g);
// A launch-stage rule's verdict on launch l: counted declined with its
// reason, or fired (tallied and recorded in l.rules). True when it fired.
bool settle_launch_rule(RuleTally& tally, const char* rule, Launch& l, const std::optional<std::string>& declined);
// Elements of x one 16-byte chunk of a GEMV weight row covers (kernels/gemv.cuh
// gemv_chunk_elems): 4 for f32, 16 for Q8_0 (repacked q8_0_split), else 8.
int64_t gemv_chunk_elems(GgmlType format);
// The most 16-byte chunks a lane reads of a row of k elements, the row
// shared by split_k warps (kernels/gemv.cuh: lane l of slice s takes chunks
// s*32 + l, then every 32*split_k after).
int64_t gemv_chunks_a_lane(GgmlType format, int64_t k, int split_k = 1);
// Resident warps an SM of compute capability arch_number (89 for sm_89),
// where this version knows the figure.
std::optional<int> known_resident_warps_per_sm(int arch_number);
// What the planner sizes for on an architecture it has no figure for (the
// fewest of the recent ones: splits sized for fewer warps than the chip
// holds leave it less full, never oversubscribed).
constexpr int kAssumedResidentWarpsPerSm = 48;
// known_resident_warps_per_sm, else kAssumedResidentWarpsPerSm.
int resident_warps_per_sm(int arch_number);
// Most context splits of an attention of n_head query heads served
// heads_per_block a block (n_head / heads_per_block blocks a split).
int choose_attention_splits(int64_t n_head, int64_t heads_per_block, int64_t n_ctx, int sms);
// Query heads one attention block serves: the largest divisor of the GQA
// ratio n_head / n_kv_head of at most 8 heads and 1024 elements.
int attention_heads_per_block(int64_t gqa, int64_t head_dim);
// Query heads a block serves in the short-context form of the step, where
// at most one cluster of splits is in use (up to 128 keys): there a kv
// head's rows are a few KB, read from L2 by each of its query heads' blocks
// at little cost, and more blocks shorten each block's chain
// (docs/performance.md, h200-2026-12-02f). At long contexts the shared
// reads pay (one head a block: -8 % on Qwen3-0.6B at 4k context).
constexpr int kShortContextHeadsPerBlock = 1;
// Blocks of the argmax kernel: min(sms, ceil(n_vocab / 1024)), at least 1.
int choose_argmax_blocks(int64_t n_vocab, int sms);
// The fused FFN launch's block shape (kernels/ffn.cuh), from the measured
// shapes (bench/ffn_fold.cu, bench/ffn_forms.sh, docs/performance.md): 16
// warps a block, which holds an SM's registers, so the grid runs in
// ceil(blocks / sms) waves; the intermediate blocks of 32 a thread block
// (1 to kFfnMaxChunks, dividing ffn) that give the fewest waves, the fewest
// chunks among those (0.6B 1, 1.7B 2, 8B 3: one wave each on 132 SMs; 8B's
// 3 measured +0.5 % over 2); the first down-weight group loaded before the
// wait where each thread has one group (hidden <= 4 x 512: 0.6B, 1.7B; on
// 8B it cost registers). 8 warps at two blocks an SM, clusters of two and
// two trips ahead measured slower (h100-2026-12-07j).
struct FfnShape {
  int chunks = 1;
  int warps = 16;
  bool preload_down = false;
  // The kernel's other arguments (FfnLaunch::min_blocks, ahead, split) keep
  // their defaults: their forms measured slower (bench/ffn_forms.sh).
};
constexpr int kFfnMaxChunks = 3;
FfnShape choose_ffn_shape(int64_t hidden, int64_t ffn, int sms);
// Static shared memory of one attention block (kernels/attention.cuh).
int64_t attention_smem_bytes(int64_t head_dim, int64_t heads_per_block);

// Buffers as text (one a line) for --dump-after size and later stages.
std::string print_buffers(const std::vector<Buffer>& buffers);

}  // namespace lanec
