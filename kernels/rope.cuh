// Rotary position embedding in place on [n_head, head_dim] vectors at the
// position read from the device, optionally preceded by a per-head RMS norm
// (qwen3's q_norm / k_norm: x_h = x_h * rsqrt(mean(x_h^2)+eps) * w, w shared
// by the heads). Up to two vectors (Q and K) in one launch ("parts").
//
// Optionally the launch also stores this step's cache rows (rule row_write):
// a part with a `cache` stores its rotated (and normed) heads at row *pos of
// that head-major cache ([n_head, n_ctx, head_dim], kv_cache.cuh), and the
// `v` rows are copied unrotated into `v_cache` at the same row. This replaces
// the separate kv_write launch: the rotated K is already in registers. A part
// marked `cache_only` leaves x as it was (the planner proved no one reads the
// rotated x: attention reads the cache). A position outside [0, n_ctx) stores
// no cache row (the program stops before that) but still rotates x.
//
// Pair i (0 <= i < rope_dims/2) rotates by angle pos * theta_base^(-2i/rope_dims):
//   NORM mode: elements (2i, 2i+1)            (llama, GGUF's default layout)
//   NEOX mode: elements (i, i + rope_dims/2)  (qwen2, qwen3)
// Elements from rope_dims to head_dim are left unrotated (partial rotary).
// The angle is formed and reduced in double (rope_cos_sin). The norm weights
// (constants), the position and the pairs' cos and sin load or form before
// the wait; the head's elements load after it, into registers, once.
#pragma once

#include <cmath>

#include "common.cuh"
#include "kv_cache.cuh"
#include "limits.h"

