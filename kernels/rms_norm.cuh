// RMS norm of one vector: y = x * rsqrt(mean(x^2) + eps) * w, with two fused
// forms selected by template flags:
//   AddResidual: h = x + residual is formed first, written to h_out (the new
//                residual stream) and normalized;
//   Quantize:    y is also (or only) written as int8 activations (blocks.h
//                layout) for the int8 GEMV that consumes it.
#pragma once

#include "common.cuh"
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
  int n;                  // a multiple of 32 when Quantize
};

// Thread mapping: one block of kRmsNormThreads threads for the vector.
// Pass 1: thread t reads elements t, t+blockDim, ... (coalesced), forms h and
// the sum of squares; block reduction. Pass 2: element-strided again, or with
// Quantize one warp per 32-element block (lane = element) so each warp can
// take the block's max|y| with shuffles. Pass 2 re-reads h from global memory;
// the barrier inside block_sum makes pass 1's writes visible.
constexpr int kRmsNormThreads = 1024;

template <bool AddResidual, bool Quantize>
__global__ void __launch_bounds__(kRmsNormThreads) rms_norm_kernel(const __grid_constant__ RmsNormParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  __shared__ float scratch[kWarpSize];
  float sumsq = 0.0f;
  for (int i = threadIdx.x; i < p.n; i += blockDim.x) {
    float v = p.x[i];
    if constexpr (AddResidual) {
      v += p.residual[i];
      p.h_out[i] = v;
    }
    sumsq += v * v;
  }
  const float inv = rsqrtf(block_sum(sumsq, scratch) / static_cast<float>(p.n) + p.eps);
  const float* h = AddResidual ? p.h_out : p.x;
  if constexpr (Quantize) {
    const int lane = threadIdx.x % kWarpSize;
    const int n_warps = blockDim.x / kWarpSize;
    for (int b = threadIdx.x / kWarpSize; b < p.n / kQ8Block; b += n_warps) {
      const int i = b * kQ8Block + lane;
      const float y = h[i] * inv * p.w[i];
      if (p.out != nullptr) p.out[i] = y;
      quantize_block_warp(y, p.out_qs + b * kQ8Block, p.out_d + b, lane);
    }
  } else {
    for (int i = threadIdx.x; i < p.n; i += blockDim.x) p.out[i] = h[i] * inv * p.w[i];
  }
}

template <bool AddResidual, bool Quantize>
cudaError_t launch_rms_norm(const RmsNormParams& p, cudaStream_t stream) {
  if (p.n <= 0 || (Quantize && p.n % kQ8Block != 0)) return invalid_launch();
  if (AddResidual && (p.residual == nullptr || p.h_out == nullptr)) return invalid_launch();
  if (Quantize ? (p.out_qs == nullptr || p.out_d == nullptr) : p.out == nullptr) return invalid_launch();
  return launch_kernel(rms_norm_kernel<AddResidual, Quantize>, 1, kRmsNormThreads, 0, stream, p);
}

}  // namespace lanec::kernels
