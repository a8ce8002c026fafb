// The CPU reference executor: op semantics on hand-made graphs (RoPE
// layouts, attention at position 0), agreement with an independent
// straightforward forward pass written here in double precision, determinism
// across runs and thread counts, greedy generation, and runtime errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "lib/common/error.h"
#include "lib/graph/builder.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/ref/executor.h"
#include "lib/ref/generate.h"
#include "lib/ref/weights.h"
#include "tests/recognize/tiny_models.h"

using namespace lanec;
using lanec::testing::make_tiny_model;
using lanec::testing::TinyModel;
using lanec::testing::TinyOptions;

namespace {

// ---- an independent forward pass over the raw GGUF tensors (f32 models) ----

struct RawModel {
  const GgufFile& g;
  std::string arch;

  std::vector<double> tensor(const std::string& name) const {
    const GgufTensorInfo& t = g.tensor(name);
    REQUIRE(t.type == GgmlType::F32);
    std::vector<float> f(t.n_elements);
    std::memcpy(f.data(), t.data, t.n_bytes);
    return std::vector<double>(f.begin(), f.end());
  }
  int64_t key(const std::string& k) const { return static_cast<int64_t>(g.get_uint(arch + "." + k)); }
  double fkey(const std::string& k) const {
    return static_cast<double>(static_cast<float>(g.get_float(arch + "." + k)));
  }
};

std::vector<double> matvec(const std::vector<double>& w, const std::vector<double>& x) {
  const size_t cols = x.size(), rows = w.size() / cols;
  std::vector<double> y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) y[r] += w[r * cols + c] * x[c];
  return y;
}

void rms_normalize(double* x, size_t n, const std::vector<double>& w, double eps) {
  double ss = 0.0;
  for (size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  for (size_t i = 0; i < n; ++i) x[i] = x[i] * inv * w[i];
}

// Rotates each head: llama pairs (2i, 2i+1), qwen pairs (i, i + hd/2).
void rotate(std::vector<double>& v, int64_t heads, int64_t hd, int pos, double base, bool neox) {
  for (int64_t h = 0; h < heads; ++h) {
    double* x = v.data() + h * hd;
    for (int64_t i = 0; i < hd / 2; ++i) {
      const double angle = pos / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(hd));
      const int64_t a = neox ? i : 2 * i, b = neox ? i + hd / 2 : 2 * i + 1;
      const double xa = x[a], xb = x[b];
      x[a] = xa * std::cos(angle) - xb * std::sin(angle);
      x[b] = xa * std::sin(angle) + xb * std::cos(angle);
    }
  }
}

