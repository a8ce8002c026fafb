// The cache row write joined to the RoPE launch (rule row_write): which
// launches carry the K and V rows under which held rules, when the rotated K
// may skip its write-back, and that the CPU schedule executor really stores
// the rows from the RoPE launch.
#include <catch2/catch.hpp>

#include "lib/plan/cpu_schedule.h"
#include "lib/plan/planner.h"
#include "lib/ref/executor.h"
#include "lib/ref/weights.h"
#include "tests/plan/plan_fixtures.h"

namespace lanec {
namespace {

Schedule plan_with(const Graph& g, const std::vector<std::string>& held, const std::string& cache = "f16") {
  PlanOptions options;
  options.held = held;
  return plan_graph(g, test::test_knobs(cache, "int8"), options).schedule;
}

int launches_of(const Schedule& s, LaunchKind kind) {
  int n = 0;
  for (const Launch& l : s.launches) n += l.kind == kind;
  return n;
}

std::vector<const RopeLaunch*> ropes(const Schedule& s) {
  std::vector<const RopeLaunch*> out;
  for (const Launch& l : s.launches)
    if (const auto* r = std::get_if<RopeLaunch>(&l.params)) out.push_back(r);
  return out;
}

TEST_CASE("all rules on: the RoPE launch stores K and V rows and no kv_write launch remains", "[plan][rope-write]") {
  for (const char* preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    INFO(preset);
    auto model = test::tiny_model(preset);
    Schedule s = plan_with(model->graph, {});
    CHECK(launches_of(s, LaunchKind::kv_write) == 0);
    const auto rs = ropes(s);
    REQUIRE(rs.size() == 2);  // one a layer
    for (size_t layer = 0; layer < rs.size(); ++layer) {
      const RopeLaunch& r = *rs[layer];
      const std::string l = "_l0" + std::to_string(layer);
      REQUIRE(r.parts.size() == 2);
      CHECK(r.parts[0].cache.empty());  // Q
      CHECK(r.parts[1].cache == "cache_k" + l);
      CHECK(r.parts[1].cache_only);     // attention reads the cache, no one the rotated K
      CHECK(r.v == "v" + l);
      CHECK(r.v_cache == "cache_v" + l);
      CHECK(r.n_v_head == r.parts[1].n_head);
      CHECK(r.n_ctx == 256);
    }
    // The caches stay head-major f16 although no kv_write launch names them.
    const Buffer& kc = s.buffer("cache_k_l00");
    CHECK(kc.type == GgmlType::F16);
    CHECK(kc.layout == "head_major");
    CHECK(s.buffer("cache_v_l01").layout == "head_major");
  }
}

TEST_CASE("held rules: row_write held keeps kv_write launches; rope_parts held keeps K's own rope launch",
          "[plan][rope-write]") {
  auto model = test::tiny_model("qwen3-tiny");
  Schedule held = plan_with(model->graph, {"row_write"});
  CHECK(launches_of(held, LaunchKind::kv_write) == 4);  // K and V apart, per layer
  for (const RopeLaunch* r : ropes(held)) {
    CHECK(r->v.empty());
    for (const RopePart& p : r->parts) CHECK(p.cache.empty());
  }
  Schedule apart = plan_with(model->graph, {"rope_parts"});
  CHECK(launches_of(apart, LaunchKind::kv_write) == 0);
  int with_cache = 0;
  for (const RopeLaunch* r : ropes(apart)) {
    REQUIRE(r->parts.size() == 1);
    if (r->parts[0].cache.empty()) continue;
    ++with_cache;
    CHECK(!r->v.empty());
    CHECK(!r->parts[0].norm_weight.empty());  // head_norm_rope still fused in
  }
  CHECK(with_cache == 2);
  // head_norm_rope held: the K norm is a launch of its own before the rope that stores the rows.
  Schedule unnormed = plan_with(model->graph, {"head_norm_rope"});
  CHECK(launches_of(unnormed, LaunchKind::kv_write) == 0);
  CHECK(launches_of(unnormed, LaunchKind::rope) == 2 + 2 * 2);
}

TEST_CASE("the rotated K keeps its write-back when the graph outputs it", "[plan][rope-write]") {
  test::DecoderDims d;
  d.n_embd = 256;
  d.n_layer = 2;
  d.n_head = 4;
  d.n_head_kv = 2;
  d.head_dim = 64;
  d.n_ff = 512;
  d.n_vocab = 512;
  d.n_ctx = 128;
  d.k_rope_output = true;
  Schedule s = plan_with(test::decoder_graph(d), {});
  const auto rs = ropes(s);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0]->parts[1].cache == "cache_k_l00");
  CHECK(!rs[0]->parts[1].cache_only);  // k_rope_l00 is an output: the rotated K must land in k_l00
  CHECK(rs[1]->parts[1].cache_only);
  // The output is a view of the rotated buffer the launch writes.
  bool writes_k = false;
  for (const Launch& l : s.launches)
    if (l.name == "rope_q_l00")
      for (const std::string& w : l.writes()) writes_k = writes_k || w == "k_l00";
  CHECK(writes_k);
}

TEST_CASE("the CPU schedule executor stores the V rows from the RoPE launch", "[plan][rope-write]") {
  // Guards the executor tests: drop the V copy and the logits must move
  // (from position 0 on, attention returns the cached V).
  auto model = test::tiny_model("qwen2-tiny");
  PlanResult plan = plan_graph(model->graph, test::test_knobs("f32", "dequant"), {});
  WeightStore weights(*model->gguf, 1);
  ReferenceExecutor reference(model->graph, weights, ReferenceOptions{1});
  const std::vector<float> ref = reference.step(17, 0);
  Schedule broken = plan.schedule;
  for (Launch& l : broken.launches)
    if (auto* r = std::get_if<RopeLaunch>(&l.params)) {
      r->v.clear();
      r->v_cache.clear();
      r->n_v_head = 0;
    }
  CpuScheduleExecutor good(plan.schedule, weights), bad(broken, weights);
  const std::vector<float> got = good.step(17, 0), wrong = bad.step(17, 0);
  double scale = 0.0, good_diff = 0.0, bad_diff = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
    good_diff = std::max(good_diff, static_cast<double>(std::fabs(got[i] - ref[i])));
    bad_diff = std::max(bad_diff, static_cast<double>(std::fabs(wrong[i] - ref[i])));
  }
  CHECK(good_diff <= 1e-4 * scale);
  CHECK(bad_diff > 1e-2 * scale);
}

}  // namespace
}  // namespace lanec
