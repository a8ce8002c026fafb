// Batch-1 matrix-vector products y = W x for decode, W row-major [rows, k].
//
// Weight formats: f32, f16, bf16 and q8_0_split (GGUF Q8_0 repacked by
// launch_repack_q8_0). Numerics (Activation):
//   f32:  x is f32; weights are dequantized in registers, f32 accumulation.
//   int8: x is int8 activations (blocks.h: qs + per-32 f32 scale d_x), only
//         with q8_0_split weights; dp4a products per 32-element block give an
//         exact int32 sum, scaled by d_w * d_x and accumulated in f32.
//   int8x2: two-word int8 activations (activations: two-pass-int8), x ~
//         d_x (qs + lo/254): a second dp4a pass over the low words, the two
//         exact sums combined in int32 as 254 s_hi + s_lo before the scales.
//
// Fused forms (one launch):
//   parts:   up to 4 weight matrices with the same k and input (e.g. Q, K, V),
//            each with its own row count and output; rows are numbered
//            part 0 first, then part 1, ... and warps take consecutive rows.
//   Swiglu:  parts[0] = gate, parts[1] = up (same rows); y0 = silu(g.x) * (u.x).
//   bias:    per part, y += bias (before the SwiGLU when Swiglu).
//   residual: per part, y = W x (+ bias) + residual (after the SwiGLU); with
//            residual_early the register kernel loads it before its wait.
//   Argmax:  one matrix (the logits): each block also folds its rows' greedy
//            winner into *argmax_best (argmax.cuh argmax_key, atomicMax), so
//            the argmax launch after it only finishes (rule gemv_argmax).
// A null bias / residual pointer means "no such epilogue".
// Launchers: launch_gemv (a warp a row group; Ahead: a lane's second chunk
// loaded with its first activations, rule load_ahead), launch_gemv_row_loop (one
// matrix, a one-wave grid of warps each looping over rows) and, in
// gemv_staged.cuh, launch_gemv_staged.
#pragma once

#include <cstring>

#include "argmax.cuh"
#include "common.cuh"
#include "limits.h"

