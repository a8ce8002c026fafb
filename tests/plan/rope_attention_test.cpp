// The RoPE launch taken into the attention launch (rule rope_attention):
// which launches remain, what the fused attention carries, when the rule
// declines, and that the CPU schedule executor's fused step still agrees with
// the graph reference (and moves when the prologue's V copy is dropped).
#include <catch2/catch.hpp>

#include <cmath>

#include "lib/plan/cpu_schedule.h"
#include "lib/plan/planner.h"
#include "lib/ref/executor.h"
#include "lib/ref/weights.h"
#include "tests/plan/plan_fixtures.h"

namespace lanec {
namespace {

PlanResult plan_with(const Graph& g, const std::vector<std::string>& held, const std::string& cache = "f16",
                     const std::string& activations = "int8") {
  PlanOptions options;
  options.held = held;
  return plan_graph(g, test::test_knobs(cache, activations), options);
}

int launches_of(const Schedule& s, LaunchKind kind) {
  int n = 0;
  for (const Launch& l : s.launches) n += l.kind == kind;
  return n;
}

const RuleCount& census_of(const Schedule& s) {
  for (const RuleCount& r : s.census.rules)
    if (r.rule == "rope_attention") return r;
  FAIL("no census entry for rope_attention");
  return s.census.rules.front();
}

std::string only_reason(const RuleCount& r) { return r.declined.size() == 1 ? r.declined.begin()->first : ""; }

TEST_CASE("rope_attention: no RoPE or cache-write launch remains; the attention forms q and stores its rows",
          "[plan][rope-attention]") {
  for (const char* preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    INFO(preset);
    auto model = test::tiny_model(preset);
    const Schedule s = plan_with(model->graph, {}).schedule;
    CHECK(launches_of(s, LaunchKind::rope) == 0);
    CHECK(launches_of(s, LaunchKind::kv_write) == 0);
    CHECK(census_of(s).fired == 2);
    int layer = 0;
    for (const Launch& l : s.launches) {
      const auto* a = std::get_if<AttentionLaunch>(&l.params);
      if (!a) continue;
      const std::string suffix = "_l0" + std::to_string(layer++);
      REQUIRE(a->rope.has_value());
      const RopeLaunch& r = *a->rope;
      REQUIRE(r.parts.size() == 2);
      CHECK(r.parts[0].in_registers);
      CHECK(r.parts[0].cache.empty());
      CHECK(r.parts[0].n_head == a->n_head);
      CHECK(r.parts[1].cache == a->k_cache);
      CHECK(r.parts[1].cache_only);
      CHECK(r.v == "v" + suffix);
      CHECK(r.v_cache == a->v_cache);
      CHECK(r.neox == (std::string(preset) != "llama-tiny"));
      CHECK(r.parts[0].norm_weight.empty() == (std::string(preset) != "qwen3-tiny"));
      // The launch stores the cache rows and leaves the query's input as it was.
      const std::vector<std::string> writes = l.writes();
      CHECK(std::count(writes.begin(), writes.end(), a->k_cache) == 1);
      CHECK(std::count(writes.begin(), writes.end(), a->v_cache) == 1);
      CHECK(std::count(writes.begin(), writes.end(), r.parts[0].x) == 0);
    }
    CHECK(layer == 2);
  }
}

TEST_CASE("rope_attention declines: K rotated apart, rotated K read by the graph, a head a lane cannot rotate",
          "[plan][rope-attention]") {
  auto model = test::tiny_model("qwen3-tiny");
  const Schedule apart = plan_with(model->graph, {"rope_parts"}).schedule;
  CHECK(census_of(apart).fired == 0);
  CHECK(census_of(apart).matched == 2);
  CHECK(only_reason(census_of(apart)).find("does not also rotate the key") != std::string::npos);
  CHECK(launches_of(apart, LaunchKind::rope) == 4);

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
  const Schedule out = plan_with(test::decoder_graph(d), {}).schedule;
  CHECK(census_of(out).fired == 1);  // layer 1 only
  CHECK(only_reason(census_of(out)) == "k_rope_l00 is also read by the graph's outputs");
  CHECK(launches_of(out, LaunchKind::rope) == 1);

  d.k_rope_output = false;
  d.head_dim = 96;  // 3 elements a lane: (2i, 2i+1) pairs straddle lanes
  d.n_embd = 384;
  const Schedule odd = plan_with(test::decoder_graph(d), {}).schedule;
  CHECK(census_of(odd).fired == 0);
  CHECK(only_reason(census_of(odd)).find("a lane cannot rotate its run of a 96-element head") != std::string::npos);
  CHECK(launches_of(odd, LaunchKind::rope) == 2);
}

TEST_CASE("rope_attention: the CPU schedule executor agrees with the graph reference over several steps",
          "[plan][rope-attention]") {
  for (const char* preset : {"llama-tiny", "qwen3-tiny"}) {
    INFO(preset);
    auto model = test::tiny_model(preset);
    const PlanResult plan = plan_with(model->graph, {}, "f32", "dequant");
    REQUIRE(census_of(plan.schedule).fired == 2);
    WeightStore weights(*model->gguf, 1);
    ReferenceExecutor reference(model->graph, weights, ReferenceOptions{1});
    Schedule broken = plan.schedule;  // the V rows never reach the cache
    for (Launch& l : broken.launches)
      if (auto* a = std::get_if<AttentionLaunch>(&l.params); a && a->rope) {
        a->rope->v.clear();
        a->rope->v_cache.clear();
        a->rope->n_v_head = 0;
      }
    CpuScheduleExecutor good(plan.schedule, weights), bad(broken, weights);
    double scale = 0.0, good_diff = 0.0, bad_diff = 0.0;
    const int tokens[] = {17, 3, 250, 42};
    for (int pos = 0; pos < 4; ++pos) {
      const std::vector<float> ref = reference.step(tokens[pos], pos);
      const std::vector<float> got = good.step(tokens[pos], pos), wrong = bad.step(tokens[pos], pos);
      for (size_t i = 0; i < ref.size(); ++i) {
        scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
        good_diff = std::max(good_diff, static_cast<double>(std::fabs(got[i] - ref[i])));
        bad_diff = std::max(bad_diff, static_cast<double>(std::fabs(wrong[i] - ref[i])));
      }
    }
    CHECK(good_diff <= 1e-4 * scale);
    CHECK(bad_diff > 1e-2 * scale);
  }
}

}  // namespace
}  // namespace lanec
