#include "lib/ref/executor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "lib/common/error.h"
#include "lib/quant/codecs.h"
#include "lib/ref/parallel.h"
#include "lib/ref/q8_0_dot.h"

namespace lanec {
namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

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

// A per-thread f32 row buffer for weights dequantized on the fly; grows to
// the widest row once and is reused on later steps.
float* row_scratch(int64_t n) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < static_cast<size_t>(n)) scratch.resize(static_cast<size_t>(n));
  return scratch.data();
}

// Constants that ops read only row by row (matmul weights, embedding tables,
// MoE expert weights): these stay in their GGUF encoding (see WeightStore::rows).
std::vector<bool> row_only_constants(const Graph& graph) {
  const size_t n = graph.tensors().size();
  std::vector<bool> row_use(n, false), whole_use(n, false);
  for (const Op& op : graph.ops()) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const bool by_rows = (op.kind == OpKind::matmul && i == 1) ||
                           (op.kind == OpKind::embed_get_rows && i == 0) ||
                           (op.kind == OpKind::moe_experts && i >= 3 && i <= 5);
      (by_rows ? row_use : whole_use)[op.inputs[i]] = true;
    }
  }
  std::vector<bool> row_only(n, false);
  for (TensorId id = 0; id < n; ++id)
    row_only[id] = graph.tensor(id).role == Role::constant && row_use[id] && !whole_use[id];
  return row_only;
}

}  // namespace