namespace lanec::kernels {

enum class Activation { f32, int8, int8x2 };

constexpr int kGemvMaxParts = 4;  // (kGemvMaxWarps, the most split warps: limits.h)

// Whether the first weight chunk of each row is loaded before pdl_wait().
#ifndef LANEC_GEMV_PRELOAD
#define LANEC_GEMV_PRELOAD 1
#endif

// How weight chunks load (common.cuh StreamKind): not through L1 by default,
// which keeps L1 for the activation chunks every row reuses (+0.8 to 1.1 %
// on the three Qwen3 shapes, docs/performance.md).
#ifndef LANEC_GEMV_STREAM
#define LANEC_GEMV_STREAM 1
#endif

struct GemvPart {
  const void* w;          // [rows, k] in the launch's weight format; 16-byte aligned
  float* y;               // [rows]
  const float* bias;      // [rows] or nullptr
  const float* residual;  // [rows] or nullptr (may alias y)
  int rows;
};

struct GemvParams {
  GemvPart parts[kGemvMaxParts];
  int n_parts;
  int k;                  // input length (multiple of 32 for q8_0_split, of 8 for 16-bit, of 4 for f32)
  const float* x;         // [k] f32 input (Activation::f32); 16-byte aligned
  const int8_t* x_qs;     // [k] int8 input (Activation::int8); 16-byte aligned
  const float* x_d;       // [k/32] int8 input block scales
  const int8_t* x_lo;     // [k] low words (Activation::int8x2); 16-byte aligned
  int split_k;            // warps that share one row group, each on an interleaved 1/split_k of k (1..16)
  unsigned long long* argmax_best;  // Argmax forms: the folded greedy key (argmax.cuh); zero before the launch
  // Whether the register kernel loads the residual rows before pdl_wait():
  // only where no launch still running then writes them (the caller's
  // contract, checked by the planner's verify_schedule).
  bool residual_early;
};

// Elements of x covered by one 16-byte chunk of a weight row.
template <WeightFormat F>
__host__ __device__ constexpr int gemv_chunk_elems() {
  return F == WeightFormat::f32 ? 4 : (F == WeightFormat::q8_0_split ? 16 : 8);
}

namespace gemv_detail {

__device__ __forceinline__ float dot4(const float4& a, const float4& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

__device__ __forceinline__ float2 bf16x2_to_float2(uint32_t u) {
  return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xffff0000u));
}

__device__ __forceinline__ float2 f16x2_to_float2(uint32_t u) {
  __half2 h;
  memcpy(&h, &u, sizeof(h));
  return __half22float2(h);
}

// Sum of the 4 int8 products packed in one word with 4 f32 activations.
// (A byte-permute trick that avoids the int-to-float conversions measured no
// faster on H200; the path appears bound by reading 64 bytes of x from L1 per
// 16 bytes of weights, so the plain conversion stays.)
__device__ __forceinline__ float dot_i8x4_f32(int packed, const float4& x) {
  const char4 q = *reinterpret_cast<const char4*>(&packed);
  return static_cast<float>(q.x) * x.x + static_cast<float>(q.y) * x.y + static_cast<float>(q.z) * x.z +
         static_cast<float>(q.w) * x.w;
}

// Exact int32 sum of the 16 int8 products of two 16-byte chunks.
__device__ __forceinline__ int dp4a16(const int4& a, const int4& b) {
  int s = __dp4a(a.x, b.x, 0);
  s = __dp4a(a.y, b.y, s);
  s = __dp4a(a.z, b.z, s);
  return __dp4a(a.w, b.w, s);
}

// The activation values of one chunk, loaded once and reused for every row.
template <WeightFormat F, Activation A>
struct XChunk {
  float4 v[gemv_chunk_elems<F>() / 4];
};
template <>
struct XChunk<WeightFormat::q8_0_split, Activation::int8> {
  int4 q;
  float d;
};
template <>
struct XChunk<WeightFormat::q8_0_split, Activation::int8x2> {
  int4 q;
  int4 lo;
  float d;
};

// Chunk c of an int8 input held as words (qs, and lo for the two-word
// form) and per-32 block scales d: the GEMV's and the ffn launch's.
template <WeightFormat F, Activation A>
__device__ __forceinline__ XChunk<F, A> load_x_int8(const int8_t* qs, const int8_t* lo, const float* d, int c) {
  XChunk<F, A> x;
  x.q = __ldg(reinterpret_cast<const int4*>(qs) + c);
  x.d = __ldg(d + c / 2);  // two 16-element chunks per 32-element block
  if constexpr (A == Activation::int8x2) x.lo = __ldg(reinterpret_cast<const int4*>(lo) + c);
  return x;
}

template <WeightFormat F, Activation A>
__device__ __forceinline__ XChunk<F, A> load_x(const GemvParams& p, int c) {
  XChunk<F, A> x;
  if constexpr (A != Activation::f32) {
    x = load_x_int8<F, A>(p.x_qs, p.x_lo, p.x_d, c);
  } else {
    constexpr int n = gemv_chunk_elems<F>() / 4;
    const float4* src = reinterpret_cast<const float4*>(p.x) + c * n;
#pragma unroll
    for (int j = 0; j < n; ++j) x.v[j] = __ldg(src + j);
  }
  return x;
}

// One 16-byte chunk of a weight row and (q8_0_split) its block scale.
struct WChunk {
  int4 raw;
  uint16_t scale;
};

template <WeightFormat F>
__device__ __forceinline__ WChunk load_w(const uint8_t* w, const uint16_t* w_scales, int c) {
  WChunk chunk;
  chunk.raw = load_streamed<LANEC_GEMV_STREAM>(reinterpret_cast<const int4*>(w) + c);  // the 16-byte weight load
  chunk.scale = F == WeightFormat::q8_0_split ? __ldg(w_scales + c / 2) : 0;
  return chunk;
}

// Partial dot product of one weight chunk with the activation chunk.
template <WeightFormat F, Activation A>
__device__ __forceinline__ float dot_chunk(const WChunk& w, const XChunk<F, A>& x) {
  const int4 raw = w.raw;
  if constexpr (F == WeightFormat::f32) {
    return dot4(make_float4(__int_as_float(raw.x), __int_as_float(raw.y), __int_as_float(raw.z),
                            __int_as_float(raw.w)),
                x.v[0]);
  } else if constexpr (F == WeightFormat::f16 || F == WeightFormat::bf16) {
    const uint32_t words[4] = {static_cast<uint32_t>(raw.x), static_cast<uint32_t>(raw.y),
                               static_cast<uint32_t>(raw.z), static_cast<uint32_t>(raw.w)};
    float2 f[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) f[j] = F == WeightFormat::f16 ? f16x2_to_float2(words[j]) : bf16x2_to_float2(words[j]);
    return dot4(make_float4(f[0].x, f[0].y, f[1].x, f[1].y), x.v[0]) +
           dot4(make_float4(f[2].x, f[2].y, f[3].x, f[3].y), x.v[1]);
  } else if constexpr (A == Activation::f32) {  // q8_0_split, dequant numerics
    const float d = f16_bits_to_f32(w.scale);
    const float s = dot_i8x4_f32(raw.x, x.v[0]) + dot_i8x4_f32(raw.y, x.v[1]) + dot_i8x4_f32(raw.z, x.v[2]) +
                    dot_i8x4_f32(raw.w, x.v[3]);
    return d * s;
  } else if constexpr (A == Activation::int8) {  // q8_0_split x int8 activations
    const float d = f16_bits_to_f32(w.scale);
    return d * x.d * static_cast<float>(dp4a16(raw, x.q));
  } else {  // q8_0_split x two-word int8 activations: high and low words, exact sums
    const float d = f16_bits_to_f32(w.scale);
    // 254 s_hi + s_lo is the chunk's exact sum in units of d_x/254 (|.| < 2^26):
    // one conversion and no divide in the loop (an IEEE divide by 254 there
    // cost 1.7B and 8B 0.5 % a token, docs/performance.md).
    const int s = 254 * dp4a16(raw, x.q) + dp4a16(raw, x.lo);
    return d * (x.d * (1.0f / 254.0f)) * static_cast<float>(s);
  }
}

}  // namespace gemv_detail

