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
//         exact sums combined as s_hi + s_lo/254 before the scales.
//
// Fused forms (one launch):
//   parts:   up to 4 weight matrices with the same k and input (e.g. Q, K, V),
//            each with its own row count and output; rows are numbered
//            part 0 first, then part 1, ... and warps take consecutive rows.
//   Swiglu:  parts[0] = gate, parts[1] = up (same rows); y0 = silu(g.x) * (u.x).
//   bias:    per part, y += bias (before the SwiGLU when Swiglu).
//   residual: per part, y = W x (+ bias) + residual (after the SwiGLU).
// A null bias / residual pointer means "no such epilogue".
//
// Prologue (template flag, rule gemv_prologue): the launch forms its own input
// from the f32 vector x instead of reading a finished one: h = x (+ x_residual,
// written once to h_out), then y = h * rsqrt(mean(h^2) + eps) * norm_w when
// norm_w is set, then (int8 numerics) the int8 form of y. Every block does it
// into shared memory, which replaces an rms_norm and/or quantize launch by a
// few L2 reads a block; the grid is capped (grid_sms x
// kGemvPrologueBlocksPerSm) and blocks loop over row groups, so the work is
// repeated a bounded number of times.
#pragma once

#include <algorithm>
#include <cstring>

#include "common.cuh"
#include "quantize.cuh"

namespace lanec::kernels {

enum class Activation { f32, int8, int8x2 };

constexpr int kGemvMaxParts = 4;
constexpr int kGemvMaxWarps = 16;

// Prologue launches: warps a block (more rows share one formed input) and the
// grid cap in blocks an SM. Tunable at build time for measurements.
#ifndef LANEC_GEMV_PROLOGUE_WARPS
#define LANEC_GEMV_PROLOGUE_WARPS 16
#endif
#ifndef LANEC_GEMV_PROLOGUE_BLOCKS_PER_SM
#define LANEC_GEMV_PROLOGUE_BLOCKS_PER_SM 4
#endif
// Whether the first weight chunk of each row is loaded before pdl_wait().
#ifndef LANEC_GEMV_PRELOAD
#define LANEC_GEMV_PRELOAD 1
#endif
constexpr int kGemvPrologueWarps = LANEC_GEMV_PROLOGUE_WARPS;
constexpr int kGemvPrologueBlocksPerSm = LANEC_GEMV_PROLOGUE_BLOCKS_PER_SM;
static_assert(kGemvPrologueWarps >= 1 && kGemvPrologueWarps <= kGemvMaxWarps, "prologue warps out of range");

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
  // Prologue only: the input is formed from x (f32 [k], 16-byte aligned) in every block.
  const float* x_residual;  // [k] h = x + x_residual, or nullptr (h = x)
  float* h_out;             // [k] h, written once (block 0); with x_residual
  const float* norm_w;      // [k] RMS norm weight, or nullptr (no norm)
  float eps;
  int grid_sms;             // SMs to size the capped grid by (kGemvPrologueBlocksPerSm blocks each)
};

// Bytes of dynamic shared memory a prologue launch needs for k inputs: the
// f32 vector, then (int8 numerics) its int8 words, low words and scales.
template <Activation A>
__host__ __device__ constexpr size_t gemv_prologue_smem_bytes(int k) {
  const size_t n = static_cast<size_t>(k);
  if (A == Activation::f32) return 4 * n;
  return 4 * n + n * (A == Activation::int8x2 ? 2 : 1) + n / kQ8Block * 4;
}

// Row blocks of a launch: all rows (gate rows for a SwiGLU pair) in blocks of
// `groups` row groups of RowsPerWarp rows.
__host__ __device__ inline int gemv_row_blocks(const GemvParams& p, int rows_per_warp, bool swiglu, int groups) {
  int rows = 0;
  for (int q = 0; q < p.n_parts; ++q) rows += p.parts[q].rows;
  if (swiglu) rows = p.parts[0].rows;
  const int per_block = rows_per_warp * groups;
  return (rows + per_block - 1) / per_block;
}

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

// Where the activation chunks come from: global memory (read-only path) or
// the shared memory a prologue filled.
struct XSource {
  const float* x;
  const int8_t* qs;
  const float* d;
  const int8_t* lo;
};

template <bool Shared, typename T>
__device__ __forceinline__ T load_input(const T* p) {
  if constexpr (Shared) return *p;
  else return __ldg(p);
}

