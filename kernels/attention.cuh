// Decode attention of one query token over the KV cache (kv_cache.cuh layout)
// with grouped-query heads: query head h reads kv head h / (n_head/n_kv_head).
//   out_h = sum_t softmax_t(scale * q_h . k_t) v_t,  t in [0, len), len = min(pos+1, n_ctx)
// One block per (group of Group query heads sharing a kv head, split): the
// block reads each K and V row of its keys once and scores it against all
// Group queries. Split-K over the context (flash-decoding): n_split is a
// maximum; the kernel uses eff = min(n_split, ceil(len / kAttnMinKeysPerSplit))
// splits for the length it reads on the device (blocks of higher splits exit
// at once), split s covering keys [s*len/eff, (s+1)*len/eff). Each split keeps
// a running max m, sum of exponentials l and unnormalized accumulator a
// (online softmax). With eff == 1 the block writes the normalized output
// itself. Otherwise each split block writes its partials (m, l, a per query
// head) to the workspace and increments its group's counter; the last one to
// arrive merges the partials with weights exp(m_s - M), writes the output and
// sets the counter back to zero (the program zero-fills its buffers once, at
// allocation, so every launch and graph replay starts from zero). On sm_90,
// for blocks of 1-4 query heads, the splits launch as clusters of 8 and a
// launch with 2..8 splits merges in the cluster's shared memory instead
// (attention_cluster_kernel, below); with more, the clusters meet through the
// workspace, or (merge_launch, the emitted program's long-context step) in
// attention_merge_kernel, which launch_attention then runs. Those long-context
// launches of blocks of 4 query heads over an f16 cache score and weigh their
// keys on tensor cores (attention_tc.cuh), their splits capped to one wave.
// len is read from the device so a captured graph replays for every step.
// Optionally (out_qs non-null) the output is also written in its int8 form
// (blocks.h layout, quantize_block_with_max; with out_lo the two-word form), for
// a GEMV that reads it.
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "common.cuh"
#include "limits.h"
#include "quantize.cuh"

