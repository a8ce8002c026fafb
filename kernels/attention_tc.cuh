// The attention's key loop on tensor cores (sm_80+, f16 cache; included by
// attention.cuh, which owns everything around the loop). A warp takes a
// tile of 16 consecutive keys (then tiles of 8) and, for all Group (<= 8)
// query heads of its block at once, computes
//   S^T = K Q^T  (mma m16n8k16: M = the tile's keys, N = the heads, K = dims)
//   acc^T += V^T P^T  (M = dims, N = the heads, K = the tile's keys)
// with the online softmax on the scores in between. It leaves the same
// per-warp state as the scalar loop (m, l and the unnormalized accumulator of
// every head, in sm_ml and sm_acc), so the merges after it are shared.
//
// Why: with 4 query heads a KV head (Qwen3-8B) the scalar loop is bound by
// its instructions at long contexts (about 70 a key and lane: the products,
// the shuffle reductions and the exponentials of every head); here a tile of
// 16 keys takes 16-32 mma and 32 transposes a warp.
//
// Layouts. Lane l = 4 r + c4 (r = l / 4, c4 = l % 4). A dot product does not
// depend on the order of its dimensions, so the K-dimension of the first mma
// is a permutation of the head dims chosen so that each lane loads its rows
// in 16-byte chunks: chunk j = 4 c + c4 of row r and of row r + 8 of the
// tile (c < HeadDim / 32), whose 4 words are the A fragments of k-steps
// (c, 0) and (c, 1). The queries load in the same permutation (B fragments:
// lane (r, c4) holds head r). The scores' C fragment (keys r, r + 8; heads
// 2 c4, 2 c4 + 1) transposed by movmatrix is the B fragment of P^T, and each
// V chunk word transposed is an A fragment of V^T, whose rows are dims in a
// known permutation that the final store undoes. A lane's accumulator holds
// the same two heads as its scores, so the softmax's rescale needs no
// exchange; each head's max is 3 shuffles over the 8 lanes sharing c4.
//
// Precision: the queries and the probabilities are split into a high and a
// low f16 part (x = hi + lo to about 2^-22 of x; below 1/8 the low part is
// subnormal, which bounds the error by 2^-25 instead) and each mma runs on
// both (LANEC_ATTN_TC_SPLIT, default on), so the result matches the scalar
// f32 loop to about f32 rounding; the K and V rows are f16 already.
#pragma once

#include <cstdint>

#ifndef LANEC_ATTN_TC_SPLIT
#define LANEC_ATTN_TC_SPLIT 1
#endif