template <WeightFormat F, Activation A, bool Shared>
__device__ __forceinline__ XChunk<F, A> load_x(const XSource& s, int c) {
  XChunk<F, A> x;
  if constexpr (A != Activation::f32) {
    x.q = load_input<Shared>(reinterpret_cast<const int4*>(s.qs) + c);
    x.d = load_input<Shared>(s.d + c / 2);  // two 16-element chunks per 32-element block
    if constexpr (A == Activation::int8x2) x.lo = load_input<Shared>(reinterpret_cast<const int4*>(s.lo) + c);
  } else {
    constexpr int n = gemv_chunk_elems<F>() / 4;
    const float4* src = reinterpret_cast<const float4*>(s.x) + c * n;
#pragma unroll
    for (int j = 0; j < n; ++j) x.v[j] = load_input<Shared>(src + j);
  }
  return x;
}

// The prologue: forms the launch's input in shared memory `smem` (layout of
// gemv_prologue_smem_bytes) and returns where it lies. All threads of the
// block take part; ends with a barrier.
template <Activation A>
__device__ XSource form_input(const GemvParams& p, unsigned char* smem, float* scratch) {
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int n_threads = static_cast<int>(blockDim.x * blockDim.y);
  const int k = p.k;
  float* h = reinterpret_cast<float*>(smem);
  // Pass 1: h = x (+ residual), staged in shared memory, and its sum of squares.
  float sumsq = 0.0f;
  const float4* x4 = reinterpret_cast<const float4*>(p.x);
  const float4* r4 = reinterpret_cast<const float4*>(p.x_residual);
  for (int i = tid; i < k / 4; i += n_threads) {
    float4 v = x4[i];
    if (p.x_residual != nullptr) {
      const float4 r = r4[i];
      v.x += r.x;
      v.y += r.y;
      v.z += r.z;
      v.w += r.w;
      if (blockIdx.x == 0) reinterpret_cast<float4*>(p.h_out)[i] = v;
    }
    reinterpret_cast<float4*>(h)[i] = v;
    sumsq += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  float inv = 1.0f;
  if (p.norm_w != nullptr) inv = rsqrtf(block_sum(sumsq, scratch) / static_cast<float>(k) + p.eps);
  __syncthreads();
  // Pass 2: y = h * inv * w (the rms_norm kernel's expression), then the int8 form.
  XSource src{h, nullptr, nullptr, nullptr};
  if constexpr (A == Activation::f32) {
    if (p.norm_w != nullptr)
      for (int i = tid; i < k; i += n_threads) h[i] = h[i] * inv * __ldg(p.norm_w + i);
  } else {
    int8_t* qs = reinterpret_cast<int8_t*>(smem + 4 * static_cast<size_t>(k));
    int8_t* lo = A == Activation::int8x2 ? qs + k : nullptr;
    float* d = reinterpret_cast<float*>(qs + k * (A == Activation::int8x2 ? 2 : 1));
    const int lane = tid % kWarpSize;
    for (int b = tid / kWarpSize; b < k / kQ8Block; b += n_threads / kWarpSize) {
      const int i = b * kQ8Block + lane;
      const float y = p.norm_w != nullptr ? h[i] * inv * __ldg(p.norm_w + i) : h[i];
      quantize_block_warp(y, qs + b * kQ8Block, d + b, lane, lo != nullptr ? lo + b * kQ8Block : nullptr);
    }
    src = XSource{nullptr, qs, d, lo};
  }
  __syncthreads();
  return src;
}

// One 16-byte chunk of a weight row and (q8_0_split) its block scale.
struct WChunk {
  int4 raw;
  uint16_t scale;
};

template <WeightFormat F>
__device__ __forceinline__ WChunk load_w(const uint8_t* w, const uint16_t* w_scales, int c) {
  WChunk chunk;
  chunk.raw = __ldg(reinterpret_cast<const int4*>(w) + c);  // the 16-byte weight load
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
    return d * x.d * (static_cast<float>(dp4a16(raw, x.q)) + static_cast<float>(dp4a16(raw, x.lo)) / 254.0f);
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
// each group applies the epilogue. Block b computes row block b (groups row
// groups); a capped grid (prologue) loops b over the row blocks.
namespace gemv_detail {

// One warp's rows of one row block, resolved to (part, local row) and
// pointers, with the first weight chunk of each row already loaded: the
// weights are constants, so this may run before pdl_wait() and overlap the
// previous launch, and the loads are in flight while the input is formed.
template <WeightFormat F, int RowsPerWarp, bool Swiglu>
struct WarpRows {
  static constexpr int kRows = Swiglu ? 2 * RowsPerWarp : RowsPerWarp;
  const uint8_t* row_ptr[kRows];
  const uint16_t* scale_ptr[kRows];
  int part_of[kRows];
  int local_row[kRows];
  WChunk first[kRows];  // chunk c0 of each row (when c0 < the chunk count)
};

template <WeightFormat F, int RowsPerWarp, bool Swiglu>
__device__ __forceinline__ void resolve_rows(const GemvParams& p, int row_block, WarpRows<F, RowsPerWarp, Swiglu>& w) {
  constexpr int kRows = WarpRows<F, RowsPerWarp, Swiglu>::kRows;
  const int slice = threadIdx.y % p.split_k;
  const int groups = blockDim.y / p.split_k;
  const int first_row = (row_block * groups + threadIdx.y / p.split_k) * RowsPerWarp;
  const int c0 = slice * kWarpSize + threadIdx.x;
  const bool has_first = c0 < p.k / gemv_chunk_elems<F>();
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
    if (part >= 0) {
      const GemvPart& pt = p.parts[part];
      const uint8_t* base = static_cast<const uint8_t*>(pt.w);
      if constexpr (F == WeightFormat::q8_0_split) {
        w.row_ptr[r] = base + static_cast<size_t>(local) * p.k;
        w.scale_ptr[r] = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(pt.rows) * p.k) +
                         static_cast<size_t>(local) * (p.k / kQ8Block);
      } else {
        w.row_ptr[r] = base + weight_row_bytes(F, p.k) * local;
      }
      if (has_first) w.first[r] = load_w<F>(w.row_ptr[r], w.scale_ptr[r], c0);
    }
  }
}

// The rows' dot products over the input, the slice reduction and the
// epilogue. All threads of the block call it (barriers inside).
template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Shared>
__device__ __forceinline__ void finish_rows(const GemvParams& p, const XSource& src,
                                            const WarpRows<F, RowsPerWarp, Swiglu>& w,
                                            float (*partial)[Swiglu ? 2 * RowsPerWarp : RowsPerWarp]) {
  constexpr int kRows = Swiglu ? 2 * RowsPerWarp : RowsPerWarp;
  const int lane = threadIdx.x;
  const int ty = threadIdx.y;
  const int slice = ty % p.split_k;
  const int* part_of = w.part_of;
  const int* local_row = w.local_row;

  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  const int n_chunks = p.k / gemv_chunk_elems<F>();
  const int c0 = slice * kWarpSize + lane;
  if (c0 < n_chunks) {
    const auto x = load_x<F, A, Shared>(src, c0);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] >= 0) acc[r] += dot_chunk<F, A>(w.first[r], x);
    }
  }
  for (int c = c0 + kWarpSize * p.split_k; c < n_chunks; c += kWarpSize * p.split_k) {
    const auto x = load_x<F, A, Shared>(src, c);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] >= 0) acc[r] += dot_chunk<F, A>(load_w<F>(w.row_ptr[r], w.scale_ptr[r], c), x);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);

  if (p.split_k > 1) {
    if constexpr (Shared) __syncthreads();  // the previous row block's slice sums are read
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) partial[ty][r] = acc[r];
    }
    __syncthreads();
    if (slice == 0) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float s = 0.0f;
        for (int j = 0; j < p.split_k; ++j) s += partial[ty + j][r];
        acc[r] = s;
      }
    }
  }
  if (slice != 0 || lane != 0) return;

  if constexpr (Swiglu) {
#pragma unroll
    for (int r = 0; r < RowsPerWarp; ++r) {
      if (part_of[r] < 0) continue;
      const int row = local_row[r];
      float g = acc[r], u = acc[r + RowsPerWarp];
      if (p.parts[0].bias != nullptr) g += p.parts[0].bias[row];
      if (p.parts[1].bias != nullptr) u += p.parts[1].bias[row];
      float y = silu(g) * u;
      if (p.parts[0].residual != nullptr) y += p.parts[0].residual[row];
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
      if (pt.residual != nullptr) y += pt.residual[row];
      pt.y[row] = y;
    }
  }
}

}  // namespace gemv_detail