namespace lanec::kernels {

struct AttentionParams {
  const float* q;         // [n_head, head_dim]
  const void* k_cache;    // [n_kv_head, n_ctx, head_dim] f32 or f16
  const void* v_cache;    // same layout as k_cache
  float* out;             // [n_head, head_dim]; may be nullptr when out_qs is set
  float* part_acc;        // workspace [n_head, n_split, head_dim] (n_split > 1 only)
  float* part_ml;         // workspace [n_head, n_split, 2]: running max, sum (n_split > 1 only)
  int* done;              // workspace [n_head * 8]: split blocks finished, at the group's first head
                          // (the cluster merge: 8 a group, one a share); zero between launches
                          // (n_split > 1 only)
  int8_t* out_qs;         // optional int8 form of out: [n_head * head_dim]
  float* out_d;           // its scales, [n_head * head_dim / 32]
  int8_t* out_lo;         // its low words (two-word form), or nullptr (one word)
  const int* pos;         // device int32: position of this token; len = min(pos + 1, n_ctx)
  float scale;            // score scale, normally 1/sqrt(head_dim)
  int n_head;
  int n_kv_head;          // divides n_head
  int n_ctx;              // cache capacity (positions)
  int n_split;            // most context splits (grid.y), 1..kAttnMaxSplits
  int merge_launch;       // cluster merge with several clusters in use: 1 leaves the clusters' partials in
                          // the workspace for attention_merge_kernel, which launch_attention runs next
                          // (long-context steps); 0 merges them in the last cluster to finish
};

// Thread mapping: block (head group c, split s) of kAttnWarps warps; the
// group is query heads [c*Group, (c+1)*Group). Warp w takes keys
// t0 + Keys*w + [0, Keys), then jumps by kAttnWarps*Keys; lane l holds the
// q and accumulator elements l + 32j (j < HeadDim/32) of every query head of
// the group, so each key row and value row is one coalesced warp-wide read
// that serves all Group heads. Per key and head: one shuffle reduction for
// the score (Keys*Group of them in flight), then the online-softmax update in
// registers. Warps merge through shared memory; the output writer maps thread
// e to element e of the group's Group*HeadDim outputs (a warp = one int8 block).
// kAttnWarps, kAttnMaxSplits, kAttnMaxGroup(Elems) and
// attention_heads_per_block are in limits.h (the planner sizes with them).
constexpr int kAttnThreads = kAttnWarps * kWarpSize;
// Keys a split takes at least (kAttnMinKeysPerSplit, limits.h): a block's 4
// warps score 4 keys each per iteration (2 with 4+ heads a block), so 16
// keys are one or two dependent rounds of cache loads; more keys a split
// serialize short contexts (with 64, Qwen3-0.6B's 8 head groups at a
// 100-token context run as 16 blocks on 132 SMs, each walking 64 keys),
// fewer cost more merge work than they save.

// Measurement switch (bench/variants.sh with VARIANTS_DEPTH=4096):
// LANEC_ATTN_KEYS, keys a warp scores per iteration with 1-3 heads a block
// (4; 8 measured 1 % slower at d4096, docs/performance.md).
#ifndef LANEC_ATTN_KEYS
#define LANEC_ATTN_KEYS 4
#endif
// When a warp loads its keys' cache rows (LANEC_ATTN_LOADS):
//   2 (default): the next iteration's rows before this one's are scored,
//     kept raw (f16 runs take half the registers of their floats), so two
//     iterations of rows are in flight a warp (96 registers a thread at
//     head_dim 128);
//   1: all rows of an iteration's keys before any is scored (96 registers);
//   0: each key's K and V rows just before the key is scored (72-80).
// Only the loads move; the arithmetic and its order are the same. Measured
// on Qwen3-0.6B against 0: +2.3 % at an empty context and +5.5 % at 4k
// (1: +2.7 % and +4.6 %; docs/performance.md).
#ifndef LANEC_ATTN_LOADS
#define LANEC_ATTN_LOADS 2
#endif
constexpr int kAttnLoads = LANEC_ATTN_LOADS;
static_assert(kAttnLoads >= 0 && kAttnLoads <= 2, "LANEC_ATTN_LOADS is 0, 1 or 2");
// Whether a warp's first keys' rows load before pdl_wait() (LANEC_ATTN_EARLY,
// with LANEC_ATTN_LOADS=2). The position and every cache row but row *pos
// were written before the launch before this one began: the previous step's
// argmax (or the host) sets the position, a step writes only row *pos (rope
// or the cache write, the launch just before), and a launch starts only once
// every block of the one before it has triggered (after its wait, or at its
// start with early_trigger, when the launch two back may still run). So those loads
// overlap the previous launch, and row *pos loads after the wait. At short
// contexts that is all of a split's rows. Measured against loading after the
// wait: +3.9 % on Qwen3-0.6B, +1.2 % on 8B, +1.9 % on 0.6B at 4k context
// (docs/performance.md). The callers' contract (verify_schedule's
// early_read_clash): no launch that may still run when attention starts
// writes the position or any cache row but row *pos.
// Left to itself, ptxas puts the CUDA-core key loop's row loads (the
// short-context kernels) after the wait; pin_before_wait keeps them before
// it (bench/wait_sass.sh shows it; +0.1-0.4 %, docs/performance.md). The
// tensor-core loop keeps its rows before the wait unpinned.
#ifndef LANEC_ATTN_EARLY
#define LANEC_ATTN_EARLY 1
#endif
constexpr bool kAttnEarly = LANEC_ATTN_EARLY != 0 && kAttnLoads == 2;
// Scores in base 2 (LANEC_ATTN_EXP2, on by default: +4.2 % on Qwen3-8B and
// +5.0 % on Qwen3-0.6B at a 4k context with the next switch, each about half,
// docs/performance.md). The queries are scaled
// by scale * log2(e), so every exponential of the softmax and the merges is
// exp2f of a difference (one MUFU.EX2 and a range fix-up), where expf takes
// about eight instructions; the running maxima m of the partials are in
// base 2 too, and every reader of them here uses attn_exp.
#ifndef LANEC_ATTN_EXP2
#define LANEC_ATTN_EXP2 1
#endif
constexpr float kAttnScoreBase = LANEC_ATTN_EXP2 ? 1.4426950408889634f : 1.0f;  // log2(e) or 1
__device__ __forceinline__ float attn_exp(float x) {
  if constexpr (LANEC_ATTN_EXP2) {
    return exp2f(x);
  } else {
    return expf(x);
  }
}
// A warp's iterations whose keys all lie below the split's end take a form
// with no per-key checks (LANEC_ATTN_FULL_ITERATIONS, on by default; the same
// arithmetic; -DLANEC_ATTN_FULL_ITERATIONS=0 checks every key).
#ifndef LANEC_ATTN_FULL_ITERATIONS
#define LANEC_ATTN_FULL_ITERATIONS 1
#endif

// How K and V rows load (common.cuh StreamKind). A block reads each row of
// its split once, so the rows need no L1 lines: not through L1 by default
// (+0.5 % on Qwen3-0.6B, +0.6 % at 4k context, docs/performance.md).
#ifndef LANEC_ATTN_STREAM
#define LANEC_ATTN_STREAM 1
#endif

// The scores' sums over the warp, every lane getting all of them. Where
// their count is a power of two (LANEC_ATTN_SUM_EACH, on by default) in one
// exchange of halves (warp_sum_each: 17 shuffles for 8 scores, where 8
// warp_sums take 40), else one warp_sum each.
#ifndef LANEC_ATTN_SUM_EACH
#define LANEC_ATTN_SUM_EACH 1
#endif
template <int Keys, int Group>
__device__ __forceinline__ void reduce_scores(float (&s)[Keys][Group]) {
  constexpr int kN = Keys * Group;
  float v[kN];  // the scores as one array (registers: the copies fold away)
#pragma unroll
  for (int i = 0; i < kN; ++i) v[i] = s[i / Group][i % Group];
  if constexpr (LANEC_ATTN_SUM_EACH && (kN & (kN - 1)) == 0) {
    warp_sum_each(v);
  } else {
#pragma unroll
    for (int i = 0; i < kN; ++i) v[i] = warp_sum(v[i]);
  }
#pragma unroll
  for (int i = 0; i < kN; ++i) s[i / Group][i % Group] = v[i];
}

// Cluster merge (sm_90+): the splits of a head group launch as thread-block
// clusters of kAttnClusterSplits, and where a launch uses 2..8 splits they
// merge in the cluster's shared memory instead of through the workspace, a
// fence and the counter. Up to 8 blocks of the cluster (the owners) each own
// a share of the group's output elements; every split stores each element's
// partial into its owner's shared memory, one cluster barrier, and each owner
// merges and stores its share from its own shared memory. Only for blocks of
// at most kAttnClusterMaxGroup query heads and an n_split that is a multiple
// of 8 (kAttnClusterSplits, kAttnClusterMaxGroup and attention_merge_owners
// are in limits.h, shared with the planner). Measured against the workspace
// merge: +6.8 % on Qwen3-0.6B and +4.1 % on 1.7B with split 0 reading the
// others' partials (two barriers); the spread push form +4.0 % and +2.4 %
// more, and with 4 heads a block on Qwen3-8B +3.9 %, where the split-0 form
// lost 3.2 % (docs/performance.md).
// -DLANEC_ATTN_CLUSTER=0 turns it off.
#ifndef LANEC_ATTN_CLUSTER
#define LANEC_ATTN_CLUSTER 1
#endif
// Measurement switch: LANEC_ATTN_CLUSTER_LEVELS=0 merges more than 8 used
// splits through the workspace alone (every split's partials, the last
// block reading them all), not first within each cluster.
#ifndef LANEC_ATTN_CLUSTER_LEVELS
#define LANEC_ATTN_CLUSTER_LEVELS 1
#endif
constexpr bool kAttnClusterLevels = LANEC_ATTN_CLUSTER_LEVELS != 0;

template <typename T>
__device__ __forceinline__ float load_cache(const T* p, size_t i) {
  if constexpr (sizeof(T) == 4) {
    return p[i];
  } else {
    return __half2float(p[i]);
  }
}

// Element j of lane `lane`'s share of a head row (P = HeadDim / 32 a lane):
// a contiguous run l P + j, so the lane loads it with vector loads (strided
// elements l + 32 j, one load each, measured 6 % slower at d4096).
template <int HeadDim>
__device__ __forceinline__ int attention_elem(int lane, int j) {
  return lane * (HeadDim / kWarpSize) + j;
}

// This lane's run of N elements of a row as loaded, in the widest loads its
// size and alignment allow (16, 8 or 4 bytes: a run starts at lane * N
// elements of a row, so its byte offset is a multiple of its size), else one
// element at a time; cache_run_values converts it. Kept raw, a run of f16
// takes half the registers of its floats, so loads of the next keys can be
// in flight while the current ones are scored (LANEC_ATTN_LOADS=2).
template <typename T, int N>
struct CacheRun {
  static constexpr int kBytes = N * static_cast<int>(sizeof(T));
  static constexpr int kVec = kBytes % 16 == 0 ? 16 : kBytes % 8 == 0 ? 8 : kBytes % 4 == 0 ? 4 : 0;
  using Word = std::conditional_t<kVec == 16, int4, std::conditional_t<kVec == 8, int2, int>>;
  static constexpr int kWords = kVec == 0 ? 1 : kBytes / kVec;
  Word words[kWords];
  T elems[kVec == 0 ? N : 1];  // the element-wise form (kVec == 0)
};

template <typename T, int N>
__device__ __forceinline__ void load_cache_raw(const T* row, int lane, CacheRun<T, N>& r) {
  using Run = CacheRun<T, N>;
  const T* run = row + lane * N;
  if constexpr (Run::kVec == 0) {
#pragma unroll
    for (int j = 0; j < N; ++j) r.elems[j] = run[j];
  } else {
#pragma unroll
    for (int c = 0; c < Run::kWords; ++c) r.words[c] = load_streamed<LANEC_ATTN_STREAM>(reinterpret_cast<const typename Run::Word*>(run) + c);
  }
}

template <typename T, int N>
__device__ __forceinline__ void cache_run_values(const CacheRun<T, N>& r, float (&out)[N]) {
  using Run = CacheRun<T, N>;
  if constexpr (Run::kVec == 0) {
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = load_cache(r.elems, static_cast<size_t>(j));
  } else {
    T raw[N];
    memcpy(raw, r.words, Run::kBytes);
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = load_cache(raw, static_cast<size_t>(j));
  }
}

// ptxas may schedule a load after griddepcontrol.wait (a later load is
// always a legal one), and in the CUDA-core key loop it put the early rows'
// loads behind the wait, which undid LANEC_ATTN_EARLY (bench/wait_sass.sh
// shows where each kernel's loads sit). A shared-memory store of their bits
// under a condition that never holds (`never`: a negative position) has to
// stay before the wait, and so do the loads it reads; the branch around it
// leaves the warp free to reach the wait with the loads in flight.
template <typename Run, int Keys>
__device__ __forceinline__ void pin_before_wait(const Run (&k)[Keys], const Run (&v)[Keys], bool never) {
  if constexpr (Run::kVec != 0) {
    constexpr int kInts = static_cast<int>(sizeof(typename Run::Word) / sizeof(int));
    __shared__ volatile int sm_pin;  // volatile: never read, yet not a dead store
    if (never) {
      int bits = 0;
#pragma unroll
      for (int i = 0; i < Keys; ++i)
#pragma unroll
        for (int c = 0; c < Run::kWords; ++c)
#pragma unroll
          for (int j = 0; j < kInts; ++j)
            bits ^= reinterpret_cast<const int*>(&k[i].words[c])[j] ^ reinterpret_cast<const int*>(&v[i].words[c])[j];
      sm_pin = bits;
    }
  }
}

// The K and V runs of keys [t, t + Keys) below t1 (rows of HeadDim
// elements) that this lane holds.
template <typename T, int HeadDim, int Keys>
__device__ __forceinline__ void load_key_rows(const T* k_head, const T* v_head, int t, int t1, int lane,
                                              CacheRun<T, HeadDim / kWarpSize> (&k_run)[Keys],
                                              CacheRun<T, HeadDim / kWarpSize> (&v_run)[Keys]) {
#pragma unroll
  for (int i = 0; i < Keys; ++i) {
    if (t + i < t1) {
      const size_t row = static_cast<size_t>(t + i) * HeadDim;
      load_cache_raw(k_head + row, lane, k_run[i]);
      load_cache_raw(v_head + row, lane, v_run[i]);  // before the scores are known
    }
  }
}

// Output elements a thread holds when the block's threads take a group's
// `elems` outputs as thread e: e, e + kAttnThreads, ...
__host__ __device__ constexpr int attention_outputs_per_thread(int elems) { return (elems + kAttnThreads - 1) / kAttnThreads; }

// out[k] = value(e) for this thread's elements e = threadIdx.x + k *
// kAttnThreads below n (0 past it): the output mapping of the stores and merges.
template <int N, typename Value>
__device__ __forceinline__ void attention_each_output(int n, float (&out)[N], Value value) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int e = threadIdx.x + k * kAttnThreads;
    out[k] = e < n ? value(e) : 0.0f;
  }
}