// Thread mapping: a block is 32 x (groups * split_k) threads. Warp ty works on
// row group g = ty / split_k (RowsPerWarp consecutive rows; with Swiglu the
// same rows of gate and up) and K slice s = ty % split_k. Lane l of slice s
// reads 16-byte chunks c = s*32 + l + j*32*split_k of every row of its group:
// each warp-wide load is 512 contiguous bytes of one row, and the activation
// chunk is loaded once per c and reused across the rows. Lane partial sums
// are reduced with shuffles, slices through shared memory, and slice 0 of
// each group applies the epilogue.
namespace gemv_detail {

// Where row `local` of part `pt` starts in its weights, and (q8_0_split)
// its block scales.
template <WeightFormat F>
__device__ __forceinline__ void row_pointers(const GemvPart& pt, int k, int local, const uint8_t*& row_ptr,
                                             const uint16_t*& scale_ptr) {
  const uint8_t* base = static_cast<const uint8_t*>(pt.w);
  if constexpr (F == WeightFormat::q8_0_split) {
    row_ptr = base + static_cast<size_t>(local) * k;
    scale_ptr = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(pt.rows) * k) +
                static_cast<size_t>(local) * (k / kQ8Block);
  } else {
    row_ptr = base + weight_row_bytes(F, k) * local;
    scale_ptr = nullptr;
  }
}

// This warp's rows, resolved to (part, local row) and
// pointers, with the first weight chunk of each row already loaded: the
// weights are constants, so this may run before pdl_wait() and overlap the
// previous launch. (Preloading 2 or 4 chunks measured no faster, nor all of
// a lane's chunks where it has 2, docs/performance.md.)
template <WeightFormat F, int RowsPerWarp, bool Swiglu>
struct WarpRows {
  static constexpr int kRows = Swiglu ? 2 * RowsPerWarp : RowsPerWarp;
  const uint8_t* row_ptr[kRows];
  const uint16_t* scale_ptr[kRows];
  int part_of[kRows];
  int local_row[kRows];
  WChunk first[kRows];  // chunk c0 of each row (when c0 < the chunk count)
  // Each row's residual where it loads before the wait (residual_early, in
  // the lane that stores the row), else 0: loaded after the reduction, it
  // put an L2 round trip at the launch's tail (+0.5 to 1.1 % a token,
  // docs/performance.md).
  float residual[kRows];
  // The loop's bounds, from parameters and thread indices only: formed here,
  // where they already address the first chunks, they are not formed again
  // after the wait (a parameter read may not cross it).
  int slice;     // this warp's slice of its row group (warp % split)
  int c0;        // this lane's first chunk
  int n_chunks;  // chunks a row
  int split;     // warps a row group
};

