// Helpers of the standalone bench chains (norm_fold.cu, qkv_rope_fold.cu, small_chain.cu,
// gemv_bulk.cu, gemv_stream.cu, ffn_fold.cu):
// deterministic pseudo-random device buffers (bytes, floats in [lo, hi),
// f16 scales, whole q8_0_split matrices), two-word int8 vectors and their
// GEMV inputs, and the median replay time of a
// chain captured as one CUDA graph.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../kernels/lanec_kernels.cuh"

namespace lanec::bench {

// Reports a failed CUDA call (`what` names it) and exits.
inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// n zeroed elements of T on the device.
template <typename T>
T* device_alloc(size_t n) {
  T* p = nullptr;
  check_cuda(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
  check_cuda(cudaMemset(p, 0, n * sizeof(T)), "cudaMemset");
  return p;
}

__device__ inline uint32_t hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}
__global__ void fill_bytes(int8_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = static_cast<int8_t>(static_cast<int>(hash(static_cast<uint32_t>(i) ^ seed) % 255) - 127);
}
__global__ void fill_floats(float* p, size_t n, uint32_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = lo + (hi - lo) * static_cast<float>(hash(static_cast<uint32_t>(i) ^ seed) & 0xffffff) / 16777216.0f;
}
__global__ void fill_scales(uint16_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float v = 0.002f + 0.004f * static_cast<float>(hash(static_cast<uint32_t>(i) ^ seed) & 0xffff) / 65536.0f;
    p[i] = __half_as_ushort(__float2half(v));
  }
}

// The stand-in for the small launch before a GEMV in the GEMV chains
// (gemv_bulk.cu, gemv_stream.cu): one block that waits, spins for spin_ns
// (the generated programs' norm, rope and quantize launches take 1.3-2.9 us
// after their wait, time in which the next GEMV's blocks already run their
// part before the wait) and rewrites one activation byte as it is.
struct StandInParams {
  int8_t* word;
  long long spin_ns;
};

__global__ void stand_in_kernel(const StandInParams p) {
  kernels::pdl_wait();
  if (threadIdx.x == 0) {
    long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < p.spin_ns);
    *p.word = *reinterpret_cast<volatile int8_t*>(p.word);
  }
}

// A two-word int8 activation vector on the device (kernels/blocks.h planes).
struct Int8x2 {
  int8_t* qs;
  int8_t* lo;
  float* d;
};

// n zeroed values' planes.
inline Int8x2 device_int8x2(int n) {
  return {device_alloc<int8_t>(n), device_alloc<int8_t>(n), device_alloc<float>(n / kernels::kQ8Block)};
}

// A two-word int8 GEMV over x (k values, split_k warps a row group); the
// caller sets its parts.
inline kernels::GemvParams int8x2_gemv(const Int8x2& x, int k, int split_k) {
  kernels::GemvParams g{};
  g.k = k;
  g.x_qs = x.qs;
  g.x_lo = x.lo;
  g.x_d = x.d;
  g.split_k = split_k;
  return g;
}

// Random weights and scales into w, a q8_0_split matrix [rows, k]
// (q8_0_split_bytes(rows, k) bytes).
inline void fill_q8_0_split(uint8_t* w, int rows, int k, uint32_t seed) {
  fill_bytes<<<256, 256>>>(reinterpret_cast<int8_t*>(w), static_cast<size_t>(rows) * k, seed);
  fill_scales<<<256, 256>>>(reinterpret_cast<uint16_t*>(w + kernels::q8_0_split_scale_offset(rows, k)),
                            static_cast<size_t>(rows) * (k / kernels::kQ8Block), seed * 7u + 1u);
}

// µs per `per` (e.g. per layer) of the launches `record(stream)` issues,
// captured once as a graph and replayed: the median over `replays` after 3
// warm-up replays.
template <class Record>
double median_replay_us(Record record, cudaStream_t s, int replays, int per) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "capture");
  record(s);
  check_cuda(cudaStreamEndCapture(s, &graph), "capture");
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  cudaEvent_t e0, e1;
  check_cuda(cudaEventCreate(&e0), "event");
  check_cuda(cudaEventCreate(&e1), "event");
  std::vector<double> us;
  for (int r = -3; r < replays; ++r) {
    check_cuda(cudaEventRecord(e0, s), "record");
    check_cuda(cudaGraphLaunch(exec, s), "replay");
    check_cuda(cudaEventRecord(e1, s), "record");
    check_cuda(cudaEventSynchronize(e1), "sync");
    float ms = 0.0f;
    check_cuda(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    if (r >= 0) us.push_back(1000.0 * ms / per);
  }
  std::sort(us.begin(), us.end());
  check_cuda(cudaGraphExecDestroy(exec), "destroy");
  check_cuda(cudaGraphDestroy(graph), "destroy");
  check_cuda(cudaEventDestroy(e0), "destroy");
  check_cuda(cudaEventDestroy(e1), "destroy");
  return us[us.size() / 2];
}

}  // namespace lanec::bench
