// The planned schedule, run on the CPU over its own buffers and wiring,
// against the reference executor on the unfused graph: tiny llama, qwen2 and
// qwen3 models, several steps, with all rules on, each rule held alone and
// all held.
//
// Tolerances: dequant numerics with f32 caches differ from the reference
// only in summation order: |got - ref| <= 1e-4 * max|ref|, and the greedy
// token agrees. int8 activations with f16 caches round every GEMV input to 8
// bits (up to 1/254 of each block's largest value) and every cached K/V to
// 11 bits; through two layers and the head that measures about 2.7% of the
// largest logit on these models: 5e-2 * max|ref| (the greedy token may flip
// between near-equal logits, so it is not compared there).
#include <catch2/catch.hpp>
#include <cmath>

#include "lib/plan/cpu_schedule.h"
#include "lib/plan/planner.h"
#include "lib/ref/executor.h"
#include "lib/ref/weights.h"
#include "rules/registry.h"
#include "tests/plan/plan_fixtures.h"

namespace lanec {
namespace {

const std::vector<int32_t> kTokens = {1, 17, 300, 42, 5};

struct Worst {
  double diff = 0.0;
  double scale = 0.0;
  size_t at = 0;
};

Worst compare(const std::vector<float>& got, const std::vector<float>& ref) {
  Worst w;
  for (float r : ref) w.scale = std::max(w.scale, static_cast<double>(std::fabs(r)));
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    if (d > w.diff) {
      w.diff = d;
      w.at = i;
    }
  }
  return w;
}

// Plans `model` with `held`, runs kTokens through the schedule and the
// reference, and checks every step's logits within rtol * max|ref|.
void check_against_reference(const test::TinyModel& model, const Knobs& knobs,
                             const std::vector<std::string>& held, double rtol) {
  PlanOptions options;
  options.held = held;
  PlanResult plan = plan_graph(model.graph, knobs, options);
  WeightStore weights(*model.gguf, 1);
  CpuScheduleExecutor scheduled(plan.schedule, weights);
  ReferenceExecutor reference(model.graph, weights, ReferenceOptions{1});
  std::string held_text;
  for (const std::string& h : held) held_text += h + " ";
  for (size_t step = 0; step < kTokens.size(); ++step) {
    std::vector<float> ref = reference.step(kTokens[step], static_cast<int32_t>(step));
    std::vector<float> got = scheduled.step(kTokens[step], static_cast<int32_t>(step));
    REQUIRE(got.size() == ref.size());
    Worst w = compare(got, ref);
    INFO("held: " << (held_text.empty() ? "none" : held_text) << " step " << step << " worst |got-ref| "
                  << w.diff << " at logit " << w.at << " (got " << got[w.at] << ", ref " << ref[w.at]
                  << "), max|ref| " << w.scale);
    CHECK(w.diff <= rtol * w.scale);
    if (rtol <= 1e-4) CHECK(scheduled.next_token() == reference.next_token());
  }
}

void check_all_holds(const std::string& preset, const Knobs& knobs, double rtol) {
  auto model = test::tiny_model(preset);
  SECTION("all rules on") { check_against_reference(*model, knobs, {}, rtol); }
  SECTION("each rule held alone") {
    for (const std::string& rule : rule_names()) check_against_reference(*model, knobs, {rule}, rtol);
  }
  SECTION("all rules held") { check_against_reference(*model, knobs, rule_names(), rtol); }
}

TEST_CASE("schedule matches the reference: llama-tiny, dequant, f32 cache", "[plan]") {
  check_all_holds("llama-tiny", test::test_knobs("f32", "dequant"), 1e-4);
}

TEST_CASE("schedule matches the reference: qwen2-tiny, dequant, f32 cache", "[plan]") {
  check_all_holds("qwen2-tiny", test::test_knobs("f32", "dequant"), 1e-4);
}

TEST_CASE("schedule matches the reference: qwen3-tiny, dequant, f32 cache", "[plan]") {
  check_all_holds("qwen3-tiny", test::test_knobs("f32", "dequant"), 1e-4);
}

TEST_CASE("schedule matches the reference within int8 tolerance: int8 activations, f16 cache",
          "[plan]") {
  for (const char* preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    auto model = test::tiny_model(preset);
    // One word rounds to 1/254 of a block's largest value, two words to about
    // 1/64516 (with the f16 cache's rounding on top): a wiring fault in
    // either form moves the logits far more.
    for (auto [numerics, tolerance] : {std::pair{"int8", 5e-2}, std::pair{"two-pass-int8", 2e-3}}) {
      check_against_reference(*model, test::test_knobs("f16", numerics), {}, tolerance);
      check_against_reference(*model, test::test_knobs("f16", numerics), rule_names(), tolerance);
      // glu_pair held (under int8 it declines anyway): the SwiGLU launch writes the int8 form.
      check_against_reference(*model, test::test_knobs("f16", numerics), {"glu_pair"}, tolerance);
    }
  }
}

TEST_CASE("ffn_fused on one SM: the schedule matches the reference and the chain it replaces bit for bit",
          "[plan]") {
  // On one SM the tiny presets' FFN blocks fill the chip, so the rule fires.
  Knobs knobs = test::test_knobs("f16", "two-pass-int8");
  knobs.chip.sms = 1;
  for (const char* preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    INFO(preset);
    auto model = test::tiny_model(preset);
    check_against_reference(*model, knobs, {}, 2e-3);
    PlanOptions held;
    held.held = {"ffn_fused"};
    const PlanResult fused_plan = plan_graph(model->graph, knobs, {});
    const PlanResult chain_plan = plan_graph(model->graph, knobs, held);
    REQUIRE(fused_plan.schedule.census.launches.count("ffn") == 1);
    CHECK(fused_plan.schedule.census.launches.at("ffn") == 2);
    CHECK(chain_plan.schedule.census.launches.count("ffn") == 0);
    WeightStore weights(*model->gguf, 1);
    CpuScheduleExecutor fused(fused_plan.schedule, weights), chain(chain_plan.schedule, weights);
    for (size_t step = 0; step < kTokens.size(); ++step)
      CHECK(fused.step(kTokens[step], static_cast<int32_t>(step)) ==
            chain.step(kTokens[step], static_cast<int32_t>(step)));
  }
}

TEST_CASE("schedule matches the reference with f16 weights (f32 GEMV numerics)", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny", 0, GgmlType::F16);
  check_against_reference(*model, test::test_knobs("f32", "int8"), {}, 1e-4);
}

TEST_CASE("a planner wiring bug changes the logits", "[plan]") {
  // Guards the guard: move one view by one element and the schedule must
  // disagree with the reference.
  auto model = test::tiny_model("llama-tiny");
  PlanResult plan = plan_graph(model->graph, test::test_knobs("f32", "dequant"), {});
  bool moved = false;
  for (Buffer& b : plan.schedule.buffers)
    if (!moved && b.is_view() && b.view_offset > 0) {
      b.view_offset -= 1;
      moved = true;
    }
  REQUIRE(moved);
  WeightStore weights(*model->gguf, 1);
  CpuScheduleExecutor scheduled(plan.schedule, weights);
  ReferenceExecutor reference(model->graph, weights, ReferenceOptions{1});
  // At position 0 attention returns V whatever Q is; later steps see Q.
  double worst = 0.0, scale = 0.0;
  for (size_t step = 0; step < 3; ++step) {
    std::vector<float> ref = reference.step(kTokens[step], static_cast<int32_t>(step));
    std::vector<float> got = scheduled.step(kTokens[step], static_cast<int32_t>(step));
    Worst w = compare(got, ref);
    worst = std::max(worst, w.diff);
    scale = std::max(scale, w.scale);
  }
  CHECK(worst > 1e-3 * scale);
}

}  // namespace
}  // namespace lanec

