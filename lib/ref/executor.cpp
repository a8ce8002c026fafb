#include "lib/ref/executor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "lib/common/error.h"
#include "lib/quant/codecs.h"
#include "lib/ref/parallel.h"

namespace lanec {
namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

// Rounds a value as a state of `type` stores it.
float round_to(GgmlType type, float v) {
  switch (type) {
    case GgmlType::F16: return fp16_to_f32(f32_to_fp16(v));
    case GgmlType::BF16: return bf16_to_f32(f32_to_bf16(v));
    default: return v;
  }
}

// Dot product with 8 independent partial sums (vectorizable; fixed order so
// results do not depend on the thread count).
float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

// x * 1/sqrt(mean(x^2) + eps) * w over n elements (sum of squares in double).
void rms_norm_row(const float* x, const float* w, float* y, int64_t n, double eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void softmax_row(float* x, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace

ReferenceExecutor::ReferenceExecutor(const Graph& graph, WeightStore& weights,
                                     ReferenceOptions options)
    : graph_(graph), options_(options) {
  const size_t n = graph.tensors().size();
  constants_.assign(n, nullptr);
  f32_.resize(n);
  i32_.resize(n);
  for (TensorId id = 0; id < n; ++id) {
    const Tensor& t = graph.tensor(id);
    if (t.role == Role::constant) {
      constants_[id] = &weights.get(t);
    } else if (t.type == GgmlType::I32) {
      i32_[id].assign(static_cast<size_t>(t.numel()), 0);
    } else {
      f32_[id].assign(static_cast<size_t>(t.numel()), 0.0f);
    }
    if (t.role == Role::param) {
      if (t.name != "token" && t.name != "pos")
        throw Error("param " + t.name +
                    ": the reference executor feeds only the params 'token' and 'pos'");
      if (t.type != GgmlType::I32 || t.numel() != 1)
        throw Error("param " + t.name + ": expected i32 [1], got " + shape_to_string(t.shape));
      (t.name == "token" ? token_id_ : pos_id_) = id;
    }
  }
  if (token_id_ == kNoTensor || pos_id_ == kNoTensor)
    throw Error("step graph: expected the params 'token' and 'pos' (i32 [1])");
  for (TensorId id : graph.outputs()) {
    const Tensor& t = graph.tensor(id);
    if (t.type == GgmlType::F32 && logits_id_ == kNoTensor) logits_id_ = id;
    if (t.type == GgmlType::I32 && next_id_ == kNoTensor) next_id_ = id;
  }
  if (logits_id_ == kNoTensor)
    throw Error("step graph: expected an f32 output (the logits), got none");
}

void ReferenceExecutor::reset() {
  for (TensorId id = 0; id < graph_.tensors().size(); ++id)
    if (graph_.tensor(id).role == Role::state) std::fill(f32_[id].begin(), f32_[id].end(), 0.0f);
}

std::vector<float> ReferenceExecutor::step(int32_t token, int32_t pos) {
  i32_[token_id_][0] = token;
  i32_[pos_id_][0] = pos;
  for (size_t i = 0; i < graph_.ops().size(); ++i) run_op(i);
  return f32_[logits_id_];
}

int32_t ReferenceExecutor::next_token() const {
  if (next_id_ == kNoTensor) throw Error("step graph: has no i32 output (next token)");
  return i32_[next_id_][0];
}

std::vector<float> ReferenceExecutor::values(std::string_view name) const {
  const TensorId id = graph_.id_of(name);
  if (constants_[id]) return *constants_[id];
  if (graph_.tensor(id).type == GgmlType::I32)
    return std::vector<float>(i32_[id].begin(), i32_[id].end());
  return f32_[id];
}

const float* ReferenceExecutor::f32_in(TensorId id) const {
  if (constants_[id]) return constants_[id]->data();
  LANEC_ASSERT(graph_.tensor(id).type != GgmlType::I32,
               "f32 operand expected: " + graph_.tensor(id).name);
  return f32_[id].data();
}

std::vector<float>& ReferenceExecutor::f32_out(TensorId id) { return f32_[id]; }

int32_t ReferenceExecutor::i32_scalar(TensorId id) const {
  LANEC_ASSERT(graph_.tensor(id).type == GgmlType::I32, "i32 operand expected");
  return i32_[id][0];
}

void ReferenceExecutor::run_op(size_t index) {
  const Op& op = graph_.ops()[index];
  auto fail = [&](const std::string& what) -> Error {
    return Error(describe_op(graph_, index) + ": " + what);
  };
  const Tensor& in0 = graph_.tensor(op.inputs[0]);
  const TensorId out_id = op.outputs[0];
  const Tensor& out_t = graph_.tensor(out_id);
  const int64_t n_out = out_t.numel();

  // Elementwise helper: y[i] = f(x[i]).
  auto unary = [&](auto f) {
    const float* x = f32_in(op.inputs[0]);
    std::vector<float>& y = f32_out(out_id);
    for (int64_t i = 0; i < n_out; ++i) y[i] = f(x[i]);
  };
  // b broadcast over a's leading dims (b is a suffix of a's shape or one element).
  auto binary = [&](auto f) {
    const float* a = f32_in(op.inputs[0]);
    const float* b = f32_in(op.inputs[1]);
    const int64_t nb = graph_.tensor(op.inputs[1]).numel();
    std::vector<float>& y = f32_out(out_id);
    for (int64_t i = 0; i < n_out; ++i) y[i] = f(a[i], b[i % nb]);
  };

  switch (op.kind) {
    case OpKind::embed_get_rows: {
      const int64_t rows = in0.shape[0], cols = in0.shape[1];
      const int32_t token = i32_scalar(op.inputs[1]);
      if (token < 0 || token >= rows)
        throw fail("token " + std::to_string(token) + " is outside the " + std::to_string(rows) +
                   " rows of " + in0.name);
      const float* row = f32_in(op.inputs[0]) + static_cast<int64_t>(token) * cols;
      std::copy(row, row + cols, f32_out(out_id).begin());
      return;
    }
    case OpKind::rms_norm:
    case OpKind::head_rms_norm: {
      const double eps = op.get_float("eps");
      const int64_t cols = in0.cols(), rows = in0.numel() / cols;
      const float* x = f32_in(op.inputs[0]);
      const float* w = f32_in(op.inputs[1]);
      float* y = f32_out(out_id).data();
      for (int64_t r = 0; r < rows; ++r) rms_norm_row(x + r * cols, w, y + r * cols, cols, eps);
      return;
    }
    case OpKind::l2_norm: {
      // x / max(||x||, eps) over the last dim.
      const double eps = op.get_float("eps");
      const int64_t cols = in0.cols(), rows = in0.numel() / cols;
      const float* x = f32_in(op.inputs[0]);
      float* y = f32_out(out_id).data();
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (int64_t i = 0; i < cols; ++i) sum += static_cast<double>(x[r * cols + i]) * x[r * cols + i];
        const float scale = static_cast<float>(1.0 / std::max(std::sqrt(sum), eps));
        for (int64_t i = 0; i < cols; ++i) y[r * cols + i] = x[r * cols + i] * scale;
      }
      return;
    }
    case OpKind::add: return binary([](float a, float b) { return a + b; });
    case OpKind::mul: return binary([](float a, float b) { return a * b; });
    case OpKind::scale: {
      const float s = static_cast<float>(op.get_float("scale"));
      return unary([s](float x) { return x * s; });
    }
    case OpKind::silu: return unary(silu);
    case OpKind::gelu: return unary(gelu_tanh);
    case OpKind::sigmoid: return unary(sigmoid);
    case OpKind::softplus: return unary(softplus);
    case OpKind::exp: return unary([](float x) { return std::exp(x); });
    case OpKind::swiglu: return binary([](float g, float u) { return silu(g) * u; });
    case OpKind::geglu: return binary([](float g, float u) { return gelu_tanh(g) * u; });
    case OpKind::swiglu_oai: {
      // gpt-oss: g clamped above at limit, u clamped to [-limit, limit],
      // y = g * sigmoid(alpha * g) * (u + 1).
      const float alpha = static_cast<float>(op.get_float("alpha"));
      const float limit = static_cast<float>(op.get_float("limit"));
      return binary([alpha, limit](float g, float u) {
        g = std::min(g, limit);
        u = std::clamp(u, -limit, limit);
        return g * sigmoid(alpha * g) * (u + 1.0f);
      });
    }
    case OpKind::softmax: {
      const int64_t cols = in0.cols(), rows = in0.numel() / cols;
      const float* x = f32_in(op.inputs[0]);
      std::vector<float>& y = f32_out(out_id);
      std::copy(x, x + in0.numel(), y.begin());
      for (int64_t r = 0; r < rows; ++r) softmax_row(y.data() + r * cols, cols);
      return;
    }
    case OpKind::matmul: {
      // y[o] = sum_i W[o, i] x[i], rows of W spread over threads.
      const Tensor& w_t = graph_.tensor(op.inputs[1]);
      const int64_t rows = w_t.shape[0], cols = w_t.shape[1];
      const float* x = f32_in(op.inputs[0]);
      const float* w = f32_in(op.inputs[1]);
      float* y = f32_out(out_id).data();
      parallel_for(rows, options_.threads, cols, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) y[r] = dot(w + r * cols, x, cols);
      });
      return;
    }
    case OpKind::rope: {
      // Pairs rotated by theta_i = pos * freq_scale * freq_base^(-2i/n_rot)
      // (divided by freq_factors[i] when given), i in [0, n_rot/2). NORM
      // pairs elements (2i, 2i+1); NEOX pairs (i, i + n_rot/2). Columns past
      // n_rot pass through.
      const bool neox = op.get_string("mode") == "neox";
      const int64_t n_rot = op.get_int("n_rot");
      const double base = op.get_float("freq_base");
      const double freq_scale = op.get_float_or("freq_scale", 1.0);
      const double attn_factor = op.get_float_or("attn_factor", 1.0);
      if (op.get_float_or("ext_factor", 0.0) != 0.0)
        throw fail("YaRN rope (ext_factor != 0) is not implemented by the reference executor");
      const float* factors = op.inputs.size() == 3 ? f32_in(op.inputs[2]) : nullptr;
      const int32_t pos = i32_scalar(op.inputs[1]);
      const int64_t cols = in0.cols(), rows = in0.numel() / cols, half = n_rot / 2;
      const float* x = f32_in(op.inputs[0]);
      float* y = f32_out(out_id).data();
      std::copy(x, x + in0.numel(), y);
      for (int64_t i = 0; i < half; ++i) {
        double theta = pos * freq_scale *
                       std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
        if (factors) theta /= factors[i];
        const float c = static_cast<float>(std::cos(theta) * attn_factor);
        const float s = static_cast<float>(std::sin(theta) * attn_factor);
        const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
        for (int64_t r = 0; r < rows; ++r) {
          const float a = x[r * cols + i0], b = x[r * cols + i1];
          y[r * cols + i0] = a * c - b * s;
          y[r * cols + i1] = a * s + b * c;
        }
      }
      return;
    }
    case OpKind::kv_write: {
      const Tensor& cache = out_t;
      const int64_t rows = cache.shape[0], row_elems = cache.numel() / rows;
      const int32_t pos = i32_scalar(op.inputs[1]);
      if (pos < 0) throw fail("position " + std::to_string(pos) + " is negative");
      const float* src = f32_in(op.inputs[0]);
      float* dst = f32_out(out_id).data() + (pos % rows) * row_elems;
      for (int64_t i = 0; i < row_elems; ++i) dst[i] = round_to(cache.type, src[i]);
      return;
    }
    case OpKind::attention: {
      // Per query head h (kv head h / (n_head / n_kv)): softmax(scale * q.k_t)
      // over cache rows t = first..pos (first = pos - window + 1 with a
      // window, else 0), plus the sink logit in the denominator when given;
      // output sum_t p_t v_t.
      const Tensor& k_t = graph_.tensor(op.inputs[1]);
      const int64_t n_head = in0.shape[0], head_dim = in0.shape[1];
      const int64_t rows = k_t.shape[0], n_kv = k_t.shape[1];
      const int64_t v_dim = graph_.tensor(op.inputs[2]).shape[2];
      const int64_t group = n_head / n_kv;
      const int32_t pos = i32_scalar(op.inputs[3]);
      const int64_t window = op.get_int_or("window", 0);
      const float scale = static_cast<float>(op.get_float("scale"));
      if (pos < 0) throw fail("position " + std::to_string(pos) + " is negative");
      const int64_t first = window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0;
      if (pos - first + 1 > rows)
        throw fail("position " + std::to_string(pos) + " needs " + std::to_string(pos - first + 1) +
                   " cache rows, " + k_t.name + " has " + std::to_string(rows));
      const float* q = f32_in(op.inputs[0]);
      const float* kc = f32_in(op.inputs[1]);
      const float* vc = f32_in(op.inputs[2]);
      const float* sinks = op.inputs.size() == 5 ? f32_in(op.inputs[4]) : nullptr;
      float* y = f32_out(out_id).data();
      const int64_t len = pos - first + 1;
      std::vector<float> p(static_cast<size_t>(len));
      for (int64_t h = 0; h < n_head; ++h) {
        const int64_t kvh = h / group;
        float max = sinks ? sinks[h] : -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < len; ++j) {
          const int64_t row = (first + j) % rows;
          p[j] = scale * dot(q + h * head_dim, kc + (row * n_kv + kvh) * head_dim, head_dim);
          max = std::max(max, p[j]);
        }
        double sum = sinks ? std::exp(static_cast<double>(sinks[h]) - max) : 0.0;
        for (int64_t j = 0; j < len; ++j) {
          p[j] = std::exp(p[j] - max);
          sum += p[j];
        }
        float* out = y + h * v_dim;
        std::fill(out, out + v_dim, 0.0f);
        for (int64_t j = 0; j < len; ++j) {
          const int64_t row = (first + j) % rows;
          const float weight = static_cast<float>(p[j] / sum);
          const float* v = vc + (row * n_kv + kvh) * v_dim;
          for (int64_t i = 0; i < v_dim; ++i) out[i] += weight * v[i];
        }
      }
      return;
    }
    case OpKind::reshape: {
      if (in0.type == GgmlType::I32) {
        i32_[out_id] = i32_[op.inputs[0]];
      } else {
        const float* x = f32_in(op.inputs[0]);
        std::copy(x, x + in0.numel(), f32_out(out_id).begin());
      }
      return;
    }
    case OpKind::slice: {
      const int64_t offset = op.get_int("offset");
      const int64_t in_cols = in0.cols(), out_cols = out_t.cols(), rows = in0.numel() / in_cols;
      const float* x = f32_in(op.inputs[0]);
      float* y = f32_out(out_id).data();
      for (int64_t r = 0; r < rows; ++r)
        std::copy(x + r * in_cols + offset, x + r * in_cols + offset + out_cols, y + r * out_cols);
      return;
    }
    case OpKind::concat: {
      const int64_t out_cols = out_t.cols(), rows = n_out / out_cols;
      float* y = f32_out(out_id).data();
      int64_t col = 0;
      for (TensorId part_id : op.inputs) {
        const int64_t cols = graph_.tensor(part_id).cols();
        const float* x = f32_in(part_id);
        for (int64_t r = 0; r < rows; ++r)
          std::copy(x + r * cols, x + (r + 1) * cols, y + r * out_cols + col);
        col += cols;
      }
      return;
    }
    case OpKind::argmax: {
      // The first index of the largest value (ties go to the lowest id).
      const float* x = f32_in(op.inputs[0]);
      int64_t best = 0;
      for (int64_t i = 1; i < in0.numel(); ++i)
        if (x[i] > x[best]) best = i;
      i32_[out_id][0] = static_cast<int32_t>(best);
      return;
    }
    case OpKind::moe_route:
    case OpKind::moe_experts:
    case OpKind::short_conv:
    case OpKind::gated_delta_rule:
      throw fail(std::string("the reference executor does not implement ") +
                 op_kind_name(op.kind) + " yet");
  }
  throw fail("unknown op kind");
}

}  // namespace lanec
