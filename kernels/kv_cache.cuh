// KV-cache row write: stores this step's K and V vectors ([n_kv_head, head_dim]
// f32) at the position read from the device.
//
// Cache layout (one K and one V array per layer), head-major:
//   cache[kv_head][t][d], i.e. element (kv_head * n_ctx + t) * head_dim + d.
// Attention streams one head's keys for consecutive t as one contiguous
// range, which is why the layout is head-major rather than [t][kv_head][d].
// Elements are f32 or f16 (CachePrecision).
//
// With rule row_write the rows are usually stored by the RoPE launch that
// makes K (rope.cuh); this kernel serves the plans where that fusion does not
// apply or is held.
#pragma once

#include "common.cuh"

namespace lanec::kernels {

// Element i of a cache of precision C takes v (f16: rounded to nearest).
// Shared by the kv_write kernel and the RoPE launch's cache row write.
template <CachePrecision C>
__device__ __forceinline__ void store_cache_element(void* cache, size_t i, float v) {
  if constexpr (C == CachePrecision::f32)
    static_cast<float*>(cache)[i] = v;
  else
    static_cast<__half*>(cache)[i] = __float2half_rn(v);
}

// Element d of row `pos` of head `head` in a head-major cache.
__device__ __forceinline__ size_t cache_index(int head, int pos, int n_ctx, int head_dim, int d) {
  return (static_cast<size_t>(head) * n_ctx + pos) * head_dim + d;
}

struct KvWriteParams {
  const float* k;   // [n_kv_head * head_dim]
  const float* v;   // [n_kv_head * head_dim]
  void* k_cache;    // [n_kv_head, n_ctx, head_dim] of the cache precision
  void* v_cache;
  const int* pos;   // device int32; a position >= n_ctx writes nothing (the program stops first)
  int n_kv_head;
  int head_dim;
  int n_ctx;
};

// Thread mapping: one thread per element of K (and the same element of V);
// consecutive threads write consecutive d of one head row (coalesced).
constexpr int kKvWriteThreads = 256;

template <CachePrecision C>
__global__ void __launch_bounds__(kKvWriteThreads) kv_write_kernel(const __grid_constant__ KvWriteParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  const int pos = *p.pos;
  if (e >= p.n_kv_head * p.head_dim || pos < 0 || pos >= p.n_ctx) return;
  const int head = e / p.head_dim;
  const size_t dst = cache_index(head, pos, p.n_ctx, p.head_dim, e % p.head_dim);
  store_cache_element<C>(p.k_cache, dst, p.k[e]);
  store_cache_element<C>(p.v_cache, dst, p.v[e]);
}

template <CachePrecision C>
cudaError_t launch_kv_write(const KvWriteParams& p, cudaStream_t stream) {
  if (p.n_kv_head <= 0 || p.head_dim <= 0 || p.n_ctx <= 0) return invalid_launch();
  return launch_kernel(kv_write_kernel<C>, static_cast<unsigned>(ceil_div(p.n_kv_head * p.head_dim, kKvWriteThreads)),
                       kKvWriteThreads, 0, stream, p);
}

}  // namespace lanec::kernels
