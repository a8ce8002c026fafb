// Batch-1 matrix-vector products y = W x for decode, W row-major [rows, k].
//
// Weight formats: f32, f16, bf16 and q8_0_split (GGUF Q8_0 repacked by
// launch_repack_q8_0). Numerics (Activation):
//   f32:  x is f32; weights are dequantized in registers, f32 accumulation.
//   int8: x is int8 activations (blocks.h: qs + per-32 f32 scale d_x), only
//         with q8_0_split weights; dp4a products per 32-element block give an
//         exact int32 sum, scaled by d_w * d_x and accumulated in f32.
//
// Fused forms (one launch):
//   parts:   up to 4 weight matrices with the same k and input (e.g. Q, K, V),
//            each with its own row count and output; rows are numbered
//            part 0 first, then part 1, ... and warps take consecutive rows.
//   Swiglu:  parts[0] = gate, parts[1] = up (same rows); y0 = silu(g.x) * (u.x).
//   bias:    per part, y += bias (before the SwiGLU when Swiglu).
//   residual: per part, y = W x (+ bias) + residual (after the SwiGLU).
// A null bias / residual pointer means "no such epilogue".
#pragma once

#include <cstring>

#include "common.cuh"
#include "quantize.cuh"

namespace lanec::kernels {

enum class Activation { f32, int8 };

constexpr int kGemvMaxParts = 4;
constexpr int kGemvMaxWarps = 16;

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
  int split_k;            // warps that share one row group, each on an interleaved 1/split_k of k (1..16)
  // Optional int8 form of parts[0].y (one part, or the SwiGLU output), for an
  // int8 GEMV that reads it next; nullptr = none. See quantize_output_tail.
  int8_t* y_qs;           // [rows]
  float* y_d;             // [rows/32]
  int* y_q8_count;        // [rows/32] counters, zero before the launch and after it
  // Optional norm tail (one part, rows a multiple of 32, at most
  // kGemvNormTailMaxRows): the last block forms rms_norm(parts[0].y) * norm_w
  // as f32 (norm_y) and/or int8 (norm_qs, norm_d). See norm_output_tail.
  const float* norm_w;    // [rows] or nullptr = no tail
  float norm_eps;
  float* norm_y;          // [rows] or nullptr
  int8_t* norm_qs;        // [rows] or nullptr
  float* norm_d;          // [rows/32]
  int* norm_count;        // [1] counter, zero before the launch and after it
};

// The norm tail holds the vector in dynamic shared memory: 32 KiB, within the
// 48 KiB a block gets without opt-in together with the static arrays.
constexpr int kGemvNormTailMaxRows = 8192;

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

template <WeightFormat F, Activation A>
__device__ __forceinline__ XChunk<F, A> load_x(const GemvParams& p, int c) {
  XChunk<F, A> x;
  if constexpr (A == Activation::int8) {
    x.q = __ldg(reinterpret_cast<const int4*>(p.x_qs) + c);
    x.d = __ldg(p.x_d + c / 2);  // two 16-element chunks per 32-element block
  } else {
    constexpr int n = gemv_chunk_elems<F>() / 4;
    const float4* src = reinterpret_cast<const float4*>(p.x) + c * n;
#pragma unroll
    for (int j = 0; j < n; ++j) x.v[j] = __ldg(src + j);
  }
  return x;
}

// Partial dot product of chunk c of one weight row with the activation chunk.
template <WeightFormat F, Activation A>
__device__ __forceinline__ float dot_chunk(const uint8_t* w, const uint16_t* w_scales, int c,
                                           const XChunk<F, A>& x) {
  const int4 raw = __ldg(reinterpret_cast<const int4*>(w) + c);  // the 16-byte weight load
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
    const float d = f16_bits_to_f32(__ldg(w_scales + c / 2));
    const float s = dot_i8x4_f32(raw.x, x.v[0]) + dot_i8x4_f32(raw.y, x.v[1]) + dot_i8x4_f32(raw.z, x.v[2]) +
                    dot_i8x4_f32(raw.w, x.v[3]);
    return d * s;
  } else {  // q8_0_split x int8 activations
    const float d = f16_bits_to_f32(__ldg(w_scales + c / 2));
    int s = __dp4a(raw.x, x.q.x, 0);
    s = __dp4a(raw.y, x.q.y, s);
    s = __dp4a(raw.z, x.q.z, s);
    s = __dp4a(raw.w, x.q.w, s);
    return d * x.d * static_cast<float>(s);
  }
}