#include <random>

#include "kernels/reference/numeric.h"

namespace lanec {
namespace {

TEST_CASE("the executor's int8 quantization is the kernels' arithmetic", "[plan]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(256);
  for (float& v : x) v = dist(rng);
  for (int j = 0; j < 32; ++j) x[static_cast<size_t>(64 + j)] = 0.0f;  // an all-zero block
  std::vector<int8_t> qs(256), ref_qs(256);
  std::vector<float> d(8), ref_d(8);
  quantize_q8_blocks(x.data(), 256, qs.data(), d.data());
  kernels::ref::quantize_q8(x.data(), 256, ref_qs.data(), ref_d.data());
  CHECK(qs == ref_qs);
  CHECK(d == ref_d);
}

// Worst logit error (relative to the row's largest logit) of a schedule
// against the f32 reference over kTokens.
double worst_relative_error(const test::TinyModel& model, const Knobs& knobs) {
  PlanResult plan = plan_graph(model.graph, knobs, {});
  WeightStore weights(*model.gguf, 1);
  CpuScheduleExecutor scheduled(plan.schedule, weights);
  ReferenceExecutor reference(model.graph, weights, ReferenceOptions{1});
  double worst = 0.0;
  for (size_t step = 0; step < kTokens.size(); ++step) {
    std::vector<float> ref = reference.step(kTokens[step], static_cast<int32_t>(step));
    Worst w = compare(scheduled.step(kTokens[step], static_cast<int32_t>(step)), ref);
    worst = std::max(worst, w.diff / w.scale);
  }
  return worst;
}

TEST_CASE("two-word int8 activations come close to the f32 reference where one word does not",
          "[plan]") {
  // int8 keeps about 1/254 of a block's largest value per element;
  // two-pass-int8's low word about 1/64516. Both quantize with the same
  // high word, so only the second word separates them.
  auto model = test::tiny_model("qwen3-tiny");
  const double one_word = worst_relative_error(*model, test::test_knobs("f32", "int8"));
  const double two_words = worst_relative_error(*model, test::test_knobs("f32", "two-pass-int8"));
  INFO("int8 " << one_word << ", two-pass-int8 " << two_words);
  CHECK(one_word > 5e-3);
  CHECK(two_words < 1e-3);
  CHECK(two_words * 20 < one_word);
  // Its GEMVs read both words: the int8 forms are planned two-word.
  PlanResult two = plan_graph(model->graph, test::test_knobs("f32", "two-pass-int8"), {});
  const Buffer& x = two.schedule.buffer("attn_norm_l00.q8");
  CHECK(x.form == BufferForm::q8x2);
  CHECK(x.bytes == 2 * 64 + 2 * 4);
  bool two_word_gemv = false;
  for (const Launch& l : two.schedule.launches)
    if (const auto* g = std::get_if<GemvLaunch>(&l.params); g && g->x_q8 == "attn_norm_l00.q8")
      two_word_gemv = g->numerics == GemvNumerics::int8x2;
  CHECK(two_word_gemv);
}

TEST_CASE("two-word quantization: the low word holds the remainder to 1/254 of a step", "[plan]") {
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * (1.0f + static_cast<float>(i % 7));
  std::vector<int8_t> qs(256), lo(256);
  std::vector<float> d(8);
  quantize_q8_blocks(x.data(), 256, qs.data(), d.data(), lo.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double value = d[i / 32] * (qs[i] + lo[i] / 254.0);
    INFO("element " << i);
    CHECK(std::fabs(value - x[i]) <= d[i / 32] / 254.0 * 0.5 + 1e-6 * std::fabs(x[i]));
    CHECK(std::abs(static_cast<int>(lo[i])) <= 127);
  }
}

TEST_CASE("schedule matches the reference under random sets of held rules", "[plan]") {
  // Rules interact (qkv_head_epilogue with gemv_parts, head_norm_rope with
  // rope_parts, add_norm with gemv_norm_epilogue): hold random subsets.
  std::mt19937 rng(11);
  for (const char* preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    auto model = test::tiny_model(preset);
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<std::string> held;
      for (const std::string& rule : rule_names())
        if (rng() % 2) held.push_back(rule);
      check_against_reference(*model, test::test_knobs("f32", "dequant"), held, 1e-4);
    }
  }
}

}  // namespace
}  // namespace lanec