template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Prologue = false>
__global__ void gemv_kernel(const __grid_constant__ GemvParams p) {
  static_assert(F == WeightFormat::f32 || F == WeightFormat::f16 || F == WeightFormat::bf16 ||
                    F == WeightFormat::q8_0_split,
                "GEMV streams 16-byte chunks of rows: GGUF Q8_0 must be repacked to q8_0_split "
                "(launch_repack_q8_0) and other block formats are not supported");
  static_assert(A == Activation::f32 || F == WeightFormat::q8_0_split,
                "int8 activations are only paired with q8_0_split weights (dp4a on both int8 operands)");
  static_assert(RowsPerWarp == 1 || RowsPerWarp == 2 || RowsPerWarp == 4,
                "rows per warp must be 1, 2 or 4 (the accumulators live in registers)");
  __shared__ float partial[kGemvMaxWarps][Swiglu ? 2 * RowsPerWarp : RowsPerWarp];
  gemv_detail::WarpRows<F, RowsPerWarp, Swiglu> rows;
#if LANEC_GEMV_PRELOAD
  // Weights only (constants): the first chunk of each row loads before the wait.
  gemv_detail::resolve_rows(p, blockIdx.x, rows);
  pdl_wait();  // before any access to what earlier launches write (see common.cuh)
#else
  pdl_wait();
  gemv_detail::resolve_rows(p, blockIdx.x, rows);
#endif
  if constexpr (Prologue) {
    extern __shared__ __align__(16) unsigned char formed[];
    __shared__ float scratch[kWarpSize];
    const gemv_detail::XSource src = gemv_detail::form_input<A>(p, formed, scratch);
    const int row_blocks = gemv_row_blocks(p, RowsPerWarp, Swiglu, blockDim.y / p.split_k);
    gemv_detail::finish_rows<F, A, RowsPerWarp, Swiglu, true>(p, src, rows, partial);
    for (int b = blockIdx.x + gridDim.x; b < row_blocks; b += gridDim.x) {
      gemv_detail::resolve_rows(p, b, rows);
      gemv_detail::finish_rows<F, A, RowsPerWarp, Swiglu, true>(p, src, rows, partial);
    }
  } else {
    const gemv_detail::XSource src{p.x, p.x_qs, p.x_d, p.x_lo};
    gemv_detail::finish_rows<F, A, RowsPerWarp, Swiglu, false>(p, src, rows, partial);
  }
}

