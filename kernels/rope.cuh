// Rotary position embedding in place on [n_head, head_dim] vectors at the
// position read from the device, optionally preceded by a per-head RMS norm
// (qwen3's q_norm / k_norm: x_h = x_h * rsqrt(mean(x_h^2)+eps) * w, w shared
// by the heads). Up to two vectors (Q and K) in one launch ("parts").
//
// Pair i (0 <= i < rope_dims/2) rotates by angle pos * theta_base^(-2i/rope_dims):
//   NORM mode: elements (2i, 2i+1)            (llama, GGUF's default layout)
//   NEOX mode: elements (i, i + rope_dims/2)  (qwen2, qwen3)
// Elements from rope_dims to head_dim are left unrotated (partial rotary).
// The angle is computed in double: at positions near 10^5 an f32 angle is
// off by ~1e-2 rad; double costs nothing at n_head*head_dim/2 angles a step.
#pragma once

#include "common.cuh"

namespace lanec::kernels {

enum class RopeMode { norm, neox };

constexpr int kRopeMaxParts = 2;

struct RopePart {
  float* x;              // [n_head, head_dim], rotated in place
  const float* norm_w;   // [head_dim] per-head RMS norm weight, or nullptr for no norm
  int n_head;
};

struct RopeParams {
  RopePart parts[kRopeMaxParts];
  int n_parts;
  const int* pos;        // device int32 position
  int head_dim;          // even
  int rope_dims;         // even, <= head_dim; 0 = no rotation (norm only)
  float theta_base;      // e.g. 10000 or 1000000
  float eps;             // per-head norm epsilon
};

// Thread mapping: one warp per head (part 0's heads first), 4 warps a block.
// Lane l handles rotation pairs l, l+32, ... and the unrotated tail elements
// rope_dims+l, ...; with the norm, the warp first reduces the head's sum of
// squares with shuffles (every lane has read its elements before any writes).
constexpr int kRopeWarps = 4;

template <RopeMode Mode>
__global__ void __launch_bounds__(kRopeWarps * kWarpSize) rope_kernel(const __grid_constant__ RopeParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  const int lane = threadIdx.x % kWarpSize;
  int head = blockIdx.x * kRopeWarps + threadIdx.x / kWarpSize;
  int part = 0;
  while (part < p.n_parts && head >= p.parts[part].n_head) head -= p.parts[part++].n_head;
  if (part >= p.n_parts) return;
  const RopePart& pt = p.parts[part];
  float* x = pt.x + static_cast<size_t>(head) * p.head_dim;

  float inv = 1.0f;
  if (pt.norm_w != nullptr) {
    float sumsq = 0.0f;
    for (int i = lane; i < p.head_dim; i += kWarpSize) sumsq += x[i] * x[i];
    inv = rsqrtf(warp_sum(sumsq) / static_cast<float>(p.head_dim) + p.eps);
  }
  auto scaled = [&](int i) { return pt.norm_w != nullptr ? x[i] * inv * pt.norm_w[i] : x[i]; };

  const double pos = static_cast<double>(*p.pos);
  const int half = p.rope_dims / 2;
  for (int i = lane; i < half; i += kWarpSize) {
    const int a = Mode == RopeMode::norm ? 2 * i : i;
    const int b = Mode == RopeMode::norm ? 2 * i + 1 : i + half;
    const double angle = pos * pow(static_cast<double>(p.theta_base), -2.0 * i / p.rope_dims);
    double s, c;
    sincos(angle, &s, &c);
    const float cs = static_cast<float>(c), sn = static_cast<float>(s);
    const float xa = scaled(a), xb = scaled(b);
    x[a] = xa * cs - xb * sn;
    x[b] = xa * sn + xb * cs;
  }
  if (pt.norm_w != nullptr) {
    for (int i = p.rope_dims + lane; i < p.head_dim; i += kWarpSize) x[i] = scaled(i);
  }
}

template <RopeMode Mode>
cudaError_t launch_rope(const RopeParams& p, cudaStream_t stream) {
  // rope_dims 0 rotates nothing: a per-head norm alone (head_norm_rope held).
  if (p.head_dim <= 0 || p.head_dim % 2 != 0 || p.rope_dims < 0 || p.rope_dims % 2 != 0 ||
      p.rope_dims > p.head_dim || p.n_parts < 1 || p.n_parts > kRopeMaxParts)
    return invalid_launch();
  int heads = 0;
  for (int q = 0; q < p.n_parts; ++q) {
    if (p.parts[q].n_head <= 0 || p.parts[q].x == nullptr) return invalid_launch();
    heads += p.parts[q].n_head;
  }
  return launch_kernel(rope_kernel<Mode>, static_cast<unsigned>(ceil_div(heads, kRopeWarps)), kRopeWarps * kWarpSize, 0,
                       stream, p);
}

}  // namespace lanec::kernels