namespace lanec::kernels {

constexpr int kAttnTcKeys = 16;  // keys a warp takes a tile

__device__ __forceinline__ void attn_mma(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  (void)d, (void)a0, (void)a1, (void)a2, (void)a3, (void)b0, (void)b1;
  __trap();
#endif
}

// The 8x8 matrix of 16-bit elements whose row r, columns 2 c4 and 2 c4 + 1
// lane (r, c4) holds, transposed: the lane gets rows 2 c4 and 2 c4 + 1 of
// column r.
__device__ __forceinline__ uint32_t attn_transpose(uint32_t x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t y;
  asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
  return y;
#else
  (void)x;
  __trap();
  return 0;
#endif
}

__device__ __forceinline__ uint32_t attn_pack(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// x split into its f16 pair and the f16 pair of what that rounding left.
__device__ __forceinline__ void attn_pack_split(float x0, float x1, uint32_t& hi, uint32_t& lo) {
  const __half2 h = __floats2half2_rn(x0, x1);
  hi = *reinterpret_cast<const uint32_t*>(&h);
  const float2 back = __half22float2(h);
  lo = attn_pack(x0 - back.x, x1 - back.y);
}

// Head dim of row r of the transposed V word `word` of chunk c (see above):
// the chunk's word `word` holds dims 8 (4 c + c4) + 2 word + {0, 1} of lane
// c4, so its transposed row r is lane r / 2's element r % 2.
__device__ __forceinline__ int attn_tc_dim(int c, int word, int r) {
  return (4 * c + r / 2) * 8 + 2 * word + r % 2;
}

// A warp's softmax state for the two heads of its lane (2 c4, 2 c4 + 1) and
// its accumulator fragments: m-tile (c, word pair), dims x heads.
template <int HeadDim>
struct AttnTcState {
  static constexpr int kChunks = HeadDim / 32;
  float m[2], l[2];
  float acc[kChunks][2][4];
};

// The K and V chunks of Rows x 8 keys of a tile (rows r, r + 8 of a 16-key
// tile; with Rows 1, keys r of an 8-key tile).
template <int HeadDim, int Rows>
struct AttnTcRows {
  int4 k[Rows][HeadDim / 32], v[Rows][HeadDim / 32];
};

// Rows t + r (+ 8) below `bound` (zero past it, so that a masked key's value
// row is 0, never a stale non-finite one); with `only` not negative, only
// that row.
template <int HeadDim, int Rows>
__device__ __forceinline__ void attn_tc_load(AttnTcRows<HeadDim, Rows>& rows, const __half* k_head,
                                             const __half* v_head, int t, int bound, int only) {
  const int lane = threadIdx.x % kWarpSize, r = lane / 4, c4 = lane % 4;
#pragma unroll
  for (int half = 0; half < Rows; ++half) {
    const int key = t + r + 8 * half;
    if (only < 0) {  // (zeroed first, so that a load writes its registers directly)
#pragma unroll
      for (int c = 0; c < HeadDim / 32; ++c) rows.k[half][c] = rows.v[half][c] = make_int4(0, 0, 0, 0);
    }
    if (key >= bound || (only >= 0 && key != only)) continue;
    const int4* kp = reinterpret_cast<const int4*>(k_head + static_cast<size_t>(key) * HeadDim);
    const int4* vp = reinterpret_cast<const int4*>(v_head + static_cast<size_t>(key) * HeadDim);
#pragma unroll
    for (int c = 0; c < HeadDim / 32; ++c) {
      rows.k[half][c] = load_streamed<LANEC_ATTN_STREAM>(kp + 4 * c + c4);
      rows.v[half][c] = load_streamed<LANEC_ATTN_STREAM>(vp + 4 * c + c4);
    }
  }
}

// v[0] and v[1] reduced by op over the 8 lanes sharing c4 (a tile's key rows).
template <typename Op>
__device__ __forceinline__ void attn_over_key_rows(float (&v)[2], Op op) {
#pragma unroll
  for (int off = 4; off < kWarpSize; off *= 2) {
    v[0] = op(v[0], __shfl_xor_sync(kFullMask, v[0], off));
    v[1] = op(v[1], __shfl_xor_sync(kFullMask, v[1], off));
  }
}

// Scores, softmax update and weighted values of one tile at keys t (keys
// at or past t1 masked). sm_q: the queries' B fragments. after_scores runs
// once the K rows are spent (where the next tile's loads may start).
template <int HeadDim, int Rows, int Split, typename AfterScores>
__device__ __forceinline__ void attn_tc_tile(AttnTcState<HeadDim>& st, const AttnTcRows<HeadDim, Rows>& rows,
                                             const uint4 (&sm_q)[Split][HeadDim / 32][kWarpSize], int t, int t1,
                                             AfterScores after_scores) {
  constexpr int kChunks = HeadDim / 32;
  const int lane = threadIdx.x % kWarpSize, r = lane / 4;
  auto row = [&](const int4 (&w)[Rows][kChunks], int half, int c, int word) -> uint32_t {
    if (half >= Rows) return 0u;
    const int4& v = w[half][c];
    return static_cast<uint32_t>(word == 0 ? v.x : word == 1 ? v.y : word == 2 ? v.z : v.w);
  };
  // The scores: keys r, r, r + 8, r + 8 (the last two 0 for 8-key tiles);
  // heads 2 c4, 2 c4 + 1. One sum a part of the queries.
  float sp[Split][4] = {};
#pragma unroll
  for (int c = 0; c < kChunks; ++c)
#pragma unroll
    for (int h = 0; h < Split; ++h) {
      const uint4 qb = sm_q[h][c][lane];
      attn_mma(sp[h], row(rows.k, 0, c, 0), row(rows.k, 1, c, 0), row(rows.k, 0, c, 1), row(rows.k, 1, c, 1), qb.x,
               qb.y);
      attn_mma(sp[h], row(rows.k, 0, c, 2), row(rows.k, 1, c, 2), row(rows.k, 0, c, 3), row(rows.k, 1, c, 3), qb.z,
               qb.w);
    }
  after_scores();
  float s[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    s[i] = 0.0f;
#pragma unroll
    for (int h = 0; h < Split; ++h) s[i] += sp[h][i];
  }
  constexpr int kKeys = 8 * Rows;
  if (t + kKeys > t1) {  // the split's last tile
    if (t + r >= t1) s[0] = s[1] = -INFINITY;
    if (Rows == 1 || t + r + 8 >= t1) s[2] = s[3] = -INFINITY;
  } else if constexpr (Rows == 1) {
    s[2] = s[3] = -INFINITY;
  }
  float mx[2] = {fmaxf(s[0], s[2]), fmaxf(s[1], s[3])};
  attn_over_key_rows(mx, [](float a, float b) { return fmaxf(a, b); });
  float corr[2], pr[4];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float m_new = fmaxf(st.m[h], mx[h]);  // finite: the tile has a key below t1
    corr[h] = attn_exp(st.m[h] - m_new);        // 0 on the first tile (m = -inf)
    pr[h] = attn_exp(s[h] - m_new);
    pr[h + 2] = attn_exp(s[h + 2] - m_new);
    st.l[h] = st.l[h] * corr[h] + pr[h] + pr[h + 2];
    st.m[h] = m_new;
  }
#pragma unroll
  for (int c = 0; c < kChunks; ++c)
#pragma unroll
    for (int w = 0; w < 2; ++w)
#pragma unroll
      for (int i = 0; i < 4; ++i) st.acc[c][w][i] *= corr[i % 2];
  // P^T's B fragments: keys 2 c4, 2 c4 + 1 (+ 8) of head r.
  uint32_t pb[Split][2];
  {
    uint32_t hi0, lo0, hi1 = 0u, lo1 = 0u;
    attn_pack_split(pr[0], pr[1], hi0, lo0);
    if constexpr (Rows == 2) attn_pack_split(pr[2], pr[3], hi1, lo1);
    pb[0][0] = attn_transpose(hi0);
    pb[0][1] = Rows == 2 ? attn_transpose(hi1) : 0u;
    if constexpr (Split == 2) {
      pb[Split - 1][0] = attn_transpose(lo0);
      pb[Split - 1][1] = Rows == 2 ? attn_transpose(lo1) : 0u;
    }
  }
#pragma unroll
  for (int c = 0; c < kChunks; ++c)
#pragma unroll
    for (int w = 0; w < 2; ++w) {
      const uint32_t a0 = attn_transpose(row(rows.v, 0, c, 2 * w));
      const uint32_t a1 = attn_transpose(row(rows.v, 0, c, 2 * w + 1));
      const uint32_t a2 = Rows == 2 ? attn_transpose(row(rows.v, 1, c, 2 * w)) : 0u;
      const uint32_t a3 = Rows == 2 ? attn_transpose(row(rows.v, 1, c, 2 * w + 1)) : 0u;
#pragma unroll
      for (int h = 0; h < Split; ++h) attn_mma(st.acc[c][w], a0, a1, a2, a3, pb[h][0], pb[h][1]);
    }
}

// The first tile, then a warp's 8-key tiles from t on, each tile's rows
// loading while the tile before is weighed (after its scores, once its K
// rows' registers are spent). Against loading each tile just before it is
// scored: +0.3 % on Qwen3-8B at 4k context and +0.5 % at 8k, the same
// tokens (docs/performance.md; that form is in the history at 5ba82d1).
template <int HeadDim, int Split>
__device__ __forceinline__ void attn_tc_pipelined_tail(AttnTcState<HeadDim>& st,
                                                       const AttnTcRows<HeadDim, 2>& first_rows,
                                                       const uint4 (&sm_q)[Split][HeadDim / 32][kWarpSize],
                                                       const __half* k_head, const __half* v_head, int t, int first,
                                                       int t1) {
  constexpr int kStride = 8 * kAttnWarps;
  AttnTcRows<HeadDim, 1> next;
  auto load_next = [&](int at) {
    if (at < t1) attn_tc_load(next, k_head, v_head, at, t1, -1);
  };
  attn_tc_tile<HeadDim, 2, Split>(st, first_rows, sm_q, first, t1, [&] { load_next(t); });
  for (; t < t1; t += kStride) {
    const AttnTcRows<HeadDim, 1> rows = next;
    attn_tc_tile<HeadDim, 1, Split>(st, rows, sm_q, t, t1, [&] { load_next(t + kStride); });
  }
}

// One warp's share of keys [t0, t1) of a split: the 16-key tile at t0 + 16
// warp, loaded before pdl_wait() where Early (every row but row pos, written
// by the launches that may still run), then 8-key tiles from t0 + 64 + 8 warp on,
// every 8 kAttnWarps keys (their rows and the accumulators fit the registers
// of 4 blocks an SM where two 16-key tiles' would not). Leaves m, l and acc
// of every head in sm_ml / sm_acc.
template <int HeadDim, int Group, bool Early>
__device__ __forceinline__ void attention_tc_keys(const AttentionParams& p, const __half* k_head,
                                                  const __half* v_head, int h0, int t0, int t1, int pos,
                                                  float (&sm_ml)[kAttnWarps][Group][2],
                                                  float (&sm_acc)[kAttnWarps][Group * HeadDim]) {
  static_assert(HeadDim % 32 == 0 && Group >= 1 && Group <= 8, "16-byte chunks of rows, at most 8 heads (N = 8)");
  constexpr int kChunks = HeadDim / 32;
  constexpr int kSplit = LANEC_ATTN_TC_SPLIT ? 2 : 1;
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int r = lane / 4, c4 = lane % 4;
  AttnTcRows<HeadDim, 2> first_rows;
  const int first = t0 + kAttnTcKeys * warp;
  if (first < t1) attn_tc_load(first_rows, k_head, v_head, first, Early ? min(t1, pos) : t1, -1);
  if constexpr (Early) {
    pdl_wait();
    if (first <= pos && pos < min(first + kAttnTcKeys, t1)) attn_tc_load(first_rows, k_head, v_head, first, t1, pos);
  }
  // The queries' B fragments (lane (r, c4) holds head r, zero past Group),
  // scaled for base-2 scores, in shared memory in the order the lanes read
  // them (one 16-byte word a lane, chunk and part): registers for the rows
  // in flight instead. Thread i forms chunk i / 32 of lane i % 32.
  __shared__ uint4 sm_q[kSplit][kChunks][kWarpSize];
  static_assert(sizeof(sm_q) <= attention_tc_query_bytes(HeadDim), "the planner's shared memory count holds it");
  {
    const float qs = p.scale * kAttnScoreBase;
    for (int i = threadIdx.x; i < kChunks * kWarpSize; i += kAttnThreads) {
      const int c = i / kWarpSize, qr = i % kWarpSize / 4, qc = i % 4;
      float x[8] = {};
      if (qr < Group) {
        const float4* src = reinterpret_cast<const float4*>(p.q + (h0 + qr) * HeadDim + (4 * c + qc) * 8);
        const float4 a = src[0], b = src[1];
        x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
      }
      uint32_t hi[4], lo[4];  // word w: k-step (c, w / 2), fragment b[w % 2]
#pragma unroll
      for (int w = 0; w < 4; ++w) attn_pack_split(x[2 * w] * qs, x[2 * w + 1] * qs, hi[w], lo[w]);
      sm_q[0][c][i % kWarpSize] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
      if constexpr (kSplit == 2) sm_q[kSplit - 1][c][i % kWarpSize] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
    }
    __syncthreads();
  }
  AttnTcState<HeadDim> st;
  st.m[0] = st.m[1] = -INFINITY;
  st.l[0] = st.l[1] = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c)
#pragma unroll
    for (int w = 0; w < 2; ++w)
#pragma unroll
      for (int i = 0; i < 4; ++i) st.acc[c][w][i] = 0.0f;
  if (first < t1)
    attn_tc_pipelined_tail(st, first_rows, sm_q, k_head, v_head, t0 + kAttnWarps * kAttnTcKeys + 8 * warp, first, t1);
  attn_over_key_rows(st.l, [](float a, float b) { return a + b; });  // each head's sum
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int g = 2 * c4 + h;
    if (g >= Group) continue;
    if (r == 0) {
      sm_ml[warp][g][0] = st.m[h];
      sm_ml[warp][g][1] = st.l[h];
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
      for (int w = 0; w < 2; ++w) {
        sm_acc[warp][g * HeadDim + attn_tc_dim(c, 2 * w, r)] = st.acc[c][w][h];
        sm_acc[warp][g * HeadDim + attn_tc_dim(c, 2 * w + 1, r)] = st.acc[c][w][h + 2];
      }
  }
}

}  // namespace lanec::kernels