// The int8 form of y (quantize.cuh's math) written by the launch that makes
// y. A 32-row block of y is finished by several thread blocks (each holds
// block_rows = 1..16 consecutive rows; block_rows divides 32): each counts
// itself done on the block's counter after its stores, and the last one to
// arrive reads the 32 values back from L2 and quantizes them, then zeroes the
// counter for the next launch (no other block touches it again in this one).
// Must be reached by every thread of the block.
__device__ __forceinline__ void quantize_output_tail(const GemvParams& p, int block_first_row, int block_rows) {
  __shared__ int is_last;
  const int group = block_first_row / kQ8Block;
  __syncthreads();  // the y writers fenced their stores (gemv_kernel's epilogue)
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const int arrived = atomicAdd(p.y_q8_count + group, 1) + 1;
    is_last = arrived == kQ8Block / block_rows;
    if (is_last) p.y_q8_count[group] = 0;
  }
  __syncthreads();
  if (!is_last || threadIdx.y != 0) return;
  __threadfence();  // the other blocks' y stores are visible from here on
  const int i = group * kQ8Block + static_cast<int>(threadIdx.x);
  quantize_block_warp(__ldcg(p.parts[0].y + i), p.y_qs + group * kQ8Block, p.y_d + group, static_cast<int>(threadIdx.x));
}

