// Int8 activation quantization (the layout in blocks.h): for each block of 32
// f32 values d = max|x|/127 and qs = round(x 127/max|x|), and for the two-word form
// (activations: two-pass-int8) a low word per value. Used standalone for the
// FFN-down GEMV's input (the SwiGLU output; with a SwiGLU input the launch
// forms x = silu(gate) * up itself) and fused into rms_norm and attention, in
// both forms.
#pragma once

#include "common.cuh"

namespace lanec::kernels {

// The low word of a two-word int8 activation (activations: two-pass-int8):
// the remainder x - q d in units of d/254, rounded and clamped to +-127, so
// x ~ d (q + lo/254) to about 1/(2*127*254) of the block's largest value.
__device__ __forceinline__ int8_t quantize_low_word(float v, float q, float d, float r) {
  if (!(r > 0.0f)) return 0;
  const float lo = roundf(fmaf(-q, d, v) * (254.0f * r));
  return static_cast<int8_t>(fminf(127.0f, fmaxf(-127.0f, lo)));
}

// Quantizes 32-element block `block` of the int8 vector (qs, d; lo too for
// the two-word form, else nullptr), held one value a lane, given the block's
// max|v| (`amax`, reduced over the warp): lane 0 writes d, every lane its
// value's words.
__device__ __forceinline__ void quantize_block_with_max(float v, float amax, int8_t* qs, float* d, int8_t* lo,
                                                        int block, int lane) {
  // d and its reciprocal (blocks.h q8_scales), then multiplies only: q = round(v/d)
  // and the remainder over d/254 put three divides one after another on each
  // quantizing launch's chain (2.4-2.7 % a token on Qwen3-0.6B, docs/performance.md).
  float scale, r;
  q8_scales(amax, scale, r);
  const float q = r > 0.0f ? roundf(v * r) : 0.0f;
  const int i = block * kQ8Block + lane;
  qs[i] = static_cast<int8_t>(q);
  if (lane == 0) d[block] = scale;
  if (lo != nullptr) lo[i] = quantize_low_word(v, q, scale, r);
}

// The same with the max reduced here: all 32 lanes must call it.
__device__ __forceinline__ void quantize_block_warp(float v, int8_t* qs, float* d, int8_t* lo, int block,
                                                    int lane) {
  quantize_block_with_max(v, warp_max(fabsf(v)), qs, d, lo, block, lane);
}

struct QuantizeParams {
  const float* x;   // [n] (with a SwiGLU input: the gate)
  int8_t* out_qs;   // [n]
  float* out_d;     // [n/32]
  int n;            // a multiple of 32
  int8_t* out_lo;   // [n] low words (two-word form), or nullptr
  const float* up;  // [n] SwiGLU input only: the up vector
  float* out;       // [n] SwiGLU input only: silu(gate) * up in f32 too, or nullptr
};

// Thread mapping: one warp per 32-element block, lane = element (one
// coalesced 128-byte read and 32-byte write per warp); 8 warps a block.
// SwigluInput: the value is silu(x) * up, formed here, so the SwiGLU needs no
// launch of its own and its gate/up GEMV no epilogue (rule glu_pair declines
// for it under int8 activations).
constexpr int kQuantizeThreads = 256;

template <bool SwigluInput, bool EarlyTrigger>
__global__ void __launch_bounds__(kQuantizeThreads) quantize_q8_kernel(const __grid_constant__ QuantizeParams p) {
  pdl_trigger_early<EarlyTrigger>();
  pdl_wait();  // before any global memory access (see common.cuh)
  const int lane = threadIdx.x % kWarpSize;
  const int block = blockIdx.x * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
  if (block >= p.n / kQ8Block) return;  // whole warps leave together
  const int i = block * kQ8Block + lane;
  float v = p.x[i];
  if constexpr (SwigluInput) {
    v = silu(v) * p.up[i];
    if (p.out != nullptr) p.out[i] = v;
  }
  quantize_block_warp(v, p.out_qs, p.out_d, p.out_lo, block, lane);
}

// EarlyTrigger: rule early_trigger (pdl_trigger_early in common.cuh).
template <bool SwigluInput = false, bool EarlyTrigger = false>
cudaError_t launch_quantize_q8(const QuantizeParams& p, cudaStream_t stream) {
  if (p.n <= 0 || p.n % kQ8Block != 0) return invalid_launch();
  if (SwigluInput && p.up == nullptr) return invalid_launch();
  const int blocks = p.n / kQ8Block;
  const int warps_per_cta = kQuantizeThreads / kWarpSize;
  return launch_kernel(quantize_q8_kernel<SwigluInput, EarlyTrigger>, static_cast<unsigned>(ceil_div(blocks, warps_per_cta)),
                       kQuantizeThreads, 0, stream, p);
}

}  // namespace lanec::kernels