// Writes a thread's N output elements, element k at out index base + e_k with
// e_k = threadIdx.x + k * kAttnThreads (those below n_elems): the f32 form
// and/or the int8 form, whose 32-element blocks are whole warps, their max
// reductions run side by side (the whole block calls it).
template <int N>
__device__ __forceinline__ void attention_store_all(const AttentionParams& p, int base, int n_elems,
                                                    const float (&v)[N]) {
  const int lane = threadIdx.x % kWarpSize;
  float amax[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int e = threadIdx.x + k * kAttnThreads;
    if (p.out != nullptr && e < n_elems) p.out[base + e] = v[k];
    amax[k] = fabsf(v[k]);
  }
  if (p.out_qs == nullptr) return;
  warp_max_each(amax);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int i = base + threadIdx.x + k * kAttnThreads;
    if (threadIdx.x + k * kAttnThreads < n_elems)  // whole warps (n_elems is a multiple of 32)
      quantize_block_with_max(v[k], amax[k], p.out_qs, p.out_d, p.out_lo, i / kQ8Block, lane);
  }
}

// Output elements each merging block of the cluster owns.
template <int HeadDim, int Group>
__host__ __device__ constexpr int attention_merge_share() {
  return Group * HeadDim / attention_merge_owners(Group * HeadDim, HeadDim);
}

