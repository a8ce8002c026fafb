// The CPU schedule executor (cpu_schedule.h).
#include "lib/plan/cpu_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/reference/numeric.h"
#include "lib/common/error.h"
#include "lib/quant/codecs.h"
#include "lib/ref/parallel.h"

namespace lanec {

// A GEMV's input as doubles (exact for f32 and int8 values); int8 inputs add
// their per-32 block scales.
struct CpuGemvInput {
  std::vector<double> x;
  const float* block_scale = nullptr;
};

namespace {

constexpr int64_t kBlock = 32;

float silu(float x) { return static_cast<float>(x / (1.0 + std::exp(-static_cast<double>(x)))); }

constexpr int kRowsAtOnce = 4;

// Dot products of R consecutive rows of w (k wide) with the input. Each row
// is summed in double in index order (int8: sum_b d_x[b] * sum_j W[r,j] q_x[j]),
// exactly as one row alone would be: R rows run together only so that their
// dependent add chains overlap, so every result is the same for any R.
template <int R>
void dot_rows(const float* w, size_t k, const CpuGemvInput& in, float* out) {
  double sum[R] = {};
  const double* x = in.x.data();
  if (in.block_scale != nullptr) {
    for (size_t b = 0; b < k / kBlock; ++b) {
      double block[R] = {};
      for (size_t j = b * kBlock; j < (b + 1) * kBlock; ++j)
        for (int r = 0; r < R; ++r) block[r] += static_cast<double>(w[static_cast<size_t>(r) * k + j]) * x[j];
      for (int r = 0; r < R; ++r) sum[r] += block[r] * in.block_scale[b];
    }
  } else {
    for (size_t i = 0; i < k; ++i)
      for (int r = 0; r < R; ++r) sum[r] += static_cast<double>(w[static_cast<size_t>(r) * k + i]) * x[i];
  }
  for (int r = 0; r < R; ++r) out[r] = static_cast<float>(sum[r]);
}

}  // namespace

void quantize_q8_blocks(const float* x, int64_t n, int8_t* qs, float* d, int8_t* lo) {
  const int count = static_cast<int>(n);
  kernels::ref::quantize_q8(x, count, qs, d);
  if (lo != nullptr) kernels::ref::quantize_q8_low(x, count, qs, d, lo);
}

void CpuScheduleExecutor::quantize_into(Storage& q, const float* x, int64_t n) {
  quantize_q8_blocks(x, n, q.qs.data(), q.qd.data(), q.ql.empty() ? nullptr : q.ql.data());
}

CpuScheduleExecutor::CpuScheduleExecutor(const Schedule& schedule, WeightStore& weights,
                                         unsigned threads)
    : schedule_(schedule), weights_(weights), threads_(threads) {
  for (const Buffer& b : schedule.buffers) {
    if (b.is_view() || b.role == BufferRole::weight) continue;
    Storage& s = storage_[b.name];
    size_t n = static_cast<size_t>(b.elements);
    if (is_int8_form(b.form)) {
      s.qs.assign(n, 0);
      if (b.form == BufferForm::q8x2) s.ql.assign(n, 0);
      s.qd.assign(n / kBlock, 0.0f);
    } else if (b.type == GgmlType::I32) {
      s.i32.assign(n, 0);
    } else {
      s.f32.assign(n, 0.0f);
    }
  }
  if (const ArgmaxLaunch* a = schedule.find_argmax()) next_token_ = a->out;
  token_ = schedule.token_param();
  pos_ = schedule.pos_param();
  logits_ = schedule.logits_output();
  LANEC_ASSERT(!logits_.empty(), "schedule without an f32 output");
}

float* CpuScheduleExecutor::f32(const std::string& name, int64_t elements) {
  auto [root, offset] = schedule_.storage_of(name);
  Storage& s = storage_.at(root->name);
  LANEC_ASSERT(offset >= 0 && offset + elements <= static_cast<int64_t>(s.f32.size()),
               "buffer '" + name + "' [" + std::to_string(offset) + ", +" + std::to_string(elements) +
                   ") overruns its storage '" + root->name + "' of " + std::to_string(s.f32.size()));
  return s.f32.data() + offset;
}

const float* CpuScheduleExecutor::f32_in(const std::string& name, int64_t elements) {
  const Buffer& b = schedule_.buffer(name);
  if (b.role == BufferRole::weight) {
    const std::vector<float>& w = weight(name);
    LANEC_ASSERT(static_cast<int64_t>(w.size()) >= elements, "weight '" + name + "' too short");
    return w.data();
  }
  return f32(name, elements);
}

int32_t* CpuScheduleExecutor::i32(const std::string& name) {
  auto [root, offset] = schedule_.storage_of(name);
  Storage& s = storage_.at(root->name);
  LANEC_ASSERT(offset < static_cast<int64_t>(s.i32.size()), "i32 buffer '" + name + "' overrun");
  return s.i32.data() + offset;
}

CpuScheduleExecutor::Storage& CpuScheduleExecutor::q8(const std::string& name) {
  const Buffer& b = schedule_.buffer(name);
  LANEC_ASSERT(is_int8_form(b.form), "buffer '" + name + "' is not an int8 form");
  return storage_.at(name);
}

const std::vector<float>& CpuScheduleExecutor::weight(const std::string& name) {
  const Buffer& b = schedule_.buffer(name);
  LANEC_ASSERT(b.role == BufferRole::weight, "buffer '" + name + "' is not a weight");
  return weights_.get(b.gguf_name);
}

void CpuScheduleExecutor::store_cache_row(const std::string& cache, size_t first, const float* row, int64_t n) {
  const GgmlType type = schedule_.buffer(cache).type;
  std::vector<float>& values = storage_.at(cache).f32;
  LANEC_ASSERT(first + static_cast<size_t>(n) <= values.size(), "cache '" + cache + "' write out of range");
  for (int64_t i = 0; i < n; ++i) values[first + static_cast<size_t>(i)] = round_to(type, row[i]);
}

std::vector<float> CpuScheduleExecutor::step(int32_t token, int32_t pos) {
  *i32(token_) = token;
  *i32(pos_) = pos;
  for (const Launch& l : schedule_.launches) run(l);
  const Buffer& out = schedule_.buffer(logits_);
  const float* p = f32(logits_, out.elements);
  return std::vector<float>(p, p + out.elements);
}

int32_t CpuScheduleExecutor::next_token() const {
  LANEC_ASSERT(!next_token_.empty(), "schedule without an argmax");
  auto [root, offset] = schedule_.storage_of(next_token_);
  return storage_.at(root->name).i32.at(static_cast<size_t>(offset));
}

std::vector<float> CpuScheduleExecutor::values(const std::string& buffer) const {
  const Buffer& b = schedule_.buffer(buffer);
  auto [root, offset] = schedule_.storage_of(buffer);
  const Storage& s = storage_.at(root->name);
  auto begin = s.f32.begin() + offset;
  return std::vector<float>(begin, begin + b.elements);
}

void CpuScheduleExecutor::run(const Launch& launch) {
  std::visit(
      [&](const auto& params) {
        using T = std::decay_t<decltype(params)>;
        if constexpr (std::is_same_v<T, ElementwiseLaunch>) run(params, launch.kind);
        else run(params);
      },
      launch.params);
}

void CpuScheduleExecutor::run(const EmbedLaunch& l) {
  const std::vector<float>& table = weight(l.table);
  const int32_t token = *i32(l.token);
  LANEC_ASSERT(token >= 0 && token < l.n_rows, "token out of range in " + l.table);
  const float* row = table.data() + static_cast<size_t>(token) * static_cast<size_t>(l.dim);
  float* out = f32(l.out, l.dim);
  double inv = 1.0;
  if (!l.norm_weight.empty()) {
    double sumsq = 0.0;
    for (int64_t i = 0; i < l.dim; ++i) sumsq += static_cast<double>(row[i]) * row[i];
    inv = 1.0 / std::sqrt(sumsq / static_cast<double>(l.dim) + l.eps);
  }
  const float* w = l.norm_weight.empty() ? nullptr : f32_in(l.norm_weight, l.dim);
  for (int64_t i = 0; i < l.dim; ++i)
    out[i] = w ? static_cast<float>(row[i] * inv * w[i]) : row[i];
}

void CpuScheduleExecutor::run(const RmsNormLaunch& l) {
  std::vector<float> h(f32_in(l.x, l.n), f32_in(l.x, l.n) + l.n);
  if (!l.residual.empty()) {
    const float* r = f32_in(l.residual, l.n);
    for (int64_t i = 0; i < l.n; ++i) h[static_cast<size_t>(i)] += r[i];
    std::copy(h.begin(), h.end(), f32(l.h_out, l.n));
  }
  double sumsq = 0.0;
  for (float v : h) sumsq += static_cast<double>(v) * v;
  const double inv = 1.0 / std::sqrt(sumsq / static_cast<double>(l.n) + l.eps);
  const float* w = f32_in(l.weight, l.n);
  std::vector<float> y(h.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(h[i] * inv * w[i]);
  if (!l.out.empty()) std::copy(y.begin(), y.end(), f32(l.out, l.n));
  if (!l.out_q8.empty()) {
    quantize_into(q8(l.out_q8), y.data(), l.n);
  }
}

void CpuScheduleExecutor::run(const QuantizeLaunch& l) {
  quantize_into(q8(l.out_q8), f32_in(l.x, l.n), l.n);
}

// The int8 input of a GEMV as doubles: q (+ lo/254 for the two-word form,
// exact in double, as the kernel's two integer passes are) and its scales.
static CpuGemvInput int8_input(const std::vector<int8_t>& qs, const std::vector<int8_t>& ql, const float* scales,
                               size_t k, bool two_words, const std::string& name) {
  CpuGemvInput in;
  in.x.assign(qs.begin(), qs.begin() + static_cast<std::ptrdiff_t>(k));
  if (two_words) {
    LANEC_ASSERT(ql.size() >= k, "two-word GEMV input " + name + " has no low word");
    for (size_t i = 0; i < k; ++i) in.x[i] += static_cast<double>(ql[i]) / 254.0;
  }
  in.block_scale = scales;
  return in;
}

std::vector<float> CpuScheduleExecutor::products(const std::string& weight_name, int64_t rows, int64_t k,
                                                 const CpuGemvInput& in, const float* bias) {
  const std::vector<float>& w = weight(weight_name);
  LANEC_ASSERT(w.size() == static_cast<size_t>(rows * k), "weight " + weight_name + " is not [rows, k]");
  std::vector<float> y(static_cast<size_t>(rows));
  float* out = y.data();
  // Weights are loaded above, on this thread: the store is not safe for
  // concurrent first loads, and the rows only read.
  parallel_for(rows, threads_, k, [&](int64_t begin, int64_t end) {
    float dots[kRowsAtOnce];
    for (int64_t r = begin; r < end;) {
      const float* row = w.data() + static_cast<size_t>(r * k);
      const int64_t n = end - r >= kRowsAtOnce ? kRowsAtOnce : 1;
      if (n == kRowsAtOnce) dot_rows<kRowsAtOnce>(row, static_cast<size_t>(k), in, dots);
      else dot_rows<1>(row, static_cast<size_t>(k), in, dots);
      for (int64_t i = 0; i < n; ++i, ++r) out[r] = dots[i] + (bias ? bias[r] : 0.0f);
    }
  });
  return y;
}

void CpuScheduleExecutor::run(const GemvLaunch& l) {
  CpuGemvInput in;
  if (l.numerics != GemvNumerics::f32) {
    const Storage& xq = q8(l.x_q8);
    in = int8_input(xq.qs, xq.ql, xq.qd.data(), static_cast<size_t>(l.k), l.numerics == GemvNumerics::int8x2, l.x_q8);
  } else {
    in.x.assign(f32_in(l.x, l.k), f32_in(l.x, l.k) + l.k);
  }
  // Products first (all parts read x before any part writes: y may alias a residual).
  std::vector<std::vector<float>> y(l.parts.size());
  for (size_t p = 0; p < l.parts.size(); ++p) {
    const GemvPart& part = l.parts[p];
    y[p] = products(part.weight, part.rows, l.k, in, part.bias.empty() ? nullptr : f32_in(part.bias, part.rows));
  }
  if (l.swiglu) {
    for (size_t r = 0; r < y[0].size(); ++r) y[0][r] = silu(y[0][r]) * y[1][r];
    y.resize(1);
  }
  for (size_t p = 0; p < y.size(); ++p) {
    const GemvPart& part = l.parts[p];
    if (!part.residual.empty()) {
      const float* res = f32_in(part.residual, part.rows);
      for (size_t r = 0; r < y[p].size(); ++r) y[p][r] += res[r];
    }
    std::copy(y[p].begin(), y[p].end(), f32(part.y, part.rows));
  }
}

// The chain the launch replaces, launch by launch: the gate/up products,
// the SwiGLU and its two-word int8 form, the down products, the residual.
void CpuScheduleExecutor::run(const FfnLaunch& l) {
  const Storage& xq = q8(l.x_q8);
  const CpuGemvInput in = int8_input(xq.qs, xq.ql, xq.qd.data(), static_cast<size_t>(l.hidden), true, l.x_q8);
  std::vector<float> a = products(l.gate, l.ffn, l.hidden, in, nullptr);
  const std::vector<float> up = products(l.up, l.ffn, l.hidden, in, nullptr);
  for (size_t i = 0; i < a.size(); ++i) a[i] = silu(a[i]) * up[i];
  std::vector<int8_t> qs(a.size()), ql(a.size());
  std::vector<float> scales(a.size() / 32);
  quantize_q8_blocks(a.data(), l.ffn, qs.data(), scales.data(), ql.data());
  const CpuGemvInput act = int8_input(qs, ql, scales.data(), a.size(), true, l.y);
  std::vector<float> y = products(l.down, l.hidden, l.ffn, act, nullptr);
  const float* res = f32_in(l.residual, l.hidden);
  for (size_t r = 0; r < y.size(); ++r) y[r] += res[r];
  std::copy(y.begin(), y.end(), f32(l.y, l.hidden));
}

void CpuScheduleExecutor::run(const RopeLaunch& l) {
  const int32_t pos_row = *i32(l.pos);
  const double pos = static_cast<double>(pos_row);
  const int64_t hd = l.head_dim;
  const int64_t half = l.rope_dims / 2;
  // row_write: rows land at pos of a head-major cache; a position past the
  // caches stores nothing (the kernel's contract).
  const bool row_in_cache = pos_row >= 0 && pos_row < l.n_ctx;
  auto store_row = [&](const std::string& cache, int64_t head, const float* row) {
    if (cache.empty() || !row_in_cache) return;
    store_cache_row(cache, static_cast<size_t>((head * l.n_ctx + pos_row) * hd), row, hd);
  };
  // One angle per rotated pair, shared by every head.
  std::vector<float> cos_of(static_cast<size_t>(half)), sin_of(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    const double angle =
        pos * std::pow(l.theta_base, -2.0 * static_cast<double>(i) / static_cast<double>(l.rope_dims));
    cos_of[static_cast<size_t>(i)] = static_cast<float>(std::cos(angle));
    sin_of[static_cast<size_t>(i)] = static_cast<float>(std::sin(angle));
  }
  std::vector<float> v(static_cast<size_t>(hd));
  for (const RopePart& part : l.parts) {
    float* x = f32(part.x, part.n_head * hd);
    const float* w = part.norm_weight.empty() ? nullptr : f32_in(part.norm_weight, hd);
    for (int64_t h = 0; h < part.n_head; ++h) {
      float* xh = x + h * hd;
      std::copy(xh, xh + hd, v.begin());
      if (w) {
        double sumsq = 0.0;
        for (int64_t i = 0; i < hd; ++i) sumsq += static_cast<double>(v[i]) * v[i];
        const double inv = 1.0 / std::sqrt(sumsq / static_cast<double>(hd) + l.eps);
        for (int64_t i = 0; i < hd; ++i) v[i] = static_cast<float>(v[i] * inv * w[i]);
      }
      for (int64_t i = 0; i < half; ++i) {
        const int64_t a = l.neox ? i : 2 * i;
        const int64_t b = l.neox ? i + half : 2 * i + 1;
        const float c = cos_of[static_cast<size_t>(i)];
        const float s = sin_of[static_cast<size_t>(i)];
        const float xa = v[a], xb = v[b];
        v[a] = xa * c - xb * s;
        v[b] = xa * s + xb * c;
      }
      store_row(part.cache, h, v.data());
      // cache_only: the planner proved no one reads the rotated x; leaving it
      // unrotated here makes a wrong proof change the logits.
      if (!part.cache_only) std::copy(v.begin(), v.end(), xh);
    }
  }
  if (!l.v.empty()) {
    const float* rows = f32_in(l.v, l.n_v_head * hd);
    for (int64_t h = 0; h < l.n_v_head; ++h) store_row(l.v_cache, h, rows + h * hd);
  }
}

void CpuScheduleExecutor::run(const KvWriteLaunch& l) {
  const int32_t pos = *i32(l.pos);
  LANEC_ASSERT(pos >= 0 && pos < l.n_ctx, "position past the cache");
  const int64_t width = l.n_kv_head * l.head_dim;
  auto write = [&](const std::string& src, const std::string& cache) {
    if (src.empty()) return;
    const float* x = f32_in(src, width);
    for (int64_t head = 0; head < l.n_kv_head; ++head)
      store_cache_row(cache, static_cast<size_t>((head * l.n_ctx + pos) * l.head_dim), x + head * l.head_dim,
                      l.head_dim);
  };
  write(l.k, l.k_cache);
  write(l.v, l.v_cache);
}

void CpuScheduleExecutor::run(const AttentionLaunch& l) {
  const int32_t pos = *i32(l.pos);
  const int64_t len = std::min<int64_t>(pos + 1, l.n_ctx);
  const int64_t hd = l.head_dim;
  const float* q = f32_in(l.q, l.n_head * hd);
  const std::vector<float>& kc = storage_.at(l.k_cache).f32;
  const std::vector<float>& vc = storage_.at(l.v_cache).f32;
  std::vector<float> out(static_cast<size_t>(l.n_head * hd));
  const int64_t group = l.n_head / l.n_kv_head;
  std::vector<double> score(static_cast<size_t>(len));
  for (int64_t h = 0; h < l.n_head; ++h) {
    const int64_t kvh = h / group;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t < len; ++t) {
      const float* kr = kc.data() + (kvh * l.n_ctx + t) * hd;
      double s = 0.0;
      for (int64_t d = 0; d < hd; ++d) s += static_cast<double>(q[h * hd + d]) * kr[d];
      score[static_cast<size_t>(t)] = s * l.scale;
      m = std::max(m, score[static_cast<size_t>(t)]);
    }
    double sum = 0.0;
    for (double& s : score) sum += (s = std::exp(s - m));
    for (int64_t d = 0; d < hd; ++d) {
      double acc = 0.0;
      for (int64_t t = 0; t < len; ++t)
        acc += score[static_cast<size_t>(t)] * vc[static_cast<size_t>((kvh * l.n_ctx + t) * hd + d)];
      out[static_cast<size_t>(h * hd + d)] = static_cast<float>(acc / sum);
    }
  }
  if (!l.out.empty()) std::copy(out.begin(), out.end(), f32(l.out, l.n_head * hd));
  if (!l.out_q8.empty()) {  // the launch writes the int8 form too: the quantize launch's math
    quantize_into(q8(l.out_q8), out.data(), l.n_head * hd);
  }
}

void CpuScheduleExecutor::run(const ElementwiseLaunch& l, LaunchKind kind) {
  const float* a = f32_in(l.a, l.n);
  const float* b = f32_in(l.b, l.n);
  std::vector<float> out(static_cast<size_t>(l.n));  // out may alias a or b
  for (int64_t i = 0; i < l.n; ++i)
    out[static_cast<size_t>(i)] = kind == LaunchKind::add ? a[i] + b[i] : silu(a[i]) * b[i];
  if (!l.out.empty()) std::copy(out.begin(), out.end(), f32(l.out, l.n));
  if (!l.out_q8.empty()) quantize_into(q8(l.out_q8), out.data(), l.n);
}

void CpuScheduleExecutor::run(const ArgmaxLaunch& l) {
  const float* x = f32_in(l.logits, l.n_vocab);
  int32_t best = 0;
  for (int64_t i = 1; i < l.n_vocab; ++i)
    if (x[i] > x[best]) best = static_cast<int32_t>(i);
  *i32(l.out) = best;
  // The device advances its decode state; step() sets both again anyway.
  *i32(l.token) = best;
  *i32(l.pos) += 1;
}

}  // namespace lanec