template <WeightFormat F, int RowsPerWarp, bool Swiglu>
__device__ __forceinline__ void resolve_rows(const GemvParams& p, WarpRows<F, RowsPerWarp, Swiglu>& w) {
  constexpr int kRows = WarpRows<F, RowsPerWarp, Swiglu>::kRows;
  const int slice = threadIdx.y % p.split_k;
  const int groups = blockDim.y / p.split_k;
  const int first_row = (static_cast<int>(blockIdx.x) * groups + threadIdx.y / p.split_k) * RowsPerWarp;
  const int c0 = slice * kWarpSize + threadIdx.x;
  const int n_chunks = p.k / gemv_chunk_elems<F>();
  const bool has_first = c0 < n_chunks;
  w.slice = slice;
  w.c0 = c0;
  w.n_chunks = n_chunks;
  w.split = p.split_k;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    int part = -1, local = 0;
    if constexpr (Swiglu) {
      local = first_row + r % RowsPerWarp;
      if (local < p.parts[0].rows) part = r / RowsPerWarp;
    } else {
      int row = first_row + r;
      for (int q = 0; q < p.n_parts; ++q) {
        if (row < p.parts[q].rows) {
          part = q;
          local = row;
          break;
        }
        row -= p.parts[q].rows;
      }
    }
    w.part_of[r] = part;
    w.local_row[r] = local;
    w.row_ptr[r] = nullptr;
    w.scale_ptr[r] = nullptr;
    w.residual[r] = 0.0f;
    if (part >= 0) {
      row_pointers<F>(p.parts[part], p.k, local, w.row_ptr[r], w.scale_ptr[r]);
      if (has_first) w.first[r] = load_w<F>(w.row_ptr[r], w.scale_ptr[r], c0);
      const float* residual = (Swiglu && r >= RowsPerWarp) ? nullptr : p.parts[Swiglu ? 0 : part].residual;
      if (p.residual_early && residual != nullptr && slice == 0 && threadIdx.x == 0) w.residual[r] = residual[local];
    }
  }
}

// Each row's lane partial sums reduced over the warp, then, with split > 1,
// over the split warps of the row group (slices 0, 1, ... in that order)
// through shared memory: the totals end in the lanes of the group's slice 0.
// All threads of the block call it (a barrier when split > 1); `warp` is
// this warp's index in the block, `slice` its slice (warp % split).
template <int Rows>
__device__ __forceinline__ void reduce_slices(float (&acc)[Rows], float (*partial)[Rows], int warp, int slice,
                                              int lane, int split) {
#pragma unroll
  for (int r = 0; r < Rows; ++r) acc[r] = warp_sum(acc[r]);
  if (split > 1) {
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < Rows; ++r) partial[warp][r] = acc[r];
    }
    __syncthreads();
    if (slice == 0) {
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        float s = 0.0f;
        for (int j = 0; j < split; ++j) s += partial[warp + j][r];
        acc[r] = s;
      }
    }
  }
}