ReferenceExecutor::ReferenceExecutor(const Graph& graph, WeightStore& weights,
                                     ReferenceOptions options)
    : graph_(graph), options_(options) {
  const size_t n = graph.tensors().size();
  constants_.assign(n, nullptr);
  rows_.assign(n, WeightRows{});
  const std::vector<bool> row_only =
      options.weights_by_rows ? row_only_constants(graph) : std::vector<bool>(n, false);
  f32_.resize(n);
  i32_.resize(n);
  for (TensorId id = 0; id < n; ++id) {
    const Tensor& t = graph.tensor(id);
    if (row_only[id]) {
      rows_[id] = weights.rows(t);
    } else if (t.role == Role::constant) {
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
  if (rows_[id].data) {
    const WeightRows& w = rows_[id];
    std::vector<float> all(static_cast<size_t>(w.rows * w.row_elems));
    for (int64_t r = 0; r < w.rows; ++r) {
      float* dst = all.data() + r * w.row_elems;
      const float* src = w.row(r, dst);
      if (src != dst) std::copy(src, src + w.row_elems, dst);
    }
    return all;
  }
  if (graph_.tensor(id).type == GgmlType::I32)
    return std::vector<float>(i32_[id].begin(), i32_[id].end());
  return f32_[id];
}

const float* ReferenceExecutor::weight_row(TensorId id, int64_t r, float* scratch) const {
  if (constants_[id]) return constants_[id]->data() + r * graph_.tensor(id).cols();
  LANEC_ASSERT(rows_[id].data, "weight operand expected: " + graph_.tensor(id).name);
  return rows_[id].row(r, scratch);
}

const float* ReferenceExecutor::f32_in(TensorId id) const {
  if (constants_[id]) return constants_[id]->data();
  LANEC_ASSERT(!rows_[id].data, "row-mapped weight read whole: " + graph_.tensor(id).name);
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
      float* out = f32_out(out_id).data();
      const float* row = weight_row(op.inputs[0], token, out);
      if (row != out) std::copy(row, row + cols, out);
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
      // x * rsqrt(sum(x^2) + eps) over the last dim.
      const double eps = op.get_float("eps");
      const int64_t cols = in0.cols(), rows = in0.numel() / cols;
      const float* x = f32_in(op.inputs[0]);
      float* y = f32_out(out_id).data();
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (int64_t i = 0; i < cols; ++i) sum += static_cast<double>(x[r * cols + i]) * x[r * cols + i];
        const float scale = static_cast<float>(1.0 / std::sqrt(sum + eps));
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
      // y[o] = sum_i W[o, i] x[i], rows of W spread over threads (a rank-1
      // W is one row).
      const Tensor& w_t = graph_.tensor(op.inputs[1]);
      const int64_t cols = w_t.cols(), rows = w_t.numel() / cols;
      // Quantized rows are dequantized one at a time into a per-thread
      // buffer: the same values as a whole-tensor dequantization, at a
      // quarter of the memory traffic.
      const float* x = f32_in(op.inputs[0]);
      float* y = f32_out(out_id).data();
      const TensorId w_id = op.inputs[1];
      const WeightRows& w_rows = rows_[w_id];
      if (w_rows.data && w_rows.type == GgmlType::Q8_0 && cols % 32 == 0 && q8_0_dot_available()) {
        // The same values and order without the row buffer (q8_0_dot.h).
        parallel_for(rows, options_.threads, cols, [&](int64_t begin, int64_t end) {
          q8_0_dot_rows(w_rows.data, w_rows.row_bytes, begin, end - begin, x, cols, y + begin);
        });
        return;
      }
      parallel_for(rows, options_.threads, cols, [&](int64_t begin, int64_t end) {
        float* scratch = row_scratch(cols);
        for (int64_t r = begin; r < end; ++r) y[r] = dot(weight_row(w_id, r, scratch), x, cols);
      });
      return;
    }
    case OpKind::rope: {
      // docs/ir.md: theta_e = pos * freq_base^(-2i/n_rot) / freq_factors[i],
      // theta_i = freq_scale * theta_e, for i in [0, n_rot/2); NORM pairs
      // elements (2i, 2i+1), NEOX pairs (i, i + n_rot/2); YaRN mixes theta_i
      // and theta_e over a ramp and scales the magnitude. Columns past n_rot
      // pass through.
      const bool neox = op.get_string("mode") == "neox";
      const int64_t n_rot = op.get_int("n_rot");
      const double base = op.get_float("freq_base");
      const double freq_scale = op.get_float_or("freq_scale", 1.0);
      const double ext_factor = op.get_float_or("ext_factor", 0.0);
      const double attn_factor = op.get_float_or("attn_factor", 1.0);
      const double beta_fast = op.get_float_or("beta_fast", 32.0);
      const double beta_slow = op.get_float_or("beta_slow", 1.0);
      const double n_ctx_orig = static_cast<double>(op.get_int_or("n_ctx_orig", 0));
      const float* factors = op.inputs.size() == 3 ? f32_in(op.inputs[2]) : nullptr;
      const int32_t pos = i32_scalar(op.inputs[1]);
      const int64_t cols = in0.cols(), rows = in0.numel() / cols, half = n_rot / 2;
      const double pi = 3.14159265358979323846;
      double lo = 0.0, hi = 0.0, magnitude = attn_factor;
      if (ext_factor != 0.0) {
        auto corr = [&](double b) {
          return static_cast<double>(n_rot) * std::log(n_ctx_orig / (b * 2.0 * pi)) /
                 (2.0 * std::log(base));
        };
        lo = std::max(0.0, std::floor(corr(beta_fast)));
        hi = std::min(static_cast<double>(n_rot - 1), std::ceil(corr(beta_slow)));
        magnitude = attn_factor * (1.0 + 0.1 * std::log(1.0 / freq_scale));
      }
      const float* x = f32_in(op.inputs[0]);
      float* y = f32_out(out_id).data();
      std::copy(x, x + in0.numel(), y);
      for (int64_t i = 0; i < half; ++i) {
        double theta_e = pos * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
        if (factors) theta_e /= factors[i];
        double theta = freq_scale * theta_e;
        if (ext_factor != 0.0) {
          const double ramp =
              1.0 - std::clamp((static_cast<double>(i) - lo) / std::max(0.001, hi - lo), 0.0, 1.0);
          const double mix = ramp * ext_factor;
          theta = theta * (1.0 - mix) + theta_e * mix;
        }
        const float c = static_cast<float>(std::cos(theta) * magnitude);
        const float s = static_cast<float>(std::sin(theta) * magnitude);
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
    case OpKind::moe_route: return run_moe_route(op);
    case OpKind::moe_experts: return run_moe_experts(op);
    case OpKind::short_conv: return run_short_conv(op);
    case OpKind::gated_delta_rule: return run_gated_delta_rule(op);
  }
  throw fail("unknown op kind");
}

void ReferenceExecutor::run_moe_route(const Op& op) {
  // softmax_topk: p = softmax(logits), the k largest p, w = p[ids];
  // topk_softmax: the k largest logits, w = softmax(logits[ids]). Then the
  // optional renormalization and weight_scale. Ids by decreasing score,
  // equal scores by lower expert index.
  const Tensor& logits_t = graph_.tensor(op.inputs[0]);
  const int64_t n_expert = logits_t.numel(), k = op.get_int("k");
  const bool softmax_first = op.get_string("gating") == "softmax_topk";
  const float* logits = f32_in(op.inputs[0]);
  std::vector<float> score(logits, logits + n_expert);
  if (softmax_first) softmax_row(score.data(), n_expert);
  std::vector<int32_t> order(static_cast<size_t>(n_expert));
  for (int32_t e = 0; e < n_expert; ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return score[a] > score[b]; });
  std::vector<int32_t>& ids = i32_[op.outputs[0]];
  std::vector<float>& weights = f32_out(op.outputs[1]);
  for (int64_t j = 0; j < k; ++j) {
    ids[j] = order[j];
    weights[j] = score[order[j]];
  }
  if (!softmax_first) softmax_row(weights.data(), k);
  if (op.get_int_or("normalize", 0) == 1) {
    double sum = 0.0;
    for (int64_t j = 0; j < k; ++j) sum += weights[j];
    for (int64_t j = 0; j < k; ++j) weights[j] = static_cast<float>(weights[j] / sum);
  }
  const float weight_scale = static_cast<float>(op.get_float_or("weight_scale", 1.0));
  for (int64_t j = 0; j < k; ++j) weights[j] *= weight_scale;
}

void ReferenceExecutor::run_moe_experts(const Op& op) {
  // y = sum_j w_j (Down_e act(G_e x + gb_e, U_e x + ub_e) + db_e), e = ids[j].
  const Tensor& gate_t = graph_.tensor(op.inputs[3]);
  const int64_t n_expert = gate_t.shape[0], ff = gate_t.shape[1], d = gate_t.shape[2];
  const std::vector<int32_t>& ids = i32_[op.inputs[1]];
  const float* weights = f32_in(op.inputs[2]);
  const float* x = f32_in(op.inputs[0]);
  const bool biased = op.inputs.size() == 9;
  const bool oai = op.get_string("act") == "swiglu_oai";
  const float alpha = oai ? static_cast<float>(op.get_float("alpha")) : 0.0f;
  const float limit = oai ? static_cast<float>(op.get_float("limit")) : 0.0f;
  std::vector<float>& y = f32_out(op.outputs[0]);
  std::fill(y.begin(), y.end(), 0.0f);
  std::vector<float> g(static_cast<size_t>(ff)), u(static_cast<size_t>(ff)), h(static_cast<size_t>(ff));
  for (size_t j = 0; j < ids.size(); ++j) {
    const int64_t e = ids[j];
    if (e < 0 || e >= n_expert)
      throw Error("moe_experts: expert id " + std::to_string(e) + " outside [0, " +
                  std::to_string(n_expert) + ")");
    parallel_for(ff, options_.threads, 2 * d, [&](int64_t begin, int64_t end) {
      float* scratch = row_scratch(d);
      for (int64_t r = begin; r < end; ++r) {
        g[r] = dot(weight_row(op.inputs[3], e * ff + r, scratch), x, d);
        u[r] = dot(weight_row(op.inputs[4], e * ff + r, scratch), x, d);
      }
    });
    if (biased) {
      const float* gb = f32_in(op.inputs[6]) + e * ff;
      const float* ub = f32_in(op.inputs[7]) + e * ff;
      for (int64_t r = 0; r < ff; ++r) g[r] += gb[r], u[r] += ub[r];
    }
    for (int64_t r = 0; r < ff; ++r) {
      if (oai) {
        const float gc = std::min(g[r], limit), uc = std::clamp(u[r], -limit, limit);
        h[r] = gc * sigmoid(alpha * gc) * (uc + 1.0f);
      } else {
        h[r] = silu(g[r]) * u[r];
      }
    }
    const float* db = biased ? f32_in(op.inputs[8]) + e * d : nullptr;
    float* scratch = row_scratch(ff);
    for (int64_t r = 0; r < d; ++r)
      y[r] += weights[j] *
              (dot(weight_row(op.inputs[5], e * d + r, scratch), h.data(), ff) + (db ? db[r] : 0.0f));
  }
}

void ReferenceExecutor::run_short_conv(const Op& op) {
  // Window W = [ring rows (oldest first), x]; y[c] = sum_t w[c, t] W[t, c];
  // then the ring drops its oldest row and appends x.
  const Tensor& w_t = graph_.tensor(op.inputs[1]);
  const Tensor& ring_t = graph_.tensor(op.outputs[1]);
  const int64_t channels = w_t.shape[0], kernel = w_t.shape[1];
  const float* x = f32_in(op.inputs[0]);
  const float* w = f32_in(op.inputs[1]);
  std::vector<float>& ring = f32_out(op.outputs[1]);
  std::vector<float>& y = f32_out(op.outputs[0]);
  for (int64_t c = 0; c < channels; ++c) {
    float acc = 0.0f;
    for (int64_t t = 0; t < kernel - 1; ++t) acc += w[c * kernel + t] * ring[t * channels + c];
    y[c] = acc + w[c * kernel + kernel - 1] * x[c];
  }
  for (int64_t t = 0; t + 1 < kernel - 1; ++t)
    std::copy(ring.begin() + (t + 1) * channels, ring.begin() + (t + 2) * channels,
              ring.begin() + t * channels);
  for (int64_t c = 0; c < channels; ++c)
    ring[(kernel - 2) * channels + c] = round_to(ring_t.type, x[c]);
}

void ReferenceExecutor::run_gated_delta_rule(const Op& op) {
  // Per v head h (k head kh): S *= exp(g[h]); m = S^T k; delta = beta (v - m);
  // S += k delta^T; y = S^T (scale q).
  const Tensor& q_t = graph_.tensor(op.inputs[0]);
  const Tensor& v_t = graph_.tensor(op.inputs[2]);
  const Tensor& state_t = graph_.tensor(op.outputs[1]);
  const int64_t n_k = q_t.shape[0], dk = q_t.shape[1], n_v = v_t.shape[0], dv = v_t.shape[1];
  const bool interleave = op.get_string("head_repeat") == "interleave";
  const float scale = static_cast<float>(op.get_float("scale"));
  const float* q = f32_in(op.inputs[0]);
  const float* k = f32_in(op.inputs[1]);
  const float* v = f32_in(op.inputs[2]);
  const float* g = f32_in(op.inputs[3]);
  const float* beta = f32_in(op.inputs[4]);
  std::vector<float>& y = f32_out(op.outputs[0]);
  std::vector<float>& state = f32_out(op.outputs[1]);
  std::vector<float> m(static_cast<size_t>(dv));
  for (int64_t h = 0; h < n_v; ++h) {
    const int64_t kh = interleave ? h / (n_v / n_k) : h % n_k;
    float* S = state.data() + h * dk * dv;
    const float* kv = k + kh * dk;
    const float* qv = q + kh * dk;
    const float decay = std::exp(g[h]);
    for (int64_t i = 0; i < dk * dv; ++i) S[i] *= decay;
    std::fill(m.begin(), m.end(), 0.0f);
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) m[j] += S[i * dv + j] * kv[i];
    for (int64_t j = 0; j < dv; ++j) m[j] = beta[h] * (v[h * dv + j] - m[j]);  // delta
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j) S[i * dv + j] += kv[i] * m[j];
    for (int64_t j = 0; j < dv; ++j) {
      float acc = 0.0f;
      for (int64_t i = 0; i < dk; ++i) acc += S[i * dv + j] * scale * qv[i];
      y[h * dv + j] = acc;
    }
    for (int64_t i = 0; i < dk * dv; ++i) S[i] = round_to(state_t.type, S[i]);
  }
}

}  // namespace lanec
