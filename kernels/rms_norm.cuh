// RMS norm of one vector: y = x * rsqrt(mean(x^2) + eps) * w, with two fused
// forms selected by template flags:
//   AddResidual: h = x + residual is formed first, written to h_out (the new
//                residual stream) and normalized;
//   Quantize:    y is also (or only) written as int8 activations (blocks.h
//                layout; with out_lo the two-word form) for the int8 GEMV
//                that consumes it.
#pragma once

#include "common.cuh"
#include "limits.h"
#include "quantize.cuh"

namespace lanec::kernels {

struct RmsNormParams {
  const float* x;         // [n]
  const float* residual;  // [n]; used only when AddResidual
  float* h_out;           // [n] = x + residual; used only when AddResidual (may alias x)
  const float* w;         // [n] norm weight
  float* out;             // [n] f32 result, or nullptr when only the int8 form is needed
  int8_t* out_qs;         // [n] int8 result; used only when Quantize
  float* out_d;           // [n/32] block scales; used only when Quantize
  float eps;
  int n;                  // at most kRmsNormMaxLength; a multiple of 32 when Quantize
  int8_t* out_lo;         // [n] low words of the two-word form, or nullptr (one word); Quantize only
  float inv_n;            // 1/n: set by launch_rms_norm (callers leave it)
};

// Thread mapping: blocks of T threads, T = n/2 rounded up to whole warps and
// at most kRmsNormThreads (rms_norm_threads; at n 1024, 512 threads measured
// 0.6 % faster a token on Qwen3-0.6B than 1024, and 256 no faster; at n 2048
// 512 and 1024 ran alike, at 4096 512 was 0.2 % slower, docs/performance.md);
// thread t of every block holds elements t, t + T, ... (PerThread of them) in registers from
// the load to the store, and every block sums the whole vector (a few KB
// from L2), but block j writes only element j of each thread's share, so the
// writes and int8 blocks after the sum spread over PerThread SMs (measured
// on Qwen3-8B, n 4096: the norm's cost in the replayed step fell from 4.0 to
// 3.0 µs, +2.6 % a token; docs/performance.md). The only barrier is the
// sum's. With Quantize, a warp's 32 elements are one int8 block (lane =
// element): each warp reduces its blocks' max|y| with shuffles, side by side.
// Where h_out or out overlaps x or the residual (in place), one block does it all.
constexpr int kRmsNormThreads = 1024;
constexpr int kRmsNormMaxPerThread = kRmsNormMaxLength / kRmsNormThreads;  // 16

// Threads a block for a vector of n: two elements a thread up to 1024 threads.
inline int rms_norm_threads(int n) {
  return std::min(kRmsNormThreads, ceil_div(std::max(n, 2), 2 * kWarpSize) * kWarpSize);
}

// Whether the norm weights load before pdl_wait() (constants, like the GEMV's
// first weight chunk: the load overlaps the previous launch).
#ifndef LANEC_NORM_PRELOAD
#define LANEC_NORM_PRELOAD 1
#endif

// Whether this block writes element j of each thread's share (rms_norm's
// thread mapping: one block writes all, or block j writes j).
__device__ __forceinline__ bool rms_norm_writes(int j) { return gridDim.x == 1 || j == static_cast<int>(blockIdx.x); }

template <bool AddResidual, bool Quantize, int PerThread, bool EarlyTrigger>
__global__ void __launch_bounds__(kRmsNormThreads) rms_norm_kernel(const __grid_constant__ RmsNormParams p) {
  pdl_trigger_early<EarlyTrigger>();
  __shared__ float scratch[kWarpSize];
  float w[PerThread];
#if !LANEC_NORM_PRELOAD
  pdl_wait();
#endif
#pragma unroll
  for (int j = 0; j < PerThread; ++j) {
    const int i = threadIdx.x + j * static_cast<int>(blockDim.x);
    w[j] = i < p.n ? p.w[i] : 0.0f;
  }
#if LANEC_NORM_PRELOAD
  pdl_wait();  // before any access to what earlier launches write (see common.cuh)
#endif
  float h[PerThread];
  float sumsq = 0.0f;
#pragma unroll
  for (int j = 0; j < PerThread; ++j) {
    const int i = threadIdx.x + j * static_cast<int>(blockDim.x);
    h[j] = 0.0f;
    if (i < p.n) {
      h[j] = p.x[i];
      if constexpr (AddResidual) h[j] += p.residual[i];
    }
    sumsq += h[j] * h[j];
  }
  // The mean by the launcher's 1/n: a divide here waited on the sum.
  const float inv = rsqrtf(block_sum(sumsq, scratch) * p.inv_n + p.eps);
  const int lane = threadIdx.x % kWarpSize;
  float y[PerThread], amax[PerThread];
#pragma unroll
  for (int j = 0; j < PerThread; ++j) {
    y[j] = h[j] * inv * w[j];  // 0 past n (h and w are)
    amax[j] = fabsf(y[j]);
  }
  if constexpr (Quantize) warp_max_each(amax);
#pragma unroll
  for (int j = 0; j < PerThread; ++j) {
    const int i = threadIdx.x + j * static_cast<int>(blockDim.x);
    if (i >= p.n || !rms_norm_writes(j)) continue;
    if constexpr (AddResidual) p.h_out[i] = h[j];
    if (!Quantize || p.out != nullptr) p.out[i] = y[j];
    if constexpr (Quantize) quantize_block_with_max(y[j], amax[j], p.out_qs, p.out_d, p.out_lo, i / kQ8Block, lane);
  }
}

namespace rms_norm_detail {

template <bool AddResidual, bool Quantize, int PerThread, bool EarlyTrigger>
cudaError_t launch(const RmsNormParams& p, cudaStream_t stream) {
  const int threads = rms_norm_threads(p.n);
  if (p.n > PerThread * threads) {
    if constexpr (PerThread < kRmsNormMaxPerThread) return launch<AddResidual, Quantize, 2 * PerThread, EarlyTrigger>(p, stream);
    return invalid_launch();
  }
  // In place (h_out or out over x or the residual) other blocks would read
  // what one has written: one block then.
  auto over_input = [&](const float* y) {
    return overlaps(y, p.x, p.n) || (AddResidual && overlaps(y, p.residual, p.n));
  };
  const bool in_place = (AddResidual && over_input(p.h_out)) || over_input(p.out);
  const unsigned blocks = in_place ? 1 : static_cast<unsigned>(ceil_div(p.n, threads));
  return launch_kernel(rms_norm_kernel<AddResidual, Quantize, PerThread, EarlyTrigger>, blocks, threads, 0, stream, p);
}

}  // namespace rms_norm_detail

// EarlyTrigger: rule early_trigger (pdl_trigger_early in common.cuh).
template <bool AddResidual, bool Quantize, bool EarlyTrigger = false>
cudaError_t launch_rms_norm(const RmsNormParams& p, cudaStream_t stream) {
  if (p.n <= 0 || p.n > kRmsNormMaxPerThread * kRmsNormThreads || (Quantize && p.n % kQ8Block != 0))
    return invalid_launch();
  if (AddResidual && (p.residual == nullptr || p.h_out == nullptr)) return invalid_launch();
  if (Quantize ? (p.out_qs == nullptr || p.out_d == nullptr) : p.out == nullptr) return invalid_launch();
  RmsNormParams q = p;
  q.inv_n = 1.0f / static_cast<float>(p.n);
  return rms_norm_detail::launch<AddResidual, Quantize, 1, EarlyTrigger>(q, stream);
}

}  // namespace lanec::kernels
