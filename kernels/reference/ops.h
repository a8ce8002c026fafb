// Plain C++ references of every kernel family (kernels/<family>.cuh), on
// host vectors, accumulating in double. The kernel sweep
// (tests/kernels/kernel_sweep.cu) compares each kernel against these.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "numeric.h"

namespace lanec::kernels::ref {

inline float silu(float x) { return static_cast<float>(x / (1.0 + std::exp(-static_cast<double>(x)))); }

// y = x * rsqrt(mean(x^2) + eps) * w.
inline std::vector<float> rms_norm(const std::vector<float>& x, const std::vector<float>& w, float eps) {
  double sumsq = 0.0;
  for (float v : x) sumsq += static_cast<double>(v) * v;
  const double inv = 1.0 / std::sqrt(sumsq / static_cast<double>(x.size()) + eps);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(x[i] * inv * w[i]);
  return y;
}

// y[r] = sum_i w[r*k + i] * x[i], w already dequantized to f32.
inline std::vector<float> gemv(const std::vector<float>& w, const std::vector<float>& x, int rows, int k) {
  std::vector<float> y(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int i = 0; i < k; ++i) s += static_cast<double>(w[static_cast<size_t>(r) * k + i]) * x[i];
    y[r] = static_cast<float>(s);
  }
  return y;
}

// Int8 numerics: per 32-block exact integer dot, scaled by d_w * d_x.
inline std::vector<float> gemv_int8(const std::vector<int8_t>& wq, const std::vector<float>& wd,
                                    const std::vector<int8_t>& xq, const std::vector<float>& xd, int rows, int k) {
  std::vector<float> y(static_cast<size_t>(rows));
  const int nb = k / kQ8Block;
  for (int r = 0; r < rows; ++r) {
    double s = 0.0;
    for (int b = 0; b < nb; ++b) {
      int dot = 0;
      for (int j = 0; j < kQ8Block; ++j)
        dot += wq[static_cast<size_t>(r) * k + b * 32 + j] * xq[static_cast<size_t>(b) * 32 + j];
      s += static_cast<double>(wd[static_cast<size_t>(r) * nb + b]) * xd[b] * dot;
    }
    y[r] = static_cast<float>(s);
  }
  return y;
}

// RoPE in place on [n_head, head_dim] with optional per-head RMS norm first.
inline void rope(std::vector<float>& x, int n_head, int head_dim, int rope_dims, bool neox, float theta_base,
                 int pos, const float* norm_w, float eps) {
  for (int h = 0; h < n_head; ++h) {
    float* v = x.data() + static_cast<size_t>(h) * head_dim;
    if (norm_w != nullptr) {
      std::vector<float> head(v, v + head_dim), w(norm_w, norm_w + head_dim);
      const std::vector<float> y = rms_norm(head, w, eps);
      std::copy(y.begin(), y.end(), v);
    }
    const int half = rope_dims / 2;
    for (int i = 0; i < half; ++i) {
      const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
      const double angle = pos * std::pow(static_cast<double>(theta_base), -2.0 * i / rope_dims);
      const double c = std::cos(angle), s = std::sin(angle);
      const double xa = v[a], xb = v[b];
      v[a] = static_cast<float>(xa * c - xb * s);
      v[b] = static_cast<float>(xa * s + xb * c);
    }
  }
}

// Stores rows [n_head, head_dim] at row pos of a head-major cache
// [n_head, n_ctx, head_dim] held as f32 values; with f16, each value is
// rounded to f16 first (what an f16 cache holds). A position outside
// [0, n_ctx) stores nothing (the kv_write and RoPE kernels' contract).
inline void cache_row_write(std::vector<float>& cache, const std::vector<float>& rows, int n_head, int head_dim,
                            int n_ctx, int pos, bool f16) {
  if (pos < 0 || pos >= n_ctx) return;
  for (int h = 0; h < n_head; ++h)
    for (int d = 0; d < head_dim; ++d) {
      const float v = rows[static_cast<size_t>(h) * head_dim + d];
      cache[(static_cast<size_t>(h) * n_ctx + pos) * head_dim + d] = f16 ? f16_to_f32(f32_to_f16(v)) : v;
    }
}

// Decode attention over caches given as f32 [n_kv_head, n_ctx, head_dim].
inline std::vector<float> attention(const std::vector<float>& q, const std::vector<float>& k_cache,
                                    const std::vector<float>& v_cache, int n_head, int n_kv_head, int head_dim,
                                    int n_ctx, int len, float scale) {
  std::vector<float> out(static_cast<size_t>(n_head) * head_dim);
  const int group = n_head / n_kv_head;
  for (int h = 0; h < n_head; ++h) {
    const size_t base = static_cast<size_t>(h / group) * n_ctx * head_dim;
    std::vector<double> score(static_cast<size_t>(len));
    double mx = -INFINITY;
    for (int t = 0; t < len; ++t) {
      double s = 0.0;
      for (int d = 0; d < head_dim; ++d)
        s += static_cast<double>(q[static_cast<size_t>(h) * head_dim + d]) * k_cache[base + static_cast<size_t>(t) * head_dim + d];
      score[t] = s * scale;
      mx = std::max(mx, score[t]);
    }
    double den = 0.0;
    for (int t = 0; t < len; ++t) den += (score[t] = std::exp(score[t] - mx));
    for (int d = 0; d < head_dim; ++d) {
      double num = 0.0;
      for (int t = 0; t < len; ++t) num += score[t] * v_cache[base + static_cast<size_t>(t) * head_dim + d];
      out[static_cast<size_t>(h) * head_dim + d] = static_cast<float>(num / den);
    }
  }
  return out;
}

// Lowest index of the largest value.
inline int argmax(const std::vector<float>& v) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(v.size()); ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

}  // namespace lanec::kernels::ref
