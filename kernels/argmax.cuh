// Greedy token choice that also advances the decode state on the device:
//   token = argmax(logits) (lowest index on ties; NaN never wins)
//   *token_slot = token; *pos += 1; ring[*ring_count % ring_capacity] = token; *ring_count += 1
// so the next replay of the captured step graph reads the new token and
// position with no host round trip; the host drains the ring when it likes.
#pragma once

#include "common.cuh"

namespace lanec::kernels {

struct ArgmaxParams {
  const float* logits;  // [n_vocab]
  int* token;           // device token slot (read by the embedding gather)
  int* pos;             // device position, incremented
  int* ring;            // [ring_capacity] generated tokens
  int* ring_count;      // total tokens appended so far
  int n_vocab;
  int ring_capacity;
};

// Thread mapping: a single block of kArgmaxThreads threads; thread t scans
// t, t+blockDim, ... keeping (value, index); warps reduce with shuffles, then
// warp 0 reduces the per-warp winners; thread 0 writes the state.
constexpr int kArgmaxThreads = 1024;

__device__ __forceinline__ void argmax_merge(float& v, int& i, float ov, int oi) {
  if (ov > v || (ov == v && oi < i)) {
    v = ov;
    i = oi;
  }
}

__global__ void __launch_bounds__(kArgmaxThreads) argmax_kernel(const __grid_constant__ ArgmaxParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  __shared__ float sm_v[kWarpSize];
  __shared__ int sm_i[kWarpSize];
  float best = -INFINITY;
  int best_i = p.n_vocab;  // sentinel that loses every tie
  for (int i = threadIdx.x; i < p.n_vocab; i += blockDim.x) argmax_merge(best, best_i, p.logits[i], i);
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off >>= 1)
    argmax_merge(best, best_i, __shfl_xor_sync(kFullMask, best, off), __shfl_xor_sync(kFullMask, best_i, off));
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  if (lane == 0) {
    sm_v[warp] = best;
    sm_i[warp] = best_i;
  }
  __syncthreads();
  if (warp != 0) return;
  const int n_warps = blockDim.x / kWarpSize;
  best = lane < n_warps ? sm_v[lane] : -INFINITY;
  best_i = lane < n_warps ? sm_i[lane] : p.n_vocab;
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off >>= 1)
    argmax_merge(best, best_i, __shfl_xor_sync(kFullMask, best, off), __shfl_xor_sync(kFullMask, best_i, off));
  if (lane == 0) {
    const int token = best_i < p.n_vocab ? best_i : 0;  // all -inf/NaN logits: token 0
    *p.token = token;
    *p.pos += 1;
    const int n = *p.ring_count;
    p.ring[n % p.ring_capacity] = token;
    *p.ring_count = n + 1;
  }
}

inline cudaError_t launch_argmax(const ArgmaxParams& p, cudaStream_t stream) {
  if (p.n_vocab <= 0 || p.ring_capacity <= 0) return invalid_launch();
  if (!p.logits || !p.token || !p.pos || !p.ring || !p.ring_count) return invalid_launch();
  return launch_kernel(argmax_kernel, 1, kArgmaxThreads, 0, stream, p);
}

}  // namespace lanec::kernels