// Whether group element e starts a head's part of an owner's share: where
// the head's m and l are stored for that owner.
template <int HeadDim, int Group>
__device__ __forceinline__ bool starts_share_head(int e) {
  constexpr int kShare = attention_merge_share<HeadDim, Group>();
  return e % (kShare < HeadDim ? kShare : HeadDim) == 0;
}

// Split `split` stores its partial a of group element e into the slots of
// the element's owner, and at the start of each head's part of a share the
// head's m and l.
template <int HeadDim, int Group>
__device__ __forceinline__ void cluster_push_partial(float* part, float* part_ml, int split, int e, float a,
                                                     float m_all, float l_all) {
  constexpr int kShare = attention_merge_share<HeadDim, Group>();
  const int owner = e / kShare, slot = split % kAttnClusterSplits;
  *cluster_shared(part, slot * kShare + e % kShare, owner) = a;
  if (starts_share_head<HeadDim, Group>(e)) {
    float* ml = cluster_shared(part_ml, (slot * Group + e / HeadDim) * 2, owner);
    ml[0] = m_all;
    ml[1] = l_all;
  }
}

// One split's (or cluster's) partial of an output element: running max m,
// sum of exponentials l, unnormalized accumulator a.
struct AttnPartial {
  float m, l, a;
};

// The partials k < n (at most 8) combined with weights exp(m_k - M), every
// load in flight before any use; the result is again a partial (m = M).
template <typename Load>
__device__ __forceinline__ AttnPartial merge_partials(int n, Load load) {
  AttnPartial part[kAttnClusterSplits];
  float m_all = -INFINITY;
#pragma unroll
  for (int k = 0; k < kAttnClusterSplits; ++k) {
    part[k] = k < n ? load(k) : AttnPartial{-INFINITY, 0.0f, 0.0f};
    m_all = fmaxf(m_all, part[k].m);
  }
  AttnPartial r{m_all, 0.0f, 0.0f};
#pragma unroll
  for (int k = 0; k < kAttnClusterSplits; ++k) {
    const float w = k < n ? attn_exp(part[k].m - m_all) : 0.0f;  // splits are never empty: m finite
    r.l += w * part[k].l;
    r.a += w * part[k].a;
  }
  return r;
}

// Merges the `clusters` partials in the workspace of the share of group
// elements [first, first + kShare) of the head group starting at head h0
// and stores that share of the output. The whole block calls it. __ldcg
// reads L2, never a stale line of this SM's L1.
template <int HeadDim, int Group>
__device__ __forceinline__ void merge_cluster_partials(const AttentionParams& p, int h0, int first, int clusters) {
  constexpr int kShare = attention_merge_share<HeadDim, Group>();
  float out[attention_outputs_per_thread(kShare)];
  attention_each_output(kShare, out, [&](int i) {
    const int e = first + i, h = h0 + e / HeadDim, d = e % HeadDim;
    const float* acc_h = p.part_acc + static_cast<size_t>(h) * p.n_split * HeadDim + d;
    const float* ml_h = p.part_ml + h * p.n_split * 2;
    const AttnPartial r = merge_partials(clusters, [&](int c) {
      return AttnPartial{__ldcg(ml_h + 2 * c), __ldcg(ml_h + 2 * c + 1), __ldcg(acc_h + static_cast<size_t>(c) * HeadDim)};
    });
    return r.a / r.l;
  });
  attention_store_all(p, h0 * HeadDim + first, kShare, out);
}