// The rows' dot products over the input and the slice reduction: the full
// sums end in acc of lane 0 of the group's slice 0, the threads for which it
// returns true. All threads of the block call it (a barrier inside when
// split_k > 1).
// Ahead: the second trip's weights and activations load with the first
// activation chunk, right after the wait, so a lane with two chunks (k
// 1024 at split 1) makes one round trip after the wait, not an L2 trip and
// then a DRAM trip. It costs registers (one more chunk of each in flight),
// so it is a kernel of its own for launches whose grid still fits.
template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Ahead = false>
__device__ __forceinline__ bool sum_rows(const GemvParams& p, const WarpRows<F, RowsPerWarp, Swiglu>& w,
                                         float (*partial)[WarpRows<F, RowsPerWarp, Swiglu>::kRows],
                                         float (&acc)[WarpRows<F, RowsPerWarp, Swiglu>::kRows]) {
  constexpr int kRows = WarpRows<F, RowsPerWarp, Swiglu>::kRows;
  const int lane = threadIdx.x;
  const int ty = threadIdx.y;
  const int slice = w.slice, c0 = w.c0, n_chunks = w.n_chunks;
  const int stride = kWarpSize * w.split;
  const int* part_of = w.part_of;
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  int c = c0 + stride;
  if (Ahead && c < n_chunks) {  // then c0 < n_chunks too
    const auto x0 = load_x<F, A>(p, c0);
    const auto x1 = load_x<F, A>(p, c);
    WChunk w1[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] >= 0) w1[r] = load_w<F>(w.row_ptr[r], w.scale_ptr[r], c);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] >= 0) acc[r] += dot_chunk<F, A>(w.first[r], x0) + dot_chunk<F, A>(w1[r], x1);
    }
    c += stride;
  } else if (c0 < n_chunks) {
    const auto x = load_x<F, A>(p, c0);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] >= 0) acc[r] += dot_chunk<F, A>(w.first[r], x);
    }
  }
  for (; c < n_chunks; c += stride) {
    const auto x = load_x<F, A>(p, c);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] >= 0) acc[r] += dot_chunk<F, A>(load_w<F>(w.row_ptr[r], w.scale_ptr[r], c), x);
    }
  }
  reduce_slices(acc, partial, ty, slice, lane, w.split);
  return slice == 0 && lane == 0;
}

// y plus its row's residual: the value resolve_rows loaded before the wait
// (`early`, 0 for a part without one) where residual_early, else loaded now.
__device__ __forceinline__ float add_residual(const GemvParams& p, float y, float early, const float* residual,
                                              int row) {
  if (p.residual_early) return y + early;
  return residual != nullptr ? y + residual[row] : y;
}

// sum_rows and the epilogue. All threads of the block call it. Returns the
// greedy key (argmax_key) of the rows this thread stored, 0 where it stored
// none (and with Swiglu).
template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Ahead = false>
__device__ __forceinline__ unsigned long long finish_rows(const GemvParams& p,
                                                          const WarpRows<F, RowsPerWarp, Swiglu>& w,
                                                          float (*partial)[WarpRows<F, RowsPerWarp, Swiglu>::kRows]) {
  constexpr int kRows = WarpRows<F, RowsPerWarp, Swiglu>::kRows;
  float acc[kRows];
  unsigned long long key = 0ull;
  if (!sum_rows<F, A, RowsPerWarp, Swiglu, Ahead>(p, w, partial, acc)) return key;
  const int* part_of = w.part_of;
  const int* local_row = w.local_row;

  if constexpr (Swiglu) {
#pragma unroll
    for (int r = 0; r < RowsPerWarp; ++r) {
      if (part_of[r] < 0) continue;
      const int row = local_row[r];
      float g = acc[r], u = acc[r + RowsPerWarp];
      if (p.parts[0].bias != nullptr) g += p.parts[0].bias[row];
      if (p.parts[1].bias != nullptr) u += p.parts[1].bias[row];
      const float y = add_residual(p, silu(g) * u, w.residual[r], p.parts[0].residual, row);
      p.parts[0].y[row] = y;
    }
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] < 0) continue;
      const GemvPart& pt = p.parts[part_of[r]];
      const int row = local_row[r];
      float y = acc[r];
      if (pt.bias != nullptr) y += pt.bias[row];
      y = add_residual(p, y, w.residual[r], pt.residual, row);
      pt.y[row] = y;
      key = max(key, argmax_key(y, row));
    }
  }
  return key;
}

