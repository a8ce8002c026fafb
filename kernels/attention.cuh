// Decode attention of one query token over the KV cache (kv_cache.cuh layout)
// with grouped-query heads: query head h reads kv head h / (n_head/n_kv_head).
//   out_h = sum_t softmax_t(scale * q_h . k_t) v_t,  t in [0, len), len = pos+1
// Split-K over the context (flash-decoding): split s covers keys
// [s*ceil(len/n_split), ...) and keeps a running max m, sum of exponentials l
// and unnormalized accumulator a (online softmax); a combine kernel merges
// splits with weights exp(m_s - M). With n_split == 1 the main kernel writes
// the normalized output itself and no combine runs.
// len is read from the device (pos + 1, capped at n_ctx) so a captured graph
// replays for every step; empty splits (len < n_split) write m = -inf, l = 0.
#pragma once

#include <type_traits>

#include "common.cuh"

namespace lanec::kernels {

struct AttentionParams {
  const float* q;         // [n_head, head_dim]
  const void* k_cache;    // [n_kv_head, n_ctx, head_dim] f32 or f16
  const void* v_cache;    // same layout as k_cache
  float* out;             // [n_head, head_dim]
  float* part_acc;        // workspace [n_head, n_split, head_dim] (n_split > 1 only)
  float* part_ml;         // workspace [n_head, n_split, 2]: running max, sum (n_split > 1 only)
  const int* pos;         // device int32: position of this token; len = pos + 1
  float scale;            // score scale, normally 1/sqrt(head_dim)
  int n_head;
  int n_kv_head;          // divides n_head
  int n_ctx;              // cache capacity (positions)
  int n_split;            // context splits (grid.y), >= 1
};

// Thread mapping: block (query head, split) of kAttnWarps warps. Warp w takes
// keys t0 + kAttnKeys*w + [0, kAttnKeys), then jumps by kAttnWarps*kAttnKeys;
// lane l holds q, v-accumulator elements
// l + 32j (j < HeadDim/32), so each key row and value row is one coalesced
// warp-wide read. Per key: one shuffle reduction for the score (kAttnKeys of
// them in flight), then the online-softmax update in registers. Warps merge through shared memory.
constexpr int kAttnWarps = 4;
constexpr int kAttnKeys = 4;  // keys a warp scores per iteration

template <typename T>
__device__ __forceinline__ float load_cache(const T* p, size_t i) {
  if constexpr (sizeof(T) == 4) {
    return p[i];
  } else {
    return __half2float(p[i]);
  }
}

template <int HeadDim, CachePrecision C>
__global__ void __launch_bounds__(kAttnWarps * kWarpSize) attention_kernel(const __grid_constant__ AttentionParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  static_assert(HeadDim % kWarpSize == 0 && HeadDim <= 256,
                "head_dim must be a multiple of 32 and at most 256 (each lane holds head_dim/32 elements)");
  using T = std::conditional_t<C == CachePrecision::f32, float, __half>;
  constexpr int kPer = HeadDim / kWarpSize;
  __shared__ float sm_ml[kAttnWarps][2];
  __shared__ float sm_acc[kAttnWarps][HeadDim];

  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int h = blockIdx.x;
  const int split = blockIdx.y;
  const int kv_head = h / (p.n_head / p.n_kv_head);
  const int len = min(*p.pos + 1, p.n_ctx);
  const int per_split = (len + p.n_split - 1) / p.n_split;
  const int t0 = split * per_split;
  const int t1 = min(len, t0 + per_split);

  float q[kPer], acc[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    q[j] = p.q[h * HeadDim + lane + kWarpSize * j] * p.scale;
    acc[j] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  const T* k_head = static_cast<const T*>(p.k_cache) + static_cast<size_t>(kv_head) * p.n_ctx * HeadDim;
  const T* v_head = static_cast<const T*>(p.v_cache) + static_cast<size_t>(kv_head) * p.n_ctx * HeadDim;
  // Warp w scores kAttnKeys consecutive keys per iteration: their row loads
  // and shuffle reductions are independent, so they overlap instead of
  // forming one long latency chain per key.
  for (int t = t0 + warp * kAttnKeys; t < t1; t += kAttnWarps * kAttnKeys) {
    float s[kAttnKeys];
    float v[kAttnKeys][kPer];  // value rows loaded with the keys, before the scores are known
#pragma unroll
    for (int i = 0; i < kAttnKeys; ++i) {
      s[i] = 0.0f;
      if (t + i < t1) {
        const size_t row = static_cast<size_t>(t + i) * HeadDim;
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          s[i] += q[j] * load_cache(k_head, row + lane + kWarpSize * j);
          v[i][j] = load_cache(v_head, row + lane + kWarpSize * j);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kAttnKeys; ++i) s[i] = warp_sum(s[i]);
    float m_new = m;
#pragma unroll
    for (int i = 0; i < kAttnKeys; ++i)
      if (t + i < t1) m_new = fmaxf(m_new, s[i]);
    const float correction = expf(m - m_new);  // 0 on the first keys (m = -inf)
    l *= correction;
#pragma unroll
    for (int j = 0; j < kPer; ++j) acc[j] *= correction;
#pragma unroll
    for (int i = 0; i < kAttnKeys; ++i) {
      if (t + i >= t1) continue;
      const float weight = expf(s[i] - m_new);
      l += weight;
#pragma unroll
      for (int j = 0; j < kPer; ++j) acc[j] += weight * v[i][j];
    }
    m = m_new;
  }

  if (lane == 0) {
    sm_ml[warp][0] = m;
    sm_ml[warp][1] = l;
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j) sm_acc[warp][lane + kWarpSize * j] = acc[j];
  __syncthreads();

  float m_all = -INFINITY;
  for (int w = 0; w < kAttnWarps; ++w) m_all = fmaxf(m_all, sm_ml[w][0]);
  float weights[kAttnWarps];
  float l_all = 0.0f;
  for (int w = 0; w < kAttnWarps; ++w) {
    weights[w] = m_all == -INFINITY ? 0.0f : expf(sm_ml[w][0] - m_all);
    l_all += weights[w] * sm_ml[w][1];
  }
  // Threads of the block now cover head_dim elements, one element a thread.
  for (int d = threadIdx.x; d < HeadDim; d += blockDim.x) {
    float a = 0.0f;
    for (int w = 0; w < kAttnWarps; ++w) a += weights[w] * sm_acc[w][d];
    if (p.n_split == 1) {
      p.out[h * HeadDim + d] = a / l_all;
    } else {
      p.part_acc[(static_cast<size_t>(h) * p.n_split + split) * HeadDim + d] = a;
    }
  }
  if (p.n_split > 1 && threadIdx.x == 0) {
    p.part_ml[(h * p.n_split + split) * 2 + 0] = m_all;
    p.part_ml[(h * p.n_split + split) * 2 + 1] = l_all;
  }
}

// Thread mapping: one block per query head, one thread per head_dim element;
// each thread walks the splits (n_split small) reading part_acc coalesced.
template <int HeadDim>
__global__ void __launch_bounds__(HeadDim) attention_combine_kernel(const __grid_constant__ AttentionParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  const int h = blockIdx.x;
  const int d = threadIdx.x;
  const float* ml = p.part_ml + static_cast<size_t>(h) * p.n_split * 2;
  float m_all = -INFINITY;
  for (int s = 0; s < p.n_split; ++s) m_all = fmaxf(m_all, ml[2 * s]);
  float num = 0.0f, den = 0.0f;
  for (int s = 0; s < p.n_split; ++s) {
    if (ml[2 * s] == -INFINITY) continue;  // empty split
    const float w = expf(ml[2 * s] - m_all);
    num += w * p.part_acc[(static_cast<size_t>(h) * p.n_split + s) * HeadDim + d];
    den += w * ml[2 * s + 1];
  }
  p.out[h * HeadDim + d] = num / den;
}

template <int HeadDim, CachePrecision C>
cudaError_t launch_attention(const AttentionParams& p, cudaStream_t stream) {
  if (p.n_head <= 0 || p.n_kv_head <= 0 || p.n_head % p.n_kv_head != 0 || p.n_ctx <= 0 || p.n_split < 1)
    return invalid_launch();
  if (p.n_split > 1 && (p.part_acc == nullptr || p.part_ml == nullptr)) return invalid_launch();
  const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(p.n_split));
  const cudaError_t err = launch_kernel(attention_kernel<HeadDim, C>, grid, kAttnWarps * kWarpSize, 0, stream, p);
  if (err != cudaSuccess || p.n_split <= 1) return err;
  return launch_kernel(attention_combine_kernel<HeadDim>, static_cast<unsigned>(p.n_head), HeadDim, 0, stream, p);
}

}  // namespace lanec::kernels
