// The reference executor on the graph that uses every op kind
// (tests/graph/sample_graphs.h), with random f32 constants: every kind runs,
// outputs stay finite, runs are deterministic, and the recurrent and MoE
// kinds match hand computations from their operands.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>

#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/ref/executor.h"
#include "lib/ref/weights.h"
#include "tests/graph/sample_graphs.h"

using namespace lanec;

namespace {

struct TourModel {
  Graph graph;
  std::vector<uint8_t> bytes;
  std::optional<GgufFile> gguf;
};

// The tour graph with every constant turned f32 and a GGUF holding random
// values for them (small, so that exp/softplus stay tame).
std::unique_ptr<TourModel> make_tour() {
  auto m = std::make_unique<TourModel>();
  m->graph = lanec::test::build_every_kind();
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  GgufWriter w;
  w.set("general.architecture", GgufValue::string("tour"));
  for (TensorId id = 0; id < m->graph.tensors().size(); ++id) {
    Tensor& t = m->graph.tensor(id);
    if (t.role != Role::constant) continue;
    t.type = GgmlType::F32;
    std::vector<float> values(static_cast<size_t>(t.numel()));
    for (float& v : values) v = normal(rng);
    if (t.name == "rope_freqs.weight") values = {1.0f, 2.0f};
    if (t.name == "blk.1.ssm_a") for (float& v : values) v = -std::abs(v) - 0.1f;
    std::vector<uint8_t> raw(values.size() * sizeof(float));
    std::memcpy(raw.data(), values.data(), raw.size());
    std::vector<uint64_t> ne(t.shape.rbegin(), t.shape.rend());
    w.add_tensor(t.gguf_name, ne, GgmlType::F32, raw);
  }
  m->bytes = w.to_bytes();
  m->gguf.emplace(GgufFile::parse(m->bytes.data(), m->bytes.size(), "tour"));
  return m;
}

}  // namespace

TEST_CASE("reference executor runs every op kind", "[ref]") {
  auto m = make_tour();
  WeightStore store(*m->gguf);
  ReferenceExecutor a(m->graph, store), b(m->graph, store);
  std::vector<float> prev_mix;
  for (int32_t pos = 0; pos < 10; ++pos) {  // past the 8-row sliding-window ring
    INFO("position " << pos);
    const auto probs = a.step(pos % 50, pos);
    CHECK(b.step(pos % 50, pos) == probs);
    double sum = 0.0;
    for (float p : probs) {
      REQUIRE(std::isfinite(p));
      sum += p;
    }
    CHECK(sum == Approx(1.0));

    // moe_route (topk_softmax): the two largest router logits, softmaxed.
    const auto router = a.values("router_l00");
    const auto ids = a.values("expert_ids_l00");
    const auto wts = a.values("expert_weights_l00");
    std::vector<int> order{0, 1, 2, 3};
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return router[x] > router[y]; });
    CHECK(static_cast<int>(ids[0]) == order[0]);
    CHECK(static_cast<int>(ids[1]) == order[1]);
    const double e1 = std::exp(router[order[1]] - router[order[0]]);
    CHECK(wts[0] == Approx(1.0 / (1.0 + e1)));
    CHECK(wts[1] == Approx(e1 / (1.0 + e1)));

    // moe_experts (swiglu_oai, biases): sum_j w_j (D_e act(G_e x + gb, U_e x + ub) + db).
    {
      const auto x = a.values("attn_flat_l00");
      const auto G = a.values("blk.0.ffn_gate_exps.weight"), U = a.values("blk.0.ffn_up_exps.weight");
      const auto D = a.values("blk.0.ffn_down_exps.weight");
      const auto gb = a.values("blk.0.ffn_gate_exps.bias"), ub = a.values("blk.0.ffn_up_exps.bias");
      const auto db = a.values("blk.0.ffn_down_exps.bias");
      std::vector<double> want(32, 0.0);
      for (size_t j = 0; j < 2; ++j) {
        const size_t e = static_cast<size_t>(ids[j]);
        std::vector<double> h(64);
        for (size_t r = 0; r < 64; ++r) {
          double g = gb[e * 64 + r], u = ub[e * 64 + r];
          for (size_t c = 0; c < 32; ++c) {
            g += G[(e * 64 + r) * 32 + c] * x[c];
            u += U[(e * 64 + r) * 32 + c] * x[c];
          }
          g = std::min(g, 7.0);
          u = std::max(-7.0, std::min(u, 7.0));
          h[r] = g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0);
        }
        for (size_t r = 0; r < 32; ++r) {
          double acc = db[e * 32 + r];
          for (size_t c = 0; c < 64; ++c) acc += D[(e * 32 + r) * 64 + c] * h[c];
          want[r] += wts[j] * acc;
        }
      }
      const auto got = a.values("moe_l00");
      for (size_t r = 0; r < 32; ++r) CHECK(got[r] == Approx(want[r]).margin(1e-5));
    }

    // short_conv: y[c] = sum over the last 4 inputs (oldest first) * w[c, t].
    const auto mix = a.values("qkv_mixed_l01");
    const auto conv = a.values("conv_l01");
    const auto w = a.values("blk.1.ssm_conv1d.weight");
    if (pos == 0)
      for (size_t c = 0; c < 24; ++c) CHECK(conv[c] == Approx(w[c * 4 + 3] * mix[c]));
    if (pos == 1)
      for (size_t c = 0; c < 24; ++c)
        CHECK(conv[c] == Approx(w[c * 4 + 2] * prev_mix[c] + w[c * 4 + 3] * mix[c]).margin(1e-6));
    prev_mix = mix;

    // gated_delta_rule from a zero state: y[h] = beta[h] * scale * (q.k) * v[h].
    if (pos == 0) {
      const auto q = a.values("dq_l2_l01"), k = a.values("dk_l2_l01");
      const auto v = a.values("dv_heads_l01"), beta = a.values("beta_l01");
      const auto y = a.values("delta_l01");
      double qk = 0.0;
      for (size_t i = 0; i < 4; ++i) qk += q[i] * k[i];
      for (size_t h = 0; h < 4; ++h)
        for (size_t j = 0; j < 2; ++j)
          CHECK(y[h * 2 + j] == Approx(beta[h] * 0.5 * qk * v[h * 2 + j]).margin(1e-6));
    }
  }
}