// After one cluster barrier (every used split of the cluster has pushed its
// partials: release / acquire) each owner merges its share from its own
// shared memory; no block reads another's shared memory after the barrier,
// so none waits for the others to leave. With one cluster in use the owners
// store the output. With several (more than 8 splits), each owner writes its
// cluster's partial of its share to the workspace as split `cluster`, counts
// itself on its share's counter, and the last of the clusters' owners of
// that share merges their at most 8 partials and stores the share: the
// workspace path's fence and counter, with 8 partials where it had up to 64,
// spread over 8 blocks. Every block of a cluster with a used split calls it.
template <int HeadDim, int Group>
__device__ __forceinline__ void cluster_merge_splits(const AttentionParams& p, int eff, const float* part,
                                                     const float* part_ml) {
  constexpr int kShare = attention_merge_share<HeadDim, Group>();
  cluster_sync();
  const int rank = static_cast<int>(blockIdx.y) % kAttnClusterSplits;
  if (rank >= Group * HeadDim / kShare) return;
  const int cluster = static_cast<int>(blockIdx.y) / kAttnClusterSplits;
  const int clusters = (eff + kAttnClusterSplits - 1) / kAttnClusterSplits;
  const int used = min(kAttnClusterSplits, eff - cluster * kAttnClusterSplits);
  const int first = rank * kShare;  // this owner's share of the group's elements
  const int h0 = static_cast<int>(blockIdx.x) * Group;
  auto cluster_partial = [&](int i) {
    const int g = (first + i) / HeadDim;
    return merge_partials(used, [&](int s) {
      return AttnPartial{part_ml[(s * Group + g) * 2], part_ml[(s * Group + g) * 2 + 1], part[s * kShare + i]};
    });
  };
  float out[attention_outputs_per_thread(kShare)];
  if (clusters == 1) {
    attention_each_output(kShare, out, [&](int i) {
      const AttnPartial r = cluster_partial(i);
      return r.a / r.l;
    });
    attention_store_all(p, h0 * HeadDim + first, kShare, out);
    return;
  }
  for (int i = threadIdx.x; i < kShare; i += kAttnThreads) {
    const int e = first + i, h = h0 + e / HeadDim, d = e % HeadDim;
    const AttnPartial r = cluster_partial(i);
    p.part_acc[(static_cast<size_t>(h) * p.n_split + cluster) * HeadDim + d] = r.a;
    if (starts_share_head<HeadDim, Group>(e)) {  // every owner of the head writes the same m, l
      p.part_ml[(h * p.n_split + cluster) * 2 + 0] = r.m;
      p.part_ml[(h * p.n_split + cluster) * 2 + 1] = r.l;
    }
  }
  if (p.merge_launch) return;  // attention_merge_kernel merges the clusters' partials
  int* counter = p.done + h0 * kAttnClusterSplits + rank;
  if (!arrived_last(counter, clusters)) return;
  merge_cluster_partials<HeadDim, Group>(p, h0, first, clusters);
  if (threadIdx.x == 0) *counter = 0;  // ready for the next launch (graph replay)
}

// The tensor-core key loop (attention_tc.cuh, LANEC_ATTN_TC, on by default)
// serves the long-context launches (merge_launch) of blocks of at least
// kAttnTcMinGroup query heads over an f16 cache: there the scalar loop is
// bound by its instructions (4 heads a block on Qwen3-8B at 4k context).
// Its kernel holds up to 128 registers a thread (123 at head_dim 128), 4
// blocks an SM, so launch_attention caps its splits to what one wave of
// clusters holds. Measured on Qwen3-8B
// at 4k context: +2.9 % (docs/performance.md); with 2 heads a block it lost
// 1.8 % (Qwen3-0.6B), which keeps the scalar loop.
#ifndef LANEC_ATTN_TC
#define LANEC_ATTN_TC 1
#endif
constexpr int kAttnTcMinBlocks = 4;  // (kAttnTcMinGroup is in limits.h)

}  // namespace lanec::kernels

#include "attention_tc.cuh"