// Logits of every step of `tokens` fed at positions 0, 1, ...
std::vector<std::vector<double>> independent_forward(const GgufFile& g,
                                                     const std::vector<int32_t>& tokens) {
  RawModel m{g, g.get_string("general.architecture")};
  const int64_t d = m.key("embedding_length"), n_layer = m.key("block_count");
  const int64_t nh = m.key("attention.head_count"), nkv = m.key("attention.head_count_kv");
  const int64_t hd = m.key("attention.key_length");
  const double eps = m.fkey("attention.layer_norm_rms_epsilon"), base = m.fkey("rope.freq_base");
  const bool neox = m.arch != "llama";
  const auto embd = m.tensor("token_embd.weight");
  const auto head = g.find_tensor("output.weight") ? m.tensor("output.weight") : embd;
  std::vector<std::vector<std::vector<double>>> k_cache(n_layer), v_cache(n_layer);
  std::vector<std::vector<double>> all_logits;
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    std::vector<double> x(embd.begin() + tokens[pos] * d, embd.begin() + (tokens[pos] + 1) * d);
    for (int64_t l = 0; l < n_layer; ++l) {
      auto p = [&](const std::string& s) { return "blk." + std::to_string(l) + "." + s; };
      std::vector<double> h = x;
      rms_normalize(h.data(), d, m.tensor(p("attn_norm.weight")), eps);
      auto q = matvec(m.tensor(p("attn_q.weight")), h);
      auto k = matvec(m.tensor(p("attn_k.weight")), h);
      auto v = matvec(m.tensor(p("attn_v.weight")), h);
      if (g.find_tensor(p("attn_q.bias"))) {
        const auto bq = m.tensor(p("attn_q.bias")), bk = m.tensor(p("attn_k.bias")),
                   bv = m.tensor(p("attn_v.bias"));
        for (size_t i = 0; i < q.size(); ++i) q[i] += bq[i];
        for (size_t i = 0; i < k.size(); ++i) k[i] += bk[i], v[i] += bv[i];
      }
      if (g.find_tensor(p("attn_q_norm.weight"))) {
        const auto qn = m.tensor(p("attn_q_norm.weight")), kn = m.tensor(p("attn_k_norm.weight"));
        for (int64_t hh = 0; hh < nh; ++hh) rms_normalize(q.data() + hh * hd, hd, qn, eps);
        for (int64_t hh = 0; hh < nkv; ++hh) rms_normalize(k.data() + hh * hd, hd, kn, eps);
      }
      rotate(q, nh, hd, static_cast<int>(pos), base, neox);
      rotate(k, nkv, hd, static_cast<int>(pos), base, neox);
      k_cache[l].push_back(k);
      v_cache[l].push_back(v);
      std::vector<double> attn(nh * hd, 0.0);
      for (int64_t hh = 0; hh < nh; ++hh) {
        const int64_t kvh = hh / (nh / nkv);
        std::vector<double> s(pos + 1);
        double mx = -1e300, sum = 0.0;
        for (size_t t = 0; t <= pos; ++t) {
          s[t] = 0.0;
          for (int64_t i = 0; i < hd; ++i) s[t] += q[hh * hd + i] * k_cache[l][t][kvh * hd + i];
          s[t] /= std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, s[t]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (size_t t = 0; t <= pos; ++t)
          for (int64_t i = 0; i < hd; ++i)
            attn[hh * hd + i] += s[t] / sum * v_cache[l][t][kvh * hd + i];
      }
      const auto o = matvec(m.tensor(p("attn_output.weight")), attn);
      for (int64_t i = 0; i < d; ++i) x[i] += o[i];
      h = x;
      rms_normalize(h.data(), d, m.tensor(p("ffn_norm.weight")), eps);
      auto gate = matvec(m.tensor(p("ffn_gate.weight")), h);
      const auto up = matvec(m.tensor(p("ffn_up.weight")), h);
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const auto down = matvec(m.tensor(p("ffn_down.weight")), gate);
      for (int64_t i = 0; i < d; ++i) x[i] += down[i];
    }
    rms_normalize(x.data(), d, m.tensor("output_norm.weight"), eps);
    all_logits.push_back(matvec(head, x));
  }
  return all_logits;
}

double max_rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return diff / scale;
}

// ---- a toy model: one embedding table in a GGUF, graphs built by hand ----

struct Toy {
  std::vector<uint8_t> bytes;
  std::optional<GgufFile> gguf;
};

std::unique_ptr<Toy> toy_gguf(const std::vector<float>& table, uint64_t cols) {
  GgufWriter w;
  w.set("general.architecture", GgufValue::string("toy"));
  std::vector<uint8_t> raw(table.size() * sizeof(float));
  std::memcpy(raw.data(), table.data(), raw.size());
  w.add_tensor("table", {cols, table.size() / cols}, GgmlType::F32, raw);
  auto toy = std::make_unique<Toy>();
  toy->bytes = w.to_bytes();
  toy->gguf.emplace(GgufFile::parse(toy->bytes.data(), toy->bytes.size(), "toy"));
  return toy;
}

// embed -> [1, 4] -> rope(mode) ; returns the graph.
Graph rope_graph(const std::string& mode) {
  GraphBuilder b;
  TensorId token = b.param("token", GgmlType::I32, {1});
  TensorId pos = b.param("pos", GgmlType::I32, {1});
  TensorId table = b.constant("table", GgmlType::F32, {2, 4});
  TensorId row = b.apply(OpKind::embed_get_rows, "row", {4}, {table, token});
  TensorId x = b.apply(OpKind::reshape, "x", {1, 4}, {row});
  TensorId y = b.apply_like(OpKind::rope, "y", {x, pos},
                            {{"mode", mode}, {"n_rot", int64_t{4}}, {"freq_base", 10000.0}});
  b.output(b.apply(OpKind::reshape, "out", {4}, {y}));
  return b.finish();
}

}  // namespace