// Folds the block's greedy keys (one a warp, in lane 0; 0 for none) into
// *best: one barrier, and one atomic a block only where the block beats what
// *best held when the block got there (its load is in flight during the
// barrier), so most blocks of a tall grid add no atomic.
__device__ __forceinline__ void fold_block_argmax(unsigned long long* best, unsigned long long warp_key) {
  __shared__ unsigned long long warp_keys[kGemvMaxWarps];
  const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
  const unsigned long long seen = leader ? __ldcg(best) : 0ull;
  if (threadIdx.x == 0) warp_keys[threadIdx.y] = warp_key;
  __syncthreads();
  if (!leader) return;
  unsigned long long block_key = 0ull;
  for (unsigned w = 0; w < blockDim.y; ++w) block_key = max(block_key, warp_keys[w]);
  if (block_key > seen) atomicMax(best, block_key);
}

template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Argmax, bool Ahead>
__device__ __forceinline__ void gemv_body(const GemvParams& p) {
  static_assert(F == WeightFormat::f32 || F == WeightFormat::f16 || F == WeightFormat::bf16 ||
                    F == WeightFormat::q8_0_split,
                "GEMV streams 16-byte chunks of rows: GGUF Q8_0 must be repacked to q8_0_split "
                "(launch_repack_q8_0) and other block formats are not supported");
  static_assert(A == Activation::f32 || F == WeightFormat::q8_0_split,
                "int8 activations are only paired with q8_0_split weights (dp4a on both int8 operands)");
  static_assert(RowsPerWarp == 1 || RowsPerWarp == 2 || RowsPerWarp == 4,
                "rows per warp must be 1, 2 or 4 (the accumulators live in registers)");
  static_assert(!(Argmax && Swiglu), "the argmax fold takes one matrix's rows");
  __shared__ float partial[kGemvMaxWarps][gemv_detail::WarpRows<F, RowsPerWarp, Swiglu>::kRows];
  gemv_detail::WarpRows<F, RowsPerWarp, Swiglu> rows;
#if LANEC_GEMV_PRELOAD
  // Weights only (constants): the first chunk of each row loads before the wait.
  gemv_detail::resolve_rows(p, rows);
  pdl_wait();  // before any access to what earlier launches write (see common.cuh)
#else
  pdl_wait();
  gemv_detail::resolve_rows(p, rows);
#endif
  const unsigned long long key = gemv_detail::finish_rows<F, A, RowsPerWarp, Swiglu, Ahead>(p, rows, partial);
  if constexpr (Argmax) gemv_detail::fold_block_argmax(p.argmax_best, key);
}

}  // namespace gemv_detail

template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Argmax = false>
__global__ void gemv_kernel(const __grid_constant__ GemvParams p) {
  gemv_detail::gemv_body<F, A, RowsPerWarp, Swiglu, Argmax, false>(p);
}

// The second trip loaded ahead (sum_rows' Ahead; rule load_ahead),
// bounded at kGemvAheadMinBlocks blocks of the largest block an SM, so
// ptxas may hold both trips' chunks (47 registers for one row a warp of
// two-word int8) where, unbounded, it kept 33 and issued the second trip's
// activation loads one after another. The plain kernel has no bound: one
// would change its registers too.
template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu>
__global__ void __launch_bounds__(kGemvMaxWarps* kWarpSize, kGemvAheadMinBlocks)
    gemv_ahead_kernel(const __grid_constant__ GemvParams p) {
  gemv_detail::gemv_body<F, A, RowsPerWarp, Swiglu, false, true>(p);
}

// ---- row loop (rule row_loop: tall single matrices) ------------------------------
// A one-wave grid whose warps each take rows w, w + W, w + 2W, ... of one
// matrix (W warps in the grid), each row's C chunks a lane loaded while the
// row before is summed, reduced and stored. Where rows are short (C of 1
// or 2) and many, the one-row-a-warp grid's warps each pay a start and a
// tail for 0.5-1 KB of weights; here a warp keeps weights in flight through
// them (Qwen3-0.6B's logits GEMV, k 1024: +1.2 % a token; at C 4, 1.7B's,
// no faster: docs/performance.md).
constexpr int kGemvRowLoopWarps = 8;  // a block (4 measured the same)