// Row groups per block for a split: keeps blocks at 4..16 warps (prologue
// launches: kGemvPrologueWarps, so more rows share one formed input).
inline int gemv_groups_per_block(int split_k, bool prologue = false) {
  const int warps = prologue ? kGemvPrologueWarps : 4;
  return split_k >= warps ? 1 : warps / split_k;
}

template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, bool Prologue = false>
cudaError_t launch_gemv(const GemvParams& p, cudaStream_t stream) {
  if (p.k <= 0 || p.k % gemv_chunk_elems<F>() != 0) return invalid_launch();
  if (F == WeightFormat::q8_0_split && p.k % kQ8Block != 0) return invalid_launch();
  if (p.split_k < 1 || p.split_k > kGemvMaxWarps) return invalid_launch();
  if (p.n_parts < 1 || p.n_parts > kGemvMaxParts) return invalid_launch();
  if (Swiglu && (p.n_parts != 2 || p.parts[0].rows != p.parts[1].rows)) return invalid_launch();
  if (Prologue) {
    if (!aligned16(p.x) || p.k % kQ8Block != 0 || p.grid_sms < 1) return invalid_launch();
    if (p.x_residual != nullptr && (!aligned16(p.x_residual) || !aligned16(p.h_out))) return invalid_launch();
    if (A == Activation::f32 && p.norm_w == nullptr) return invalid_launch();  // nothing to form
  } else {
    if (A == Activation::f32 ? !aligned16(p.x) : (!aligned16(p.x_qs) || p.x_d == nullptr)) return invalid_launch();
    if (A == Activation::int8x2 && (p.x_lo == nullptr || !aligned16(p.x_lo))) return invalid_launch();
  }
  for (int q = 0; q < p.n_parts; ++q) {
    if (p.parts[q].rows <= 0 || !aligned16(p.parts[q].w)) return invalid_launch();
    if (p.parts[q].y == nullptr && !(Swiglu && q == 1)) return invalid_launch();
  }
  const int groups = gemv_groups_per_block(p.split_k, Prologue);
  const dim3 block(kWarpSize, static_cast<unsigned>(groups * p.split_k));
  const int row_blocks = gemv_row_blocks(p, RowsPerWarp, Swiglu, groups);
  if constexpr (Prologue) {
    const auto kernel = gemv_kernel<F, A, RowsPerWarp, Swiglu, true>;
    const size_t smem = gemv_prologue_smem_bytes<A>(p.k);
    // Above the 48 KiB a block gets without opting in, raise the kernel's
    // limit (a per-kernel attribute; only ever raised, once per size).
    static size_t opted_in = 48 * 1024;
    if (smem > opted_in) {
      const cudaError_t err =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      if (err != cudaSuccess) return err;
      opted_in = smem;
    }
    const int grid = std::min(row_blocks, p.grid_sms * kGemvPrologueBlocksPerSm);
    return launch_kernel(kernel, static_cast<unsigned>(grid), block, smem, stream, p);
  } else {
    return launch_kernel(gemv_kernel<F, A, RowsPerWarp, Swiglu, false>, static_cast<unsigned>(row_blocks), block, 0,
                         stream, p);
  }
}

}  // namespace lanec::kernels