// gemv_norm_epilogue's tail: the norm of the whole output needs every row,
// so each block counts itself done after its stores and the last one to
// arrive finishes the vector. It zeroes the counter for the next launch.
// Two passes over shared memory, both latency-light (the tail is serial
// after the GEMV, so every µs counts): all threads load y (from L2) and
// norm_w with 16-byte loads where aligned, keep y * norm_w in shared memory
// and sum y^2 (fixed order: deterministic); then each thread finishes whole
// 32-element blocks: (y w) * rsqrt(mean(y^2) + eps), f32 and/or int8
// (quantize.cuh's math). A thread reads its block rotated by its index so
// the 32 threads of a warp hit 32 different banks. Must be reached by every thread.
__device__ __forceinline__ void norm_output_tail(const GemvParams& p) {
  extern __shared__ float tail_yw[];  // [rows] y * norm_w, the launch's dynamic shared memory
  __shared__ int is_last;
  __shared__ float warp_sums[kGemvMaxWarps];
  __syncthreads();  // the y writers fenced their stores (gemv_kernel's epilogue)
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int n_threads = static_cast<int>(blockDim.x * blockDim.y);
  const int n_warps = n_threads / kWarpSize;
  if (tid == 0) {
    is_last = atomicAdd(p.norm_count, 1) + 1 == static_cast<int>(gridDim.x);
    if (is_last) *p.norm_count = 0;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();  // the other blocks' y stores are visible from here on
  const int n = p.parts[0].rows;
  const float* y = p.parts[0].y;
  float sumsq = 0.0f;
  if (aligned16(y) && aligned16(p.norm_w)) {
#pragma unroll 2
    for (int i = 4 * tid; i < n; i += 4 * n_threads) {
      const float4 v = __ldcg(reinterpret_cast<const float4*>(y + i));
      const float4 w = __ldg(reinterpret_cast<const float4*>(p.norm_w + i));
      sumsq += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
      *reinterpret_cast<float4*>(tail_yw + i) = make_float4(v.x * w.x, v.y * w.y, v.z * w.z, v.w * w.w);
    }
  } else {
#pragma unroll 8
    for (int i = tid; i < n; i += n_threads) {
      const float v = __ldcg(y + i);
      sumsq += v * v;
      tail_yw[i] = v * __ldg(p.norm_w + i);
    }
  }
  sumsq = warp_sum(sumsq);
  if (threadIdx.x == 0) warp_sums[threadIdx.y] = sumsq;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < n_warps; ++w) total += warp_sums[w];
  const float inv = rsqrtf(total / static_cast<float>(n) + p.norm_eps);
  // Loops stay rolled: the tail shares the kernel's register allocation, and
  // unrolled it took 128 registers a thread, halving every GEMV's occupancy.
  for (int b = tid; b < n / kQ8Block; b += n_threads) {
    const float* block = tail_yw + b * kQ8Block;
    float amax = 0.0f;  // max |y w| * inv: inv > 0 and rounding is monotonic
#pragma unroll 1
    for (int j = 0; j < kQ8Block; ++j) amax = fmaxf(amax, fabsf(block[(j + tid) % kQ8Block]));
    const float scale = amax * inv / 127.0f;
#pragma unroll 1
    for (int j = 0; j < kQ8Block; ++j) {
      const int e = (j + tid) % kQ8Block;
      const float v = block[e] * inv;
      if (p.norm_y != nullptr) p.norm_y[b * kQ8Block + e] = v;
      if (p.norm_qs != nullptr) p.norm_qs[b * kQ8Block + e] = static_cast<int8_t>(scale > 0.0f ? roundf(v / scale) : 0.0f);
    }
    if (p.norm_qs != nullptr) p.norm_d[b] = scale;
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
template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu>
__global__ void gemv_kernel(const __grid_constant__ GemvParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  static_assert(F == WeightFormat::f32 || F == WeightFormat::f16 || F == WeightFormat::bf16 ||
                    F == WeightFormat::q8_0_split,
                "GEMV streams 16-byte chunks of rows: GGUF Q8_0 must be repacked to q8_0_split "
                "(launch_repack_q8_0) and other block formats are not supported");
  static_assert(A == Activation::f32 || F == WeightFormat::q8_0_split,
                "int8 activations are only paired with q8_0_split weights (dp4a on both int8 operands)");
  static_assert(RowsPerWarp == 1 || RowsPerWarp == 2 || RowsPerWarp == 4,
                "rows per warp must be 1, 2 or 4 (the accumulators live in registers)");
  constexpr int kRows = Swiglu ? 2 * RowsPerWarp : RowsPerWarp;
  __shared__ float partial[kGemvMaxWarps][kRows];

  const int lane = threadIdx.x;
  const int ty = threadIdx.y;
  const int slice = ty % p.split_k;
  const int groups = blockDim.y / p.split_k;
  const int first_row = (blockIdx.x * groups + ty / p.split_k) * RowsPerWarp;

  // Resolve this warp's rows to (part, local row). Swiglu: rows of part 0 and 1.
  const uint8_t* row_ptr[kRows];
  const uint16_t* scale_ptr[kRows];
  int part_of[kRows];
  int local_row[kRows];
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
    part_of[r] = part;
    local_row[r] = local;
    row_ptr[r] = nullptr;
    scale_ptr[r] = nullptr;
    if (part >= 0) {
      const GemvPart& pt = p.parts[part];
      const uint8_t* base = static_cast<const uint8_t*>(pt.w);
      if constexpr (F == WeightFormat::q8_0_split) {
        row_ptr[r] = base + static_cast<size_t>(local) * p.k;
        scale_ptr[r] = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(pt.rows) * p.k) +
                       static_cast<size_t>(local) * (p.k / kQ8Block);
      } else {
        row_ptr[r] = base + weight_row_bytes(F, p.k) * local;
      }
    }
  }

  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  const int n_chunks = p.k / gemv_chunk_elems<F>();
  for (int c = slice * kWarpSize + lane; c < n_chunks; c += kWarpSize * p.split_k) {
    const auto x = gemv_detail::load_x<F, A>(p, c);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (part_of[r] >= 0) acc[r] += gemv_detail::dot_chunk<F, A>(row_ptr[r], scale_ptr[r], c, x);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);

  if (p.split_k > 1) {
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
  if (slice == 0 && lane == 0) {
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
  // A tail reads y back from other blocks: its writers make their stores
  // visible device-wide before the block counts itself done. Every thread
  // reaches this point (no early return above): the tails have barriers.
  if ((p.y_qs != nullptr || p.norm_w != nullptr) && slice == 0 && lane == 0) __threadfence();
  if (p.y_qs != nullptr) gemv_detail::quantize_output_tail(p, static_cast<int>(blockIdx.x) * groups * RowsPerWarp, groups * RowsPerWarp);
  else if (p.norm_w != nullptr) gemv_detail::norm_output_tail(p);
}

// Row groups per block for a split: keeps blocks at 4..16 warps.
inline int gemv_groups_per_block(int split_k) { return split_k >= 4 ? 1 : 4 / split_k; }

template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu>
cudaError_t launch_gemv(const GemvParams& p, cudaStream_t stream) {
  if (p.k <= 0 || p.k % gemv_chunk_elems<F>() != 0) return invalid_launch();
  if (F == WeightFormat::q8_0_split && p.k % kQ8Block != 0) return invalid_launch();
  if (p.split_k < 1 || p.split_k > kGemvMaxWarps) return invalid_launch();
  if (p.n_parts < 1 || p.n_parts > kGemvMaxParts) return invalid_launch();
  if (Swiglu && (p.n_parts != 2 || p.parts[0].rows != p.parts[1].rows)) return invalid_launch();
  if (A == Activation::f32 ? !aligned16(p.x) : (!aligned16(p.x_qs) || p.x_d == nullptr)) return invalid_launch();
  int rows = 0;
  for (int q = 0; q < p.n_parts; ++q) {
    if (p.parts[q].rows <= 0 || !aligned16(p.parts[q].w)) return invalid_launch();
    if (p.parts[q].y == nullptr && !(Swiglu && q == 1)) return invalid_launch();
    rows += p.parts[q].rows;
  }
  if (Swiglu) rows = p.parts[0].rows;
  if (p.y_qs != nullptr && (p.y_d == nullptr || p.y_q8_count == nullptr || (p.n_parts != 1 && !Swiglu) ||
                            p.parts[0].y == nullptr || p.parts[0].rows % kQ8Block != 0))
    return invalid_launch();
  if (p.norm_w != nullptr &&
      (p.n_parts != 1 || Swiglu || p.y_qs != nullptr || p.norm_count == nullptr || p.parts[0].rows % kQ8Block != 0 ||
       p.parts[0].rows > kGemvNormTailMaxRows || (p.norm_y == nullptr && p.norm_qs == nullptr) ||
       (p.norm_qs != nullptr && p.norm_d == nullptr)))
    return invalid_launch();
  const size_t tail_smem = p.norm_w != nullptr ? static_cast<size_t>(p.parts[0].rows) * sizeof(float) : 0;
  const int groups = gemv_groups_per_block(p.split_k);
  const dim3 block(kWarpSize, static_cast<unsigned>(groups * p.split_k));
  const int grid = ceil_div(rows, RowsPerWarp * groups);
  return launch_kernel(gemv_kernel<F, A, RowsPerWarp, Swiglu>, static_cast<unsigned>(grid), block, tail_smem, stream, p);
}

}  // namespace lanec::kernels