namespace gemv_detail {

// The chunks lane `lane` reads of row `row` of part 0: c = lane + j * 32
// for j < C, those below n_chunks.
template <WeightFormat F, int C>
__device__ __forceinline__ void load_row_chunks(const GemvParams& p, int row, int lane, int n_chunks,
                                                WChunk (&out)[C]) {
  const uint8_t* row_ptr;
  const uint16_t* scale_ptr;
  row_pointers<F>(p.parts[0], p.k, row, row_ptr, scale_ptr);
#pragma unroll
  for (int j = 0; j < C; ++j)
    if (lane + j * kWarpSize < n_chunks) out[j] = load_w<F>(row_ptr, scale_ptr, lane + j * kWarpSize);
}

}  // namespace gemv_detail

namespace gemv_detail {

template <WeightFormat F, Activation A, int C, bool Argmax>
__device__ __forceinline__ void row_loop(const GemvParams& p) {
  static_assert(C == 1 || C == 2 || C == 4, "the row loop holds 1, 2 or 4 chunks a lane of two rows");
  const GemvPart& pt = p.parts[0];
  const int lane = threadIdx.x;
  const int n_chunks = p.k / gemv_chunk_elems<F>();
  const int stride = static_cast<int>(gridDim.x * blockDim.y);
  int row = static_cast<int>(blockIdx.x * blockDim.y + threadIdx.y);
  // One row ahead of the one summed (two or three ahead measured no faster:
  // docs/performance.md, h100-2026-12-07f).
  gemv_detail::WChunk cur[C];
  if (row < pt.rows) gemv_detail::load_row_chunks<F, C>(p, row, lane, n_chunks, cur);  // constants: before the wait
  pdl_wait();
  // Argmax: this warp's winner so far, in lane 0 (the first non-NaN row, then
  // only a larger value: rows rise, so a tie keeps the lower). Two registers
  // in the loop, where a running 64-bit key took twelve more (ptxas).
  float best_value = 0.0f;
  int best_row = -1;
  for (; row < pt.rows; row += stride) {
    gemv_detail::WChunk next[C];
    if (row + stride < pt.rows) gemv_detail::load_row_chunks<F, C>(p, row + stride, lane, n_chunks, next);
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < C; ++j) {
      const int c = lane + j * kWarpSize;
      if (c < n_chunks) acc += gemv_detail::dot_chunk<F, A>(cur[j], gemv_detail::load_x<F, A>(p, c));
    }
    acc = warp_sum(acc);
    if (lane == 0) {
      if (pt.bias != nullptr) acc += pt.bias[row];
      if (pt.residual != nullptr) acc += pt.residual[row];
      pt.y[row] = acc;
      if constexpr (Argmax) {
        if (best_row < 0 ? acc == acc : acc > best_value) {
          best_value = acc;
          best_row = row;
        }
      }
    }
#pragma unroll
    for (int j = 0; j < C; ++j) cur[j] = next[j];
  }
  if constexpr (Argmax) fold_block_argmax(p.argmax_best, best_row < 0 ? 0ull : argmax_key(best_value, best_row));
}

}  // namespace gemv_detail

template <WeightFormat F, Activation A, int C>
__global__ void gemv_row_loop_kernel(const __grid_constant__ GemvParams p) {
  gemv_detail::row_loop<F, A, C, false>(p);
}

// The Argmax form, held to the plain form's 48 registers at 2 chunks a lane
// (5 blocks of 8 warps an SM): unbounded, its winner and fold took 60, which
// holds 4. (A bound on the plain form changes its code: it stays unbounded.)
template <WeightFormat F, Activation A, int C>
__global__ void __launch_bounds__(kWarpSize* kGemvRowLoopWarps, C <= 2 ? 5 : 1)
    gemv_row_loop_argmax_kernel(const __grid_constant__ GemvParams p) {
  gemv_detail::row_loop<F, A, C, true>(p);
}