TEST_CASE("reference rope: NORM rotates adjacent pairs, NEOX the halves", "[ref]") {
  auto toy = toy_gguf({1, 2, 3, 4, 0, 0, 0, 0}, 4);
  WeightStore store(*toy->gguf);
  // Frequencies for n_rot = 4: theta_0 = pos, theta_1 = pos * 10000^(-1/2) = pos / 100.
  const double t0 = 1.0, t1 = 0.01;
  {
    const Graph g = rope_graph("norm");
    ReferenceExecutor ex(g, store);
    const auto at0 = ex.step(0, 0);
    CHECK(at0 == std::vector<float>{1, 2, 3, 4});  // position 0 is the identity
    const auto y = ex.step(0, 1);
    CHECK(y[0] == Approx(1 * std::cos(t0) - 2 * std::sin(t0)));
    CHECK(y[1] == Approx(1 * std::sin(t0) + 2 * std::cos(t0)));
    CHECK(y[2] == Approx(3 * std::cos(t1) - 4 * std::sin(t1)));
    CHECK(y[3] == Approx(3 * std::sin(t1) + 4 * std::cos(t1)));
  }
  {
    const Graph g = rope_graph("neox");
    ReferenceExecutor ex(g, store);
    const auto y = ex.step(0, 1);
    CHECK(y[0] == Approx(1 * std::cos(t0) - 3 * std::sin(t0)));
    CHECK(y[2] == Approx(1 * std::sin(t0) + 3 * std::cos(t0)));
    CHECK(y[1] == Approx(2 * std::cos(t1) - 4 * std::sin(t1)));
    CHECK(y[3] == Approx(2 * std::sin(t1) + 4 * std::cos(t1)));
  }
}

TEST_CASE("reference executor: position 0 of a 1-layer model", "[ref]") {
  TinyOptions o;
  o.layers = 1;
  auto m = make_tiny_model("qwen3-tiny", o);
  const Graph g = recognize_model(*m->gguf);
  WeightStore store(*m->gguf);
  ReferenceExecutor ex(g, store);
  ex.step(7, 0);
  // RoPE at position 0 is the identity.
  CHECK(ex.values("q_rope_l00") == ex.values("q_norm_l00"));
  CHECK(ex.values("k_rope_l00") == ex.values("k_norm_l00"));
  // Attention over one position returns that position's V row; query heads
  // 0,1 share KV head 0 and heads 2,3 KV head 1.
  const auto v = ex.values("v_l00");
  const auto attn = ex.values("attn_l00");
  const size_t hd = 32;
  for (size_t h = 0; h < 4; ++h)
    for (size_t i = 0; i < hd; ++i) CHECK(attn[h * hd + i] == Approx(v[(h / 2) * hd + i]).epsilon(1e-6));
  // The cache row 0 holds k and v; row 1 is still empty.
  const auto cache_k = ex.values("cache_k_l00");
  const auto k = ex.values("k_rope_l00");
  CHECK(std::vector<float>(cache_k.begin(), cache_k.begin() + 64) == k);
  CHECK(std::all_of(cache_k.begin() + 64, cache_k.begin() + 128, [](float f) { return f == 0.0f; }));
  // next_token is the argmax of the logits.
  const auto logits = ex.values("logits");
  CHECK(ex.next_token() == std::max_element(logits.begin(), logits.end()) - logits.begin());
}

TEST_CASE("reference executor agrees with an independent forward pass", "[ref]") {
  for (const char* preset : {"qwen3-tiny", "qwen2-tiny", "llama-tiny"}) {
    for (uint32_t layers : {1u, 2u}) {
      TinyOptions o;
      o.layers = layers;
      o.tied = layers == 1;
      auto m = make_tiny_model(preset, o);
      const std::vector<int32_t> tokens{5, 300, 17, 5};
      const auto want = independent_forward(*m->gguf, tokens);
      const Graph g = recognize_model(*m->gguf);
      WeightStore store(*m->gguf);
      ReferenceExecutor ex(g, store);
      for (size_t pos = 0; pos < tokens.size(); ++pos) {
        INFO(preset << ", " << layers << " layers, position " << pos);
        const auto got = ex.step(tokens[pos], static_cast<int32_t>(pos));
        CHECK(max_rel_error(got, want[pos]) < 1e-5);
      }
    }
  }
}