namespace lanec::kernels {

template <int HeadDim, CachePrecision C, int Group, bool Cluster, bool Tc>
__device__ __forceinline__ void attention_body(const AttentionParams& p) {
  // Before any global memory access (see common.cuh); with kAttnEarly, the
  // position and the rows of earlier positions load first.
  if constexpr (!kAttnEarly) pdl_wait();
  static_assert(HeadDim % kWarpSize == 0 && HeadDim <= kAttnMaxHeadDim,
                "head_dim must be a multiple of 32 and at most 256 (each lane holds head_dim/32 elements)");
  static_assert(Group >= 1 && Group <= kAttnMaxGroup && Group * HeadDim <= kAttnMaxGroupElems,
                "a block serves 1..8 query heads of at most 1024 elements together");
  using T = std::conditional_t<C == CachePrecision::f32, float, __half>;
  // The tensor-core key loop (attention_tc.cuh) where it is switched on and
  // the device code has mma (sm_80+).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  constexpr bool kArchTc = false;
#else
  constexpr bool kArchTc = true;
#endif
  constexpr bool kTc = Tc && kArchTc && C == CachePrecision::f16;
  constexpr int kPer = HeadDim / kWarpSize;
  constexpr int kKeys = Group >= 4 ? 2 : LANEC_ATTN_KEYS;  // keys a warp scores per iteration (registers: kKeys*Group scores)
  constexpr int kElems = Group * HeadDim;
  __shared__ float sm_ml[kAttnWarps][Group][2];
  __shared__ float sm_acc[kAttnWarps][kElems];
  __shared__ float sm_w[Group][kAttnMaxSplits];  // last block: split weights, then their sums
  __shared__ float sm_l[Group][kAttnMaxSplits];
  // Cluster merge: the partials of this block's share, a slot for each split.
  constexpr int kShare = attention_merge_share<HeadDim, Group>();
  static_assert(!Cluster || kAttnClusterSplits * kShare <= kAttnMaxGroupElems, "cluster slots fit shared memory");
  __shared__ float sm_part[Cluster ? kAttnClusterSplits * kShare : 1];
  __shared__ float sm_part_ml[Cluster ? kAttnClusterSplits * Group * 2 : 1];

  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int h0 = blockIdx.x * Group;  // first query head of the group
  const int split = blockIdx.y;
  const int kv_head = h0 / (p.n_head / p.n_kv_head);
  // The queries load alongside the position, not after it: two L2 round trips
  // become one (with kAttnEarly the position loads before the wait, the
  // queries after it).
  float q[Group][kPer], acc[Group][kPer], m[Group], l[Group];
  auto load_queries_and_clear = [&] {  // the queries, and an empty softmax state
#pragma unroll
    for (int g = 0; g < Group; ++g) {
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        q[g][j] = p.q[(h0 + g) * HeadDim + attention_elem<HeadDim>(lane, j)] * (p.scale * kAttnScoreBase);
        acc[g][j] = 0.0f;
      }
      m[g] = -INFINITY;
      l[g] = 0.0f;
    }
  };
  if constexpr (!kAttnEarly) load_queries_and_clear();
  const int pos = *p.pos;
  const int len = min(pos + 1, p.n_ctx);
  const int eff = attention_effective_splits(len, p.n_split);
  const bool cluster_merge = Cluster && eff > 1 && (kAttnClusterLevels || eff <= kAttnClusterSplits);
  // Whether this block's cluster has used splits, and so merges: the same for
  // all its blocks (they read the same length).
  const bool merging_cluster = cluster_merge && split / kAttnClusterSplits * kAttnClusterSplits < eff;
  // Distributed shared memory may be written only once its block has started:
  // every block of a merging cluster arrives here first and waits before its
  // first write to another block's shared memory (by then all have arrived,
  // so the wait costs nothing on the chain), one barrier phase before the merge's.
  if (merging_cluster) cluster_arrive_relaxed();
  if (split >= eff) {  // short context: this split has no keys (uniform over the block)
    if constexpr (kAttnEarly) pdl_wait();
    // An idle split of the merging cluster meets its barriers and merges its share.
    if (merging_cluster) {
      cluster_wait();
      cluster_merge_splits<HeadDim, Group>(p, eff, sm_part, sm_part_ml);
    }
    return;
  }
  const int t0 = static_cast<int>(static_cast<long long>(split) * len / eff);
  const int t_end = static_cast<int>(static_cast<long long>(split + 1) * len / eff);
  // Measurement only (LANEC_ATTN_MERGE_ONLY; wrong outputs): every split
  // scores just its first keys, one iteration a warp, and merges as usual, so
  // a chain profile at a long context (bench/chain_profile.sh with
  // CHAIN_DEPTH) times the launch and its split merges without the key loop.
#ifdef LANEC_ATTN_MERGE_ONLY
  const int t1 = min(t_end, t0 + kAttnWarps * kKeys);
#else
  const int t1 = t_end;
#endif
  const T* k_head = static_cast<const T*>(p.k_cache) + static_cast<size_t>(kv_head) * p.n_ctx * HeadDim;
  const T* v_head = static_cast<const T*>(p.v_cache) + static_cast<size_t>(kv_head) * p.n_ctx * HeadDim;
  if constexpr (kTc) {
    attention_tc_keys<HeadDim, Group, kAttnEarly>(p, k_head, v_head, h0, t0, t1, pos, sm_ml, sm_acc);
  } else {
    // Warp w scores kKeys consecutive keys per iteration: their row loads and
    // shuffle reductions are independent, so they overlap instead of forming
    // one long latency chain per key.
    // When the rows load: kAttnLoads (above).
    constexpr int kStride = kAttnWarps * kKeys;
    using Run = CacheRun<T, kPer>;
    Run k_next[kKeys], v_next[kKeys];
    if constexpr (kAttnLoads == 2)
      load_key_rows<T, HeadDim, kKeys>(k_head, v_head, t0 + warp * kKeys, kAttnEarly ? min(t1, pos) : t1, lane,
                                       k_next, v_next);
    if constexpr (kAttnEarly) {
      pin_before_wait(k_next, v_next, pos < 0);
      pdl_wait();
      const int first = t0 + warp * kKeys;
#pragma unroll
      for (int i = 0; i < kKeys; ++i) {  // row *pos, written by the launch just before
        if (first + i == pos && pos < t1) {
          const size_t row = static_cast<size_t>(pos) * HeadDim;
          load_cache_raw(k_head + row, lane, k_next[i]);
          load_cache_raw(v_head + row, lane, v_next[i]);
        }
      }
      load_queries_and_clear();
    }
    for (int t = t0 + warp * kKeys; t < t1; t += kStride) {
      Run k_run[kKeys], v_run[kKeys];
      if constexpr (kAttnLoads == 2) {
#pragma unroll
        for (int i = 0; i < kKeys; ++i) {
          k_run[i] = k_next[i];
          v_run[i] = v_next[i];
        }
        load_key_rows<T, HeadDim, kKeys>(k_head, v_head, t + kStride, t1, lane, k_next, v_next);
      } else if constexpr (kAttnLoads == 1) {
        load_key_rows<T, HeadDim, kKeys>(k_head, v_head, t, t1, lane, k_run, v_run);
      }
      // The scoring and the softmax update of keys [t, t + kKeys); a full
      // iteration (all but a warp's last at most) checks no key against t1,
      // so its code has no branches between the keys' exponentials and sums.
      auto score_keys = [&](auto checked) {
        auto valid = [&](int i) { return !decltype(checked)::value || t + i < t1; };
        float s[kKeys][Group];
        float v[kKeys][kPer];
#pragma unroll
        for (int i = 0; i < kKeys; ++i) {
#pragma unroll
          for (int g = 0; g < Group; ++g) s[i][g] = 0.0f;
          if (valid(i)) {
            if constexpr (kAttnLoads == 0) {
              const size_t row = static_cast<size_t>(t + i) * HeadDim;
              load_cache_raw(k_head + row, lane, k_run[i]);
              load_cache_raw(v_head + row, lane, v_run[i]);
            }
            float k[kPer];
            cache_run_values(k_run[i], k);
            cache_run_values(v_run[i], v[i]);
#pragma unroll
            for (int j = 0; j < kPer; ++j) {
#pragma unroll
              for (int g = 0; g < Group; ++g) s[i][g] += q[g][j] * k[j];
            }
          }
        }
        reduce_scores(s);
#pragma unroll
        for (int g = 0; g < Group; ++g) {
          float m_new = m[g];
#pragma unroll
          for (int i = 0; i < kKeys; ++i)
            if (valid(i)) m_new = fmaxf(m_new, s[i][g]);
          const float correction = attn_exp(m[g] - m_new);  // 0 on the first keys (m = -inf)
          l[g] *= correction;
#pragma unroll
          for (int j = 0; j < kPer; ++j) acc[g][j] *= correction;
#pragma unroll
          for (int i = 0; i < kKeys; ++i) {
            if (!valid(i)) continue;
            const float weight = attn_exp(s[i][g] - m_new);
            l[g] += weight;
#pragma unroll
            for (int j = 0; j < kPer; ++j) acc[g][j] += weight * v[i][j];
          }
          m[g] = m_new;
        }
      };
      if (!LANEC_ATTN_FULL_ITERATIONS || t + kKeys > t1) {
        score_keys(std::true_type{});
      } else {
        score_keys(std::false_type{});
      }
    }

#pragma unroll
    for (int g = 0; g < Group; ++g) {
      if (lane == 0) {
        sm_ml[warp][g][0] = m[g];
        sm_ml[warp][g][1] = l[g];
      }
#pragma unroll
      for (int j = 0; j < kPer; ++j) sm_acc[warp][g * HeadDim + attention_elem<HeadDim>(lane, j)] = acc[g][j];
    }
  }
  __syncthreads();
  if (merging_cluster) cluster_wait();  // every block of the cluster has started: push