// The row loop over part 0 (n_parts 1, split_k 1): C must be the chunks a
// lane of a row, ceil(k / chunk elements / 32).
template <WeightFormat F, Activation A, int C, bool Argmax = false>
cudaError_t launch_gemv_row_loop(const GemvParams& p, cudaStream_t stream) {
  if (p.k <= 0 || p.k % gemv_chunk_elems<F>() != 0) return invalid_launch();
  if (F == WeightFormat::q8_0_split && p.k % kQ8Block != 0) return invalid_launch();
  if (ceil_div(p.k / gemv_chunk_elems<F>(), kWarpSize) != C) return invalid_launch();
  if (p.n_parts != 1 || p.split_k != 1) return invalid_launch();
  if (p.parts[0].rows <= 0 || !aligned16(p.parts[0].w) || p.parts[0].y == nullptr) return invalid_launch();
  if (A == Activation::f32 ? !aligned16(p.x) : (!aligned16(p.x_qs) || p.x_d == nullptr)) return invalid_launch();
  if (A == Activation::int8x2 && (p.x_lo == nullptr || !aligned16(p.x_lo))) return invalid_launch();
  if (Argmax && p.argmax_best == nullptr) return invalid_launch();
  // One wave: as many blocks as the SMs hold, queried once for the current
  // device (an emitted program runs on one).
  constexpr auto kernel = Argmax ? gemv_row_loop_argmax_kernel<F, A, C> : gemv_row_loop_kernel<F, A, C>;
  static const int wave = resident_blocks(kernel, kWarpSize * kGemvRowLoopWarps);
  const int needed = ceil_div(p.parts[0].rows, kGemvRowLoopWarps);
  const int grid = needed < wave ? needed : wave;
  const dim3 block(kWarpSize, kGemvRowLoopWarps);
  return launch_kernel(kernel, static_cast<unsigned>(grid), block, 0, stream, p);
}

// Row groups per block for a split: keeps blocks at 4..16 warps (8 measured
// 1.8 % slower on Qwen3-8B, no faster on 0.6B; docs/performance.md).
inline int gemv_groups_per_block(int split_k) { return split_k >= 4 ? 1 : 4 / split_k; }

// The register GEMV: Argmax folds the greedy winner (rule gemv_argmax's
// register form), Ahead launches gemv_ahead_kernel (rule load_ahead).
template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Argmax = false, bool Ahead = false>
cudaError_t launch_gemv(const GemvParams& p, cudaStream_t stream) {
  if (p.k <= 0 || p.k % gemv_chunk_elems<F>() != 0) return invalid_launch();
  if (F == WeightFormat::q8_0_split && p.k % kQ8Block != 0) return invalid_launch();
  if (p.split_k < 1 || p.split_k > kGemvMaxWarps) return invalid_launch();
  if (p.n_parts < 1 || p.n_parts > kGemvMaxParts) return invalid_launch();
  if (Swiglu && (p.n_parts != 2 || p.parts[0].rows != p.parts[1].rows)) return invalid_launch();
  if (Argmax && (Swiglu || p.n_parts != 1 || p.argmax_best == nullptr)) return invalid_launch();
  if (A == Activation::f32 ? !aligned16(p.x) : (!aligned16(p.x_qs) || p.x_d == nullptr)) return invalid_launch();
  if (A == Activation::int8x2 && (p.x_lo == nullptr || !aligned16(p.x_lo))) return invalid_launch();
  int rows = 0;
  for (int q = 0; q < p.n_parts; ++q) {
    if (p.parts[q].rows <= 0 || !aligned16(p.parts[q].w)) return invalid_launch();
    if (p.parts[q].y == nullptr && !(Swiglu && q == 1)) return invalid_launch();
    rows += p.parts[q].rows;
  }
  if (Swiglu) rows = p.parts[0].rows;
  const int groups = gemv_groups_per_block(p.split_k);
  const dim3 block(kWarpSize, static_cast<unsigned>(groups * p.split_k));
  const int grid = ceil_div(rows, RowsPerWarp * groups);
  if constexpr (Ahead) {
    static_assert(!Argmax, "the ahead kernel has no argmax fold (gemv_argmax folds into the row loop)");
    return launch_kernel(gemv_ahead_kernel<F, A, RowsPerWarp, Swiglu>, static_cast<unsigned>(grid), block, 0, stream,
                         p);
  } else {
    return launch_kernel(gemv_kernel<F, A, RowsPerWarp, Swiglu, Argmax>, static_cast<unsigned>(grid), block, 0, stream,
                         p);
  }
}

}  // namespace lanec::kernels