namespace lanec {
namespace {

TEST_CASE("schedule matches the reference under every subset of the attention-entry rules",
          "[plan][rope-write]") {
  // row_write joins the cache rows to the rope launch; with head_norm_rope,
  // rope_parts, qkv_head_epilogue and gemv_parts held in any combination it
  // must stay correct (held -> the separate launches of before).
  const std::vector<std::string> rules = {"head_norm_rope", "row_write", "rope_parts", "qkv_head_epilogue",
                                          "gemv_parts"};
  for (const char* preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    auto model = test::tiny_model(preset);
    for (unsigned mask = 0; mask < (1u << rules.size()); ++mask) {
      std::vector<std::string> held;
      for (size_t i = 0; i < rules.size(); ++i)
        if (mask & (1u << i)) held.push_back(rules[i]);
      check_against_reference(*model, test::test_knobs("f32", "dequant"), held, 1e-4);
    }
    // f16 caches round each stored row, whichever launch stores it.
    for (const std::vector<std::string>& held :
         {std::vector<std::string>{}, {"row_write"}, {"rope_parts"}, {"head_norm_rope", "rope_parts"}})
      check_against_reference(*model, test::test_knobs("f16", "int8"), held, 5e-2);
  }
}

}  // namespace
}  // namespace lanec