  // Thread e of the block now takes output element e (+ kAttnThreads ...) of
  // the group: head g = e / HeadDim, dimension d = e % HeadDim.
  float out[attention_outputs_per_thread(kElems)];
  attention_each_output(kElems, out, [&](int e) {
    const int g = e / HeadDim, d = e % HeadDim;
    float m_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kAttnWarps; ++w) m_all = fmaxf(m_all, sm_ml[w][g][0]);
    float a = 0.0f, l_all = 0.0f;
#pragma unroll
    for (int w = 0; w < kAttnWarps; ++w) {
      const float weight = sm_ml[w][g][0] == -INFINITY ? 0.0f : attn_exp(sm_ml[w][g][0] - m_all);
      l_all += weight * sm_ml[w][g][1];
      a += weight * sm_acc[w][e];
    }
    const int h = h0 + g;
    if (eff == 1) return a / l_all;
    if (cluster_merge) {
      cluster_push_partial<HeadDim, Group>(sm_part, sm_part_ml, split, e, a, m_all, l_all);
    } else {
      p.part_acc[(static_cast<size_t>(h) * p.n_split + split) * HeadDim + d] = a;
      if (d == 0) {
        p.part_ml[(h * p.n_split + split) * 2 + 0] = m_all;
        p.part_ml[(h * p.n_split + split) * 2 + 1] = l_all;
      }
    }
    return 0.0f;  // a partial: the merge writes the output
  });
  if (eff == 1) {
    attention_store_all(p, h0 * HeadDim, kElems, out);
    return;
  }
  if (cluster_merge) {
    cluster_merge_splits<HeadDim, Group>(p, eff, sm_part, sm_part_ml);
    return;
  }

  // The last split of the group to finish merges them all.
  if (!arrived_last(p.done + h0, eff)) return;

  // The last split merges: weights exp(m_s - M) per head and split (splits
  // are never empty here: eff <= len), then the weighted partial sums.
  // __ldcg reads L2, never a stale line of this SM's L1.
  for (int i = threadIdx.x; i < Group * eff; i += kAttnThreads) {
    const int g = i / eff, s = i % eff;
    sm_w[g][s] = __ldcg(p.part_ml + ((h0 + g) * p.n_split + s) * 2 + 0);
    sm_l[g][s] = __ldcg(p.part_ml + ((h0 + g) * p.n_split + s) * 2 + 1);
  }
  __syncthreads();
  if (threadIdx.x < Group) {
    const int g = threadIdx.x;
    float m_all = -INFINITY;
    for (int s = 0; s < eff; ++s) m_all = fmaxf(m_all, sm_w[g][s]);
    float den = 0.0f;
    for (int s = 0; s < eff; ++s) {
      const float w = sm_w[g][s] == -INFINITY ? 0.0f : attn_exp(sm_w[g][s] - m_all);
      sm_w[g][s] = w;
      den += w * sm_l[g][s];
    }
    sm_l[g][0] = den;  // each thread rewrites only its own head's row
  }
  __syncthreads();
  attention_each_output(kElems, out, [&](int e) {
    const int g = e / HeadDim, d = e % HeadDim;
    const int h = h0 + g;
    const float* acc_h = p.part_acc + static_cast<size_t>(h) * p.n_split * HeadDim + d;
    // kMergeLanes independent sums so that many partials are in flight at
    // once: a single chain waits one L2 round trip per split (measured: the
    // 0.6B step at a 4k context went from 1.62 to 1.38 ms; all 64 in flight
    // measured 30 % slower at d4096). Summed in a fixed order.
    constexpr int kMergeLanes = 8;
    float num[kMergeLanes] = {};
    int s = 0;
    for (; s + kMergeLanes <= eff; s += kMergeLanes) {
#pragma unroll
      for (int u = 0; u < kMergeLanes; ++u)
        num[u] += sm_w[g][s + u] * __ldcg(acc_h + static_cast<size_t>(s + u) * HeadDim);
    }
    for (; s < eff; ++s) num[0] += sm_w[g][s] * __ldcg(acc_h + static_cast<size_t>(s) * HeadDim);
    float total = 0.0f;
#pragma unroll
    for (int u = 0; u < kMergeLanes; ++u) total += num[u];
    return total / sm_l[g][0];
  });
  attention_store_all(p, h0 * HeadDim, kElems, out);
  if (threadIdx.x == 0) p.done[h0] = 0;  // ready for the next launch (graph replay)
}

template <int HeadDim, CachePrecision C, int Group>
__global__ void __launch_bounds__(kAttnThreads) attention_kernel(const __grid_constant__ AttentionParams p) {
  attention_body<HeadDim, C, Group, false, false>(p);
}

// Launched as clusters of (1, kAttnClusterSplits, 1) blocks; Tc: the
// tensor-core key loop.
template <int HeadDim, CachePrecision C, int Group, bool Tc>
__global__ void __launch_bounds__(kAttnThreads, Tc ? kAttnTcMinBlocks : 1)
    attention_cluster_kernel(const __grid_constant__ AttentionParams p) {
  attention_body<HeadDim, C, Group, true, Tc>(p);
}