TEST_CASE("reference greedy generation is deterministic across runs and thread counts", "[ref]") {
  TinyOptions o;
  o.type = GgmlType::Q8_0;
  auto m = make_tiny_model("qwen3-tiny", o);
  const Graph g = recognize_model(*m->gguf);
  auto run = [&](unsigned threads) {
    WeightStore store(*m->gguf, threads);
    ReferenceOptions options;
    options.threads = threads;
    ReferenceExecutor ex(g, store, options);
    std::vector<std::vector<float>> rows;
    GreedyResult r = generate_greedy(ex, {1, 2, 3}, 6, 256,
                                     [&](int64_t, int32_t, const std::vector<float>& l) { rows.push_back(l); });
    CHECK(r.steps == 3 + 6 - 1);
    CHECK(rows.size() == 8);
    return std::make_pair(r.generated, rows);
  };
  const auto a = run(1), b = run(1), c = run(2);
  CHECK(a.first.size() == 6);
  CHECK(a == b);
  CHECK(a == c);
  // Generated tokens are the argmax of the rows from the last prompt step on.
  for (size_t i = 0; i < 6; ++i) {
    const auto& row = a.second[2 + i];
    CHECK(a.first[i] == std::max_element(row.begin(), row.end()) - row.begin());
  }
}

TEST_CASE("reference executor: reset starts a new sequence", "[ref]") {
  auto m = make_tiny_model("llama-tiny");
  const Graph g = recognize_model(*m->gguf);
  WeightStore store(*m->gguf);
  ReferenceExecutor ex(g, store);
  const auto first = ex.step(3, 0);
  ex.step(4, 1);
  ex.reset();
  CHECK(ex.step(3, 0) == first);
  size_t constants = 0;
  for (const Tensor& t : g.tensors()) constants += t.role == Role::constant;
  CHECK(store.cached_tensors() == constants);  // each loaded once
}

TEST_CASE("reference executor errors name the op and the value", "[ref]") {
  RecognizeOptions options;
  options.max_ctx = 2;
  auto m = make_tiny_model("qwen2-tiny");
  const Graph g = recognize_model(*m->gguf, options);
  WeightStore store(*m->gguf);
  ReferenceExecutor ex(g, store);
  CHECK_THROWS_WITH(ex.step(512, 0), Catch::Contains("token 512 is outside the 512 rows of token_embd.weight"));
  ex.step(1, 0);
  ex.step(1, 1);
  CHECK_THROWS_WITH(ex.step(1, 2), Catch::Contains("position 2 needs 3 cache rows, cache_k_l00 has 2"));
  CHECK_THROWS_WITH(generate_greedy(ex, {1, 2}, 2, 2),
                    "prompt of 2 tokens + 2 generated needs 3 positions, the context holds 2");
}

TEST_CASE("weight store checks the graph's constant against the GGUF", "[ref]") {
  auto m = make_tiny_model("llama-tiny");
  WeightStore store(*m->gguf);
  Tensor t;
  t.name = "w";
  t.role = Role::constant;
  t.type = GgmlType::Q8_0;
  t.shape = {64};
  t.gguf_name = "output_norm.weight";
  CHECK_THROWS_WITH(store.get(t), "const w: expected element type q8_0 (from the graph), got f32 in llama-tiny");
  t.type = GgmlType::F32;
  t.shape = {32};
  CHECK_THROWS_WITH(store.get(t), "const w: expected shape [32] (from the graph), got [64] (ne [64]) in llama-tiny");
  t.shape = {8, 8};  // same element count, another shape
  CHECK_THROWS_WITH(store.get(t), Catch::Contains("expected shape [8, 8] (from the graph), got [64]"));
  t.shape = {64};
  const auto& values = store.get(t);
  CHECK(&values == &store.get("output_norm.weight"));  // cached, loaded once
  CHECK(store.cached_tensors() == 1);
  t.gguf_name = "nope";
  CHECK_THROWS_WITH(store.get(t), "const w: GGUF tensor \"nope\" not found in llama-tiny");
}
