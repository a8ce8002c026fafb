// Shape limits of the kernel library, shared with the planner: link
// (lib/plan/link.cpp) refuses a model outside them at plan time, naming the
// op, instead of leaving it to a launch that would refuse it on the device.
// Also the attention cluster merge's layout, which the planner sizes.
#pragma once

#ifdef __CUDACC__
#define LANEC_HOST_DEVICE __host__ __device__
#else
#define LANEC_HOST_DEVICE
#endif

namespace lanec::kernels {

// rms_norm.cuh: each block of 1024 threads holds the whole vector in
// registers, at most 16 elements a thread.
constexpr int kRmsNormMaxLength = 16384;
// rope.cuh: a lane keeps at most 4 pairs and 8 unrotated elements of a head.
constexpr int kRopeMaxHeadDim = 256;
// attention.cuh: a lane holds head_dim / 32 elements of q and of each accumulator.
constexpr int kAttnMaxHeadDim = 256;

// Launch geometry the planner sizes against (one definition for both sides).
// gemv.cuh: at most this many warps share a row group (split_k).
constexpr int kGemvMaxWarps = 16;
// gemv.cuh gemv_ahead_kernel: bounded so that this many blocks of
// kGemvMaxWarps warps fit an SM at its registers (a one-wave grid's warps
// are guaranteed resident up to kGemvMaxWarps * kGemvAheadMinBlocks an SM).
#ifndef LANEC_GEMV_AHEAD_MIN_BLOCKS
#define LANEC_GEMV_AHEAD_MIN_BLOCKS 2  // -D to time another bound (bench/variants.sh)
#endif
constexpr int kGemvAheadMinBlocks = LANEC_GEMV_AHEAD_MIN_BLOCKS;
// attention.cuh: warps a block, most context splits, and the query heads a
// block serves (Group * HeadDim: registers of q and the accumulators).
constexpr int kAttnWarps = 4;
constexpr int kAttnMaxSplits = 64;
constexpr int kAttnMaxGroup = 8;
constexpr int kAttnMaxGroupElems = 1024;
// Query heads one attention block serves for `gqa` = n_head / n_kv_head
// query heads a kv head: the largest divisor of gqa within kAttnMaxGroup
// and Group * head_dim <= kAttnMaxGroupElems.
LANEC_HOST_DEVICE constexpr int attention_heads_per_block(int gqa, int head_dim) {
  for (int g = kAttnMaxGroup; g > 1; --g)
    if (gqa % g == 0 && g * head_dim <= kAttnMaxGroupElems) return g;
  return 1;
}
// argmax.cuh: threads a block, and the logits a block should at least get
// before another block pays off (one float4 a thread).
constexpr int kArgmaxThreads = 256;
constexpr int kArgmaxMinPerBlock = kArgmaxThreads * 4;

// gemv_staged.cuh: 8 warps a block; k a multiple of 256, so that each row's
// f16 scales (k / 16 bytes) fill whole 16-byte bulk copies.
constexpr int kGemvStagedWarps = 8;
constexpr int kGemvStagedKMultiple = 256;
// Shared memory a staged block keeps beside the rows (its mbarrier and slice sums).
constexpr int kGemvStagedStaticSmem = 1024;
// Rows a staged block takes (split warps a group of rows_per_warp rows), and
// the dynamic shared memory they fill: their int8 words, then their f16 scales.
LANEC_HOST_DEVICE constexpr int gemv_staged_rows_a_block(int split, int rows_per_warp) {
  return kGemvStagedWarps / split * rows_per_warp;
}
LANEC_HOST_DEVICE constexpr long long gemv_staged_smem_bytes(int k, int split, int rows_per_warp) {
  return static_cast<long long>(gemv_staged_rows_a_block(split, rows_per_warp)) * (k + k / 32 * 2);
}

// attention.cuh: a split takes at least this many keys (the planner sizes
// n_split with it; -DLANEC_ATTN_MIN_KEYS is a kernel measurement switch).
#ifndef LANEC_ATTN_MIN_KEYS
#define LANEC_ATTN_MIN_KEYS 16
#endif
constexpr int kAttnMinKeysPerSplit = LANEC_ATTN_MIN_KEYS;

// Splits the attention kernel uses for `len` keys: no more than n_split and
// at least kAttnMinKeysPerSplit keys a split (the last may have fewer than
// that only when len is short of it: one split).
LANEC_HOST_DEVICE constexpr int attention_effective_splits(int len, int n_split) {
  const int by_keys = (len + kAttnMinKeysPerSplit - 1) / kAttnMinKeysPerSplit;
  const int splits = n_split < by_keys ? n_split : by_keys;
  return splits > 1 ? splits : 1;
}

// attention.cuh's cluster merge: the splits of a head group launch as
// clusters of 8 blocks, for blocks of at most 4 query heads (the planner
// rounds their split count up to whole clusters).
constexpr int kAttnClusterSplits = 8;
constexpr int kAttnClusterMaxGroup = 4;

// attention_tc.cuh: the tensor-core key loop of the long-context launches,
// for blocks of kAttnTcMinGroup..kAttnClusterMaxGroup query heads over an
// f16 cache. Its queries' fragments take shared memory: a 16-byte word for
// each lane, 32-element chunk of head_dim and f16 part (high and low).
constexpr int kAttnTcMinGroup = 4;
LANEC_HOST_DEVICE constexpr bool attention_tc_group(int group) {
  return group >= kAttnTcMinGroup && group <= kAttnClusterMaxGroup;
}
LANEC_HOST_DEVICE constexpr int attention_tc_query_bytes(int head_dim) { return 2 * (head_dim / 32) * 32 * 16; }

// The first length at which an attention launch of n_split splits has more
// than one cluster of them in use, so that its clusters' partials meet
// through the workspace (or the merge launch); 0 where that never happens.
LANEC_HOST_DEVICE constexpr int attention_clusters_from(int n_split) {
  return n_split > kAttnClusterSplits ? kAttnClusterSplits * kAttnMinKeysPerSplit + 1 : 0;
}

// Cluster blocks that merge a group of `elems` = Group * head_dim outputs:
// the most, up to 8, whose equal shares are whole int8 blocks (32 elements,
// a warp) lying within one head or covering whole heads.
LANEC_HOST_DEVICE constexpr int attention_merge_owners(int elems, int head_dim) {
  for (int owners = kAttnClusterSplits; owners > 1; --owners) {
    if (elems % (owners * 32) != 0) continue;
    const int share = elems / owners;
    if (share % head_dim == 0 || head_dim % share == 0) return owners;
  }
  return 1;
}

}  // namespace lanec::kernels