// The clusters' merge as its own launch (p.merge_launch): block (c, rank)
// merges owner rank's share of head group c from the workspace, as the last
// cluster's owner would; a launch whose length kept to one cluster has its
// output already and exits. Instead of every cluster's owners counting on a
// counter (an acquire-release add after their stores) and the last reading
// the others' partials, the launch boundary orders the stores: one L2 round
// trip after the wait where the counter took three (docs/performance.md).
template <int HeadDim, int Group>
__global__ void __launch_bounds__(kAttnThreads) attention_merge_kernel(const __grid_constant__ AttentionParams p) {
  // The position was written two or more launches back (see kAttnEarly).
  const int len = min(*p.pos + 1, p.n_ctx);
  pdl_wait();
  const int eff = attention_effective_splits(len, p.n_split);
  const int clusters = (eff + kAttnClusterSplits - 1) / kAttnClusterSplits;
  if (clusters <= 1) return;
  constexpr int kShare = attention_merge_share<HeadDim, Group>();
  merge_cluster_partials<HeadDim, Group>(p, static_cast<int>(blockIdx.x) * Group, static_cast<int>(blockIdx.y) * kShare,
                                         clusters);
}

// Whether long-context launches of this kernel take the tensor-core loop.
template <CachePrecision C, int Group>
constexpr bool attention_tc_form() {
  return LANEC_ATTN_TC && C == CachePrecision::f16 && attention_tc_group(Group);
}

// The most splits (a multiple of the cluster) whose blocks, clusters of
// kAttnClusterSplits for each of grid.x head groups, the device holds at
// once in the tensor-core form (4 blocks an SM: 64 splits of Qwen3-8B's 8
// groups would need 64 clusters where the H200 holds 62, so a second wave
// would wait for the first; the planner's 56 fit). Asked of the occupancy calculator once;
// 0 if it cannot say (once a process: the programs run on one device).
template <int HeadDim, CachePrecision C, int Group>
int attention_tc_wave_splits(dim3 grid) {
  static const int clusters = max_active_clusters(attention_cluster_kernel<HeadDim, C, Group, true>, grid,
                                                  dim3(kAttnThreads), dim3(1, kAttnClusterSplits, 1));
  return static_cast<int>(clusters / grid.x) * kAttnClusterSplits;
}

// Group: query heads a block serves, attention_heads_per_block(n_head /
// n_kv_head, HeadDim) as the planner chooses it (any divisor of n_head /
// n_kv_head within the limits works).
// Measurement switch (bench/variants.sh with VARIANTS_DEPTH; not defined by
// default): -DLANEC_ATTN_MAX_SPLITS=N caps the planned splits at N (the
// workspaces, sized for the plan's n_split, then hold fewer partials).
template <int HeadDim, CachePrecision C, int Group>
cudaError_t launch_attention(const AttentionParams& p, cudaStream_t stream) {
#ifdef LANEC_ATTN_MAX_SPLITS
  static_assert(LANEC_ATTN_MAX_SPLITS >= 1, "at least one split");
  if (p.n_split > LANEC_ATTN_MAX_SPLITS) {
    AttentionParams capped = p;
    capped.n_split = LANEC_ATTN_MAX_SPLITS;
    return launch_attention<HeadDim, C, Group>(capped, stream);
  }
#endif
  if (p.n_head <= 0 || p.n_kv_head <= 0 || p.n_head % p.n_kv_head != 0 || p.n_ctx <= 0 || p.n_split < 1 ||
      p.n_split > kAttnMaxSplits)
    return invalid_launch();
  if ((p.n_head / p.n_kv_head) % Group != 0) return invalid_launch();
  if (p.out == nullptr && p.out_qs == nullptr) return invalid_launch();
  if ((p.out_qs == nullptr) != (p.out_d == nullptr)) return invalid_launch();
  if (p.n_split > 1 && (p.part_acc == nullptr || p.part_ml == nullptr || p.done == nullptr)) return invalid_launch();
  const dim3 grid(static_cast<unsigned>(p.n_head / Group), static_cast<unsigned>(p.n_split));
  if constexpr (LANEC_ATTN_CLUSTER && Group <= kAttnClusterMaxGroup) {
    if (p.n_split % kAttnClusterSplits == 0 && cluster_launches_enabled()) {
      // Several clusters only where n_split allows more than one (and the
      // levels are on); else nothing is left for a merge launch.
      const bool merge_launch = p.merge_launch && kAttnClusterLevels && p.n_split > kAttnClusterSplits;
      AttentionParams q = p;
      q.merge_launch = merge_launch ? 1 : 0;
      auto kernel = attention_cluster_kernel<HeadDim, C, Group, false>;
      if constexpr (attention_tc_form<C, Group>()) {
        const int wave = merge_launch ? attention_tc_wave_splits<HeadDim, C, Group>(grid) : 0;
        if (wave > kAttnClusterSplits) {  // else one cluster a group: nothing the merge launch would merge
          kernel = attention_cluster_kernel<HeadDim, C, Group, true>;
          q.n_split = std::min(q.n_split, wave);  // the workspaces, sized for n_split, hold fewer partials
        }
      }
      const dim3 used(grid.x, static_cast<unsigned>(q.n_split));
      const cudaError_t err = launch_kernel(kernel, used, kAttnThreads, 0, stream, q, dim3(1, kAttnClusterSplits, 1));
      if (err != cudaSuccess || !merge_launch) return err;
      const dim3 merge_grid(static_cast<unsigned>(p.n_head / Group),
                            static_cast<unsigned>(attention_merge_owners(Group * HeadDim, HeadDim)));
      return launch_kernel(attention_merge_kernel<HeadDim, Group>, merge_grid, kAttnThreads, 0, stream, q);
    }
  }
  // One kernel merges in place: merge_launch does not apply.
  AttentionParams q = p;
  q.merge_launch = 0;
  return launch_kernel(attention_kernel<HeadDim, C, Group>, grid, kAttnThreads, 0, stream, q);
}

}  // namespace lanec::kernels