namespace lanec::kernels {

enum class RopeMode { norm, neox };

constexpr int kRopeMaxParts = 2;

struct RopePart {
  float* x;              // [n_head, head_dim], rotated in place (unless cache_only)
  const float* norm_w;   // [head_dim] per-head RMS norm weight, or nullptr for no norm
  int n_head;
  void* cache;           // [n_head, n_ctx, head_dim] cache whose row *pos takes the result; nullptr = none
  bool cache_only;       // with a cache: the result goes only there, x keeps its input
};

struct RopeParams {
  RopePart parts[kRopeMaxParts];
  int n_parts;
  const int* pos;        // device int32 position
  int head_dim;          // even
  int rope_dims;         // even, <= head_dim; 0 = no rotation (norm only)
  float theta_base;      // e.g. 10000 or 1000000
  double freq_ratio;     // theta_base^(-2/rope_dims): set by launch_rope (callers leave it)
  float inv_head_dim;    // 1/head_dim: set by launch_rope (callers leave it)
  float eps;             // per-head norm epsilon
  const float* v;        // [n_v_head, head_dim] rows stored unrotated into v_cache; nullptr = none
  void* v_cache;         // [n_v_head, n_ctx, head_dim]
  int n_v_head;
  int n_ctx;             // rows of the caches (any part's cache and v_cache)
  int early_trigger_rows;  // EarlyTrigger: only below this position (see below); 0 = every position
};

// Thread mapping: one warp per head (part 0's heads first, then part 1's,
// then the V rows), 4 warps a block. Lane l handles rotation pairs l, l+32,
// ... and the unrotated tail elements rope_dims+l, ...; with the norm, the
// warp first reduces the head's sum of squares with shuffles (every lane has
// read its elements before any writes). Each element is read and written by
// one lane only, so the in-place update needs no synchronization; cache rows
// are disjoint from x.
constexpr int kRopeWarps = 4;

// Whether the constants (the pairs' inverse frequencies, the norm weights)
// load before pdl_wait(), overlapping the previous launch as the GEMV's first
// weight chunk does.
#ifndef LANEC_ROPE_PRELOAD
#define LANEC_ROPE_PRELOAD 1
#endif

// Whether the position loads, and the pairs' cos and sin form, before
// pdl_wait() (with LANEC_ROPE_PRELOAD). The position is written by the
// previous step's argmax (or the host, before the replay), two or more
// launches back: a launch starts only once every block of the one before it
// has triggered, after its wait (or at its start with early_trigger), so by
// then the launch two back has completed unless that one triggered early
// (attention.cuh's LANEC_ATTN_EARLY rests on the same order). The callers'
// contract, which verify_schedule checks (early_read_clash): no launch that
// may still run when a rope starts writes its position.
#ifndef LANEC_ROPE_EARLY_POS
#define LANEC_ROPE_EARLY_POS 1
#endif
constexpr bool kRopeEarlyPos = LANEC_ROPE_PRELOAD && LANEC_ROPE_EARLY_POS;

// Rule early_trigger lets the attention after a rope start during the
// Q/K/V GEMV, and the attention loads its cached rows before its wait: at
// long positions those loads compete with the GEMV's weight stream, which
// measured slower where that GEMV is long (Qwen3-4B and 8B) and faster
// where it is short (0.6B, 1.7B). So with the position read before the wait
// the rope triggers early only below p.early_trigger_rows, which the planner
// sets from the GEMV's size (rules/early_trigger.h; 0 = every position),
// and after its wait (as without the rule) from it on.
// -DLANEC_ROPE_EARLY_TRIGGER_ROWS=N gives every rope the bound N instead
// (0 = every position), to time another.
__device__ __forceinline__ bool rope_triggers_early_at(const RopeParams& p, int pos) {
#ifdef LANEC_ROPE_EARLY_TRIGGER_ROWS
  const int rows = LANEC_ROPE_EARLY_TRIGGER_ROWS;
#else
  const int rows = p.early_trigger_rows;
#endif
  return rows == 0 || pos < rows;
}

// Whether a V row's elements all load before any is stored (the V warps,
// below); -DLANEC_ROPE_V_LOADS_FIRST=0 times the element-by-element copy.
#ifndef LANEC_ROPE_V_LOADS_FIRST
#define LANEC_ROPE_V_LOADS_FIRST 1
#endif

constexpr int kRopeMaxPairIters = kRopeMaxHeadDim / 2 / kWarpSize;  // pairs a lane rotates, at most
constexpr int kRopeMaxTailIters = kRopeMaxHeadDim / kWarpSize;      // unrotated elements a lane, at most

// Inverse frequency of pair i, theta^(-2i/rope_dims) = ratio^i with ratio =
// theta^(-2/rope_dims) from the host: by squaring, about 2 log2(i) double
// multiplies (relative error ~1e-15), where a device pow() in double costs
// microseconds of latency in front of every launch's wait.
__device__ __forceinline__ double rope_inv_freq(double ratio, int i) {
  double result = 1.0;
  for (; i > 0; i >>= 1, ratio *= ratio)
    if (i & 1) result *= ratio;
  return result;
}

// theta^(-2/rope_dims), the launchers' part of rope_inv_freq.
inline double rope_freq_ratio(float theta_base, int rope_dims) {
  return rope_dims > 0 ? std::pow(static_cast<double>(theta_base), -2.0 / rope_dims) : 1.0;
}

// cos and sin of pos * inv_freq: the angle is formed and reduced to [-pi, pi]
// in double (at positions near 10^5 an f32 angle is off by ~1e-2 rad), then
// the reduced angle's sine and cosine are taken in f32 (their f32 results
// are all the rotation uses; the reduced f32 angle is off by < 2e-7 rad).
__device__ __forceinline__ void rope_cos_sin(double pos, double inv_freq, float* cs, float* sn) {
  const double turns = pos * inv_freq * 0.15915494309189535;  // 1 / (2 pi)
  const double reduced = (turns - rint(turns)) * 6.283185307179586;
  sincosf(static_cast<float>(reduced), sn, cs);
}

template <RopeMode Mode, CachePrecision C, bool EarlyTrigger>
__global__ void __launch_bounds__(kRopeWarps * kWarpSize) rope_kernel(const __grid_constant__ RopeParams p) {
  if constexpr (!kRopeEarlyPos) pdl_trigger_early<EarlyTrigger>();
#if !LANEC_ROPE_PRELOAD
  pdl_wait();
#endif
  const int lane = threadIdx.x % kWarpSize;
  int head = blockIdx.x * kRopeWarps + threadIdx.x / kWarpSize;
  int part = 0;
  while (part < p.n_parts && head >= p.parts[part].n_head) head -= p.parts[part++].n_head;
  int pos_row = 0;
  if constexpr (kRopeEarlyPos) {
    pos_row = *p.pos;  // written two or more launches back (see above)
    if (rope_triggers_early_at(p, pos_row)) pdl_trigger_early<EarlyTrigger>();  // uniform over the grid
  }

  if (part >= p.n_parts) {  // a V row: copied into the V cache as it is
#if LANEC_ROPE_PRELOAD
    pdl_wait();  // before any access to what earlier launches write (see common.cuh)
#endif
    if constexpr (!kRopeEarlyPos) pos_row = *p.pos;
    if (p.v == nullptr || head >= p.n_v_head || pos_row < 0 || pos_row >= p.n_ctx) return;
    const float* v = p.v + static_cast<size_t>(head) * p.head_dim;
    // Every element loads before any is stored: the compiler cannot tell the
    // cache from v, so a load after a store waits for it, and the row took
    // one L2 round trip an element where it takes one (the V warps were the
    // launch's slowest).
#if !LANEC_ROPE_V_LOADS_FIRST
    for (int i = lane; i < p.head_dim; i += kWarpSize)
      store_cache_element<C>(p.v_cache, cache_index(head, pos_row, p.n_ctx, p.head_dim, i), v[i]);
#else
    float row[kRopeMaxTailIters];
#pragma unroll
    for (int t = 0; t < kRopeMaxTailIters; ++t) {
      const int i = lane + kWarpSize * t;
      row[t] = i < p.head_dim ? v[i] : 0.0f;
    }
#pragma unroll
    for (int t = 0; t < kRopeMaxTailIters; ++t) {
      const int i = lane + kWarpSize * t;
      if (i < p.head_dim) store_cache_element<C>(p.v_cache, cache_index(head, pos_row, p.n_ctx, p.head_dim, i), row[t]);
    }
#endif
    return;
  }

  // Pair k of this lane is i = lane + 32k: elements a(i), b(i); tail element
  // t of this lane is rope_dims + lane + 32t.
  const RopePart& pt = p.parts[part];
  const int half = p.rope_dims / 2;
  auto pair_a = [&](int i) { return Mode == RopeMode::norm ? 2 * i : i; };
  auto pair_b = [&](int i) { return Mode == RopeMode::norm ? 2 * i + 1 : i + half; };
  float cs[kRopeMaxPairIters], sn[kRopeMaxPairIters];
  float wa[kRopeMaxPairIters], wb[kRopeMaxPairIters], wt[kRopeMaxTailIters];
  // The pairs' cos and sin at the position (formed before the wait when the
  // position is read there).
  auto angles = [&](int row) {
#pragma unroll
    for (int k = 0; k < kRopeMaxPairIters; ++k) {
      const int i = lane + kWarpSize * k;
      cs[k] = 1.0f;
      sn[k] = 0.0f;
      if (i < half) rope_cos_sin(static_cast<double>(row), rope_inv_freq(p.freq_ratio, i), &cs[k], &sn[k]);
    }
  };
#pragma unroll
  for (int k = 0; k < kRopeMaxPairIters; ++k) {
    const int i = lane + kWarpSize * k;
    const bool in = i < half;
    wa[k] = in && pt.norm_w != nullptr ? pt.norm_w[pair_a(i)] : 1.0f;
    wb[k] = in && pt.norm_w != nullptr ? pt.norm_w[pair_b(i)] : 1.0f;
  }
#pragma unroll
  for (int t = 0; t < kRopeMaxTailIters; ++t) {
    const int i = p.rope_dims + lane + kWarpSize * t;
    wt[t] = i < p.head_dim && pt.norm_w != nullptr ? pt.norm_w[i] : 1.0f;
  }
  if constexpr (kRopeEarlyPos) angles(pos_row);
#if LANEC_ROPE_PRELOAD
  pdl_wait();  // before any access to what earlier launches write (see common.cuh)
#endif
  if constexpr (!kRopeEarlyPos) {
    pos_row = *p.pos;
    angles(pos_row);
  }

  // The head's elements, loaded once into registers (all loads in flight
  // together; the in-place stores below then need no reloads).
  float* x = pt.x + static_cast<size_t>(head) * p.head_dim;
  float xa[kRopeMaxPairIters], xb[kRopeMaxPairIters], xt[kRopeMaxTailIters];
#pragma unroll
  for (int k = 0; k < kRopeMaxPairIters; ++k) {
    const int i = lane + kWarpSize * k;
    xa[k] = i < half ? x[pair_a(i)] : 0.0f;
    xb[k] = i < half ? x[pair_b(i)] : 0.0f;
  }
#pragma unroll
  for (int t = 0; t < kRopeMaxTailIters; ++t) {
    const int i = p.rope_dims + lane + kWarpSize * t;
    xt[t] = i < p.head_dim ? x[i] : 0.0f;
  }

  const bool store_x = !(pt.cache_only && pt.cache != nullptr);
  void* const cache = pos_row >= 0 && pos_row < p.n_ctx ? pt.cache : nullptr;
  auto result = [&](int i, float value) {
    if (store_x) x[i] = value;
    if (cache != nullptr) store_cache_element<C>(cache, cache_index(head, pos_row, p.n_ctx, p.head_dim, i), value);
  };

  float inv = 1.0f;
  if (pt.norm_w != nullptr) {
    float sumsq = 0.0f;  // zeros past the head's elements add nothing
#pragma unroll
    for (int k = 0; k < kRopeMaxPairIters; ++k) sumsq += xa[k] * xa[k] + xb[k] * xb[k];
#pragma unroll
    for (int t = 0; t < kRopeMaxTailIters; ++t) sumsq += xt[t] * xt[t];
    inv = rsqrtf(warp_sum(sumsq) * p.inv_head_dim + p.eps);  // the launcher's 1/head_dim: no divide here
  }
  // x * inv * w as the reference forms it (inv is 1 and w 1 without the norm).
  auto scaled = [&](float v, float w) { return pt.norm_w != nullptr ? v * inv * w : v; };

#pragma unroll
  for (int k = 0; k < kRopeMaxPairIters; ++k) {
    const int i = lane + kWarpSize * k;
    if (i >= half) break;
    const float va = scaled(xa[k], wa[k]), vb = scaled(xb[k], wb[k]);
    result(pair_a(i), va * cs[k] - vb * sn[k]);
    result(pair_b(i), va * sn[k] + vb * cs[k]);
  }
  // The unrotated tail changes only under the norm, but the cache row needs it either way.
  if (pt.norm_w != nullptr || cache != nullptr) {
#pragma unroll
    for (int t = 0; t < kRopeMaxTailIters; ++t) {
      const int i = p.rope_dims + lane + kWarpSize * t;
      if (i >= p.head_dim) break;
      result(i, scaled(xt[t], wt[t]));
    }
  }
}

// C is the cache precision; it matters only when a part has a cache or v is set.
// EarlyTrigger: rule early_trigger (pdl_trigger_early in common.cuh).
template <RopeMode Mode, CachePrecision C = CachePrecision::f32, bool EarlyTrigger = false>
cudaError_t launch_rope(const RopeParams& p, cudaStream_t stream) {
  // rope_dims 0 rotates nothing: a per-head norm alone (head_norm_rope held).
  if (p.head_dim <= 0 || p.head_dim % 2 != 0 || p.head_dim > kRopeMaxHeadDim || p.rope_dims < 0 || p.rope_dims % 2 != 0 ||
      p.rope_dims > p.head_dim || p.n_parts < 1 || p.n_parts > kRopeMaxParts)
    return invalid_launch();
  int heads = 0;
  bool any_cache = false;
  for (int q = 0; q < p.n_parts; ++q) {
    if (p.parts[q].n_head <= 0 || p.parts[q].x == nullptr) return invalid_launch();
    if (p.parts[q].cache_only && p.parts[q].cache == nullptr) return invalid_launch();
    any_cache = any_cache || p.parts[q].cache != nullptr;
    heads += p.parts[q].n_head;
  }
  if (p.v != nullptr) {
    if (p.v_cache == nullptr || p.n_v_head <= 0) return invalid_launch();
    any_cache = true;
    heads += p.n_v_head;
  }
  if (any_cache && p.n_ctx <= 0) return invalid_launch();
  RopeParams q = p;
  q.freq_ratio = rope_freq_ratio(p.theta_base, p.rope_dims);
  q.inv_head_dim = 1.0f / static_cast<float>(p.head_dim);
  return launch_kernel(rope_kernel<Mode, C, EarlyTrigger>, static_cast<unsigned>(ceil_div(heads, kRopeWarps)), kRopeWarps * kWarpSize,
                       0, stream, q);
}

}  // namespace lanec::kernels
