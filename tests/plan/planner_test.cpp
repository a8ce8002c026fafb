// The planner pipeline: held rules and their errors, stage dumps,
// determinism, buffers (qkv views, int8 forms, f16 caches), per-launch chip
// parameters, refusals naming the op, and planning time at 8B shapes.
#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <tuple>
#include <variant>

#include "kernels/limits.h"
#include "lib/graph/builder.h"
#include "lib/plan/link.h"
#include "lib/plan/planner.h"
#include "lib/plan/size.h"
#include "lib/plan/triggers.h"
#include "lib/plan/verify_schedule.h"
#include "rules/early_trigger.h"
#include "rules/registry.h"
#include "tests/plan/plan_fixtures.h"

namespace lanec {
namespace {

const Launch* find_launch(const Schedule& s, const std::string& name) {
  for (const Launch& l : s.launches)
    if (l.name == name) return &l;
  return nullptr;
}

const RuleCount& rule_count(const Schedule& s, const std::string& rule) {
  for (const RuleCount& r : s.census.rules)
    if (r.rule == rule) return r;
  FAIL("no census entry for " << rule);
  return s.census.rules.front();
}

TEST_CASE("the registry holds all 33 rules in their documented order", "[plan]") {
  const std::vector<std::string> expected = {
      "sandwich_norm", "gemv_bias", "gemv_norm_epilogue", "add_norm", "head_norm_rope",
      "slice_read", "row_write", "qkv_head_epilogue", "join_in_place", "conv_silu",
      "conv_silu_l2", "conv_parts", "gates", "gate_projections", "act_gate",
      "attn_output_gate", "glu_pair", "shared_expert", "moe_rows", "moe_deferred_finalize",
      "gather_scale", "embed_norm", "strided_values", "rows_a_warp", "staged_weights", "row_loop",
      "load_ahead", "gemv_argmax", "rope_parts", "gemv_parts", "ffn_fused", "early_trigger", "sequences"};
  CHECK(rule_names() == expected);
  for (const auto& rule : rule_registry()) CHECK(std::string(rule->intent()).size() > 10);
}

TEST_CASE("--hold: names in registry order; an unknown name lists the valid ones", "[plan]") {
  CHECK(parse_held_rules("glu_pair, add_norm,glu_pair") ==
        std::vector<std::string>{"add_norm", "glu_pair"});
  CHECK(parse_held_rules("").empty());
  std::string valid;
  for (const std::string& n : rule_names()) valid += (valid.empty() ? "" : ", ") + n;
  CHECK_THROWS_WITH(parse_held_rules("add_norm,fuse_everything"),
                    "unknown rule 'fuse_everything' in --hold; valid rules: " + valid);
}

TEST_CASE("--dump-after: every stage dumps; an unknown stage is an error", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  Knobs knobs = test::test_knobs("f16", "int8");
  for (const std::string& stage : plan_stage_names()) {
    PlanOptions options;
    options.dump_after = stage;
    PlanResult r = plan_graph(model->graph, knobs, options);
    INFO(stage);
    CHECK(!r.dump.empty());
  }
  PlanOptions rewrite;
  rewrite.dump_after = "rewrite";
  std::string text = plan_graph(model->graph, knobs, rewrite).dump;
  CHECK(text.find("rope [head_norm_rope, row_write, rope_parts] {") != std::string::npos);
  CHECK(text.find("gemv [qkv_head_epilogue, gemv_parts] pack=qkv_l00 {") != std::string::npos);
  PlanOptions bad;
  bad.dump_after = "emit";
  CHECK_THROWS_WITH(plan_graph(model->graph, knobs, bad),
                    "unknown stage 'emit' in --dump-after; valid stages: recognize, rewrite, link, "
                    "size, sequences, schedule");
}

TEST_CASE("the schedule names the buffers a step is fed through and read from", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  Schedule s = plan_graph(model->graph, test::test_knobs("f16", "int8"), {}).schedule;
  REQUIRE(s.find_argmax() != nullptr);
  CHECK(s.find_argmax()->out == "next_token");
  CHECK(s.token_param() == "token");
  CHECK(s.pos_param() == "pos");
  CHECK(s.logits_output() == "logits");

  // The argmax's params win over the embed's token; without an argmax the
  // embed names the token and the position falls back to the graph's name.
  auto& argmax = std::get<ArgmaxLaunch>(s.launches.back().params);
  argmax.token = "argmax_token";
  argmax.pos = "argmax_pos";
  CHECK(s.token_param() == "argmax_token");
  CHECK(s.pos_param() == "argmax_pos");
  s.launches.pop_back();
  CHECK(s.find_argmax() == nullptr);
  std::get<EmbedLaunch>(s.launches.front().params).token = "embed_token";
  CHECK(s.token_param() == "embed_token");
  CHECK(s.pos_param() == "pos");

  const Schedule empty;
  CHECK(empty.token_param() == "token");
  CHECK(empty.logits_output().empty());
}

TEST_CASE("planning is deterministic", "[plan]") {
  auto model = test::tiny_model("qwen2-tiny");
  Knobs knobs = test::test_knobs("f16", "int8");
  PlanResult a = plan_graph(model->graph, knobs, {});
  PlanResult b = plan_graph(model->graph, knobs, {});
  CHECK(schedule_text(a.schedule) == schedule_text(b.schedule));
  CHECK(census_json(a.schedule) == census_json(b.schedule));
  CHECK(census_text(a.schedule) == census_text(b.schedule));
}

TEST_CASE("Q, K and V are views of one qkv buffer; held, they are not", "[plan]") {
  auto model = test::tiny_model("llama-tiny");
  Knobs knobs = test::test_knobs("f32", "dequant");
  Schedule s = plan_graph(model->graph, knobs, {}).schedule;
  const Buffer& qkv = s.buffer("qkv_l00");
  CHECK(qkv.elements == 2 * 32 + 1 * 32 + 1 * 32);  // 2 heads, 1 KV head, 32 wide
  CHECK(s.buffer("q_l00").view_of == "qkv_l00");
  CHECK(s.buffer("q_l00").view_offset == 0);
  CHECK(s.buffer("k_l00").view_offset == 64);
  CHECK(s.buffer("v_l00").view_offset == 96);
  CHECK(s.storage_bytes_of("v_l00").second == 96 * 4);
  CHECK(s.storage_bytes_of("v_l00").first->name == "qkv_l00");
  // RoPE rotates in place: its output is a view of its input.
  CHECK(s.buffer("q_rope_l00").view_of == "q_l00");
  PlanOptions held;
  held.held = {"qkv_head_epilogue"};
  Schedule h = plan_graph(model->graph, knobs, held).schedule;
  CHECK(h.find_buffer("qkv_l00") == nullptr);
  CHECK(!h.buffer("k_l00").is_view());
}

TEST_CASE("int8 activations: norms and attention write int8 forms, quantize launches feed the rest", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  Schedule s = plan_graph(model->graph, test::test_knobs("f16", "int8"), {}).schedule;
  const auto& norm = std::get<RmsNormLaunch>(find_launch(s, "rms_norm_attn_norm_l00")->params);
  CHECK(norm.out_q8 == "attn_norm_l00.q8");
  CHECK(norm.out.empty());  // only GEMVs read it: no f32 form
  const auto& qkv = std::get<GemvLaunch>(find_launch(s, "gemv_q_l00")->params);
  CHECK(qkv.numerics == GemvNumerics::int8);
  CHECK(qkv.x_q8 == "attn_norm_l00.q8");
  CHECK(qkv.parts.size() == 3);
  // The attention output feeds only the output GEMV's int8 form: the
  // attention launch writes it, no quantize launch, no f32 form.
  CHECK(find_launch(s, "quantize_attn_l00") == nullptr);
  const auto& attn = std::get<AttentionLaunch>(find_launch(s, "attention_attn_l00")->params);
  CHECK(attn.out_q8 == "attn_l00.q8");
  CHECK(attn.out.empty());
  CHECK(s.find_buffer("attn_l00") == nullptr);
  CHECK(std::get<GemvLaunch>(find_launch(s, "gemv_attn_res_l00")->params).x_q8 == "attn_l00.q8");
  CHECK(s.buffer("attn_norm_l00.q8").bytes == 64 + 2 * 4);
  // The SwiGLU output's int8 form comes from the SwiGLU launch (glu_pair
  // declines: a last-block quantize in the GEMV measured slower than the
  // launch it saves, and the GEMV without the epilogue streams faster).
  CHECK(find_launch(s, "quantize_ffn_act_l00") == nullptr);
  const auto& glu = std::get<ElementwiseLaunch>(find_launch(s, "swiglu_ffn_act_l00")->params);
  CHECK(glu.out_q8 == "ffn_act_l00.q8");
  CHECK(glu.out.empty());
  CHECK(std::get<GemvLaunch>(find_launch(s, "gemv_ffn_gate_l00")->params).parts.size() == 2);
  // Two words: the same producers write them; the buffers hold both words.
  Schedule two = plan_graph(model->graph, test::test_knobs("f16", "two-pass-int8"), {}).schedule;
  CHECK(find_launch(two, "quantize_attn_norm_l00") == nullptr);
  CHECK(find_launch(two, "quantize_ffn_act_l00") == nullptr);
  CHECK(std::get<ElementwiseLaunch>(find_launch(two, "swiglu_ffn_act_l00")->params).out_q8 == "ffn_act_l00.q8");
  CHECK(find_launch(two, "quantize_attn_l00") == nullptr);
  CHECK(std::get<AttentionLaunch>(find_launch(two, "attention_attn_l00")->params).out_q8 == "attn_l00.q8");
  CHECK(std::get<RmsNormLaunch>(find_launch(two, "rms_norm_attn_norm_l00")->params).out_q8 == "attn_norm_l00.q8");
  CHECK(two.buffer("attn_norm_l00.q8").form == BufferForm::q8x2);
  CHECK(two.census.launches.count("quantize") == 0);
  CHECK(two.census.launches.at("swiglu") == 2);
  // dequant: f32 everywhere, no quantize launch.
  Schedule deq = plan_graph(model->graph, test::test_knobs("f16", "dequant"), {}).schedule;
  CHECK(deq.census.launches.count("quantize") == 0);
}

TEST_CASE("KV caches are head-major in the cache precision", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  Schedule s = plan_graph(model->graph, test::test_knobs("f16", "int8"), {}).schedule;
  const Buffer& k = s.buffer("cache_k_l01");
  CHECK(k.type == GgmlType::F16);
  CHECK(k.layout == "head_major");
  CHECK(k.shape == std::vector<int64_t>{2, 256, 32});
  CHECK(k.bytes == 2 * 256 * 32 * 2);
  Schedule f = plan_graph(model->graph, test::test_knobs("f32", "int8"), {}).schedule;
  CHECK(f.buffer("cache_k_l01").type == GgmlType::F32);
}

TEST_CASE("per-launch parameters come from the chip", "[plan]") {
  auto model = test::tiny_model("llama-tiny");
  // One SM: the tiny GEMVs have rows enough for 2 rows a warp (dequant q8_0).
  Schedule one = plan_graph(model->graph, test::test_knobs("f32", "dequant", 1), {}).schedule;
  const auto& logits1 = std::get<GemvLaunch>(find_launch(one, "gemv_logits")->params);
  CHECK(logits1.rows_per_warp == 2);
  CHECK(rule_count(one, "rows_a_warp").fired > 0);
  // 132 SMs: too few rows, and k split across warps instead.
  Schedule many = plan_graph(model->graph, test::test_knobs("f32", "dequant", 132), {}).schedule;
  const auto& logits = std::get<GemvLaunch>(find_launch(many, "gemv_logits")->params);
  CHECK(logits.rows_per_warp == 1);
  CHECK(rule_count(many, "rows_a_warp").fired == 0);
  CHECK(rule_count(many, "rows_a_warp").declined.size() == 1);
  const auto& attn = std::get<AttentionLaunch>(find_launch(many, "attention_attn_l00")->params);
  CHECK(attn.heads_per_block == attention_heads_per_block(attn.n_head / attn.n_kv_head, attn.head_dim));
  CHECK(attn.n_split == choose_attention_splits(attn.n_head, attn.heads_per_block, 256, 132));
  CHECK(attn.n_split == 16);  // 256 cache rows: one split per 16
  CHECK(many.buffer(attn.part_acc).role == BufferRole::workspace);
  CHECK(many.buffer(attn.done).role == BufferRole::workspace);
  CHECK(many.buffer(attn.done).type == GgmlType::I32);
  CHECK(many.buffer(attn.done).elements == attn.n_head * 8);  // one a share of a group for the cluster merge
  const auto& am = std::get<ArgmaxLaunch>(many.launches.back().params);
  CHECK(am.n_blocks == choose_argmax_blocks(am.n_vocab, 132));
  if (am.n_blocks > 1) {
    CHECK(many.buffer(am.done).role == BufferRole::workspace);
    CHECK(many.buffer(am.block_value).elements == am.n_blocks);
    CHECK(many.buffer(am.block_index).type == GgmlType::I32);
  }
  CHECK(choose_attention_splits(32, 1, 4096, 132) == 56);
  CHECK(choose_attention_splits(32, 1, 32768, 132) == 56);
  // The measured GEMV defaults: tall 1, square q8_0 2, ffn_down 16-bit 4.
  CHECK(choose_gemv_split_k(151936, 1, 4096, GgmlType::Q8_0, 132, 64) == 1);
  CHECK(choose_gemv_split_k(4096, 1, 4096, GgmlType::Q8_0, 132, 64) == 2);
  CHECK(choose_gemv_split_k(4096, 1, 12288, GgmlType::F16, 132, 64) == 4);
  CHECK(choose_gemv_split_k(4096, 1, 4096, GgmlType::BF16, 132, 64) == 2);
  // Few rows: split more to fill the chip; one chunk a lane while the warps
  // fill at most half of it.
  CHECK(choose_gemv_split_k(512, 1, 4096, GgmlType::Q8_0, 132, 64) == 8);
  CHECK(choose_gemv_split_k(512, 1, 64, GgmlType::Q8_0, 132, 64) == 1);
  // Two chunks a lane: Qwen3-0.6B's Q/K/V and gate/up (k 1024) at split 1,
  // 1.7B's (k 2048) and 8B's (k 4096) at 2.
  CHECK(choose_gemv_split_k(4096, 1, 1024, GgmlType::Q8_0, 132, 64) == 1);
  CHECK(choose_gemv_split_k(3072, 1, 1024, GgmlType::Q8_0, 132, 64) == 1);
  CHECK(choose_gemv_split_k(6144, 1, 2048, GgmlType::Q8_0, 132, 64, /*swiglu=*/true) == 2);
  CHECK(choose_gemv_split_k(12288, 1, 4096, GgmlType::Q8_0, 132, 64, /*swiglu=*/true) == 2);
  // One warp a row filling two thirds of the chip's resident warps (132 x 64
  // = 8,448; from 5,632 rows): split 1 for plain q8_0 GEMVs (1.7B's gate/up
  // parts, 12,288 rows; 8B's 6,144-row Q/K/V), 2 below (4,096-row Q/K/V and
  // output GEMVs); a SwiGLU pair keeps 2 up to 16k rows.
  CHECK(choose_gemv_split_k(12288, 1, 2048, GgmlType::Q8_0, 132, 64) == 1);
  CHECK(choose_gemv_split_k(6144, 1, 4096, GgmlType::Q8_0, 132, 64) == 1);
  CHECK(choose_gemv_split_k(5632, 1, 4096, GgmlType::Q8_0, 132, 64) == 1);
  CHECK(choose_gemv_split_k(5631, 1, 4096, GgmlType::Q8_0, 132, 64) == 2);
  CHECK(choose_gemv_split_k(12288, 1, 2048, GgmlType::Q8_0, 132, 64, /*swiglu=*/true) == 2);
  // An L4 (58 SMs of 48 warps = 2,784): split 1 from 1,856 rows.
  CHECK(choose_gemv_split_k(12288, 1, 2048, GgmlType::Q8_0, 58, resident_warps_per_sm(89)) == 1);
  CHECK(choose_gemv_split_k(1856, 1, 2048, GgmlType::Q8_0, 58, resident_warps_per_sm(89)) == 1);
  CHECK(choose_gemv_split_k(1855, 1, 2048, GgmlType::Q8_0, 58, resident_warps_per_sm(89)) == 2);
  CHECK(resident_warps_per_sm(90) == 64);
  CHECK(resident_warps_per_sm(80) == 64);
  CHECK(resident_warps_per_sm(89) == 48);
  CHECK(resident_warps_per_sm(75) == 32);
  CHECK(resident_warps_per_sm(70) == 64);
  CHECK(resident_warps_per_sm(120) == 48);
  CHECK_FALSE(known_resident_warps_per_sm(95).has_value());
  CHECK(resident_warps_per_sm(95) == kAssumedResidentWarpsPerSm);
  // Short rows double while the warps fit the resident warps, at least 1.5
  // chunks a lane (one while the warps fill at most half the chip): the down
  // projections of 0.6B (k 3072) and 1.7B (k 6144) at 4, 8B's (4,096 rows)
  // at 2; the output GEMVs (k 2048) of 0.6B at 4 (4,096 warps, one chunk a
  // lane) and of 1.7B at 2 (8,192 warps would be more than half).
  CHECK(choose_gemv_split_k(1024, 1, 3072, GgmlType::Q8_0, 132, 64) == 4);
  CHECK(choose_gemv_split_k(2048, 1, 6144, GgmlType::Q8_0, 132, 64) == 4);
  CHECK(choose_gemv_split_k(4096, 1, 12288, GgmlType::Q8_0, 132, 64) == 2);
  CHECK(choose_gemv_split_k(2048, 1, 2048, GgmlType::Q8_0, 132, 64) == 2);
  CHECK(choose_gemv_split_k(1024, 1, 2048, GgmlType::Q8_0, 132, 64) == 4);
  // 0.6B's Q/K/V and gate/up (k 1024): one chunk a lane at split 2, with
  // 8,192 and more warps: split 1.
  CHECK(choose_gemv_split_k(4096, 1, 1024, GgmlType::Q8_0, 132, 64) == 1);
  CHECK(choose_gemv_split_k(6144, 1, 1024, GgmlType::Q8_0, 132, 64) == 1);
}

TEST_CASE("each implemented rule fires on the tiny models", "[plan]") {
  struct Case {
    const char* rule;
    const char* preset;
    std::vector<std::string> held;
    int sms;
  };
  const std::vector<Case> cases = {
      {"add_norm", "llama-tiny", {"gemv_norm_epilogue"}, 132}, {"gemv_bias", "qwen2-tiny", {}, 132},
      {"gemv_norm_epilogue", "llama-tiny", {}, 132},
      {"head_norm_rope", "qwen3-tiny", {}, 132},   {"row_write", "llama-tiny", {}, 132},
      {"qkv_head_epilogue", "qwen2-tiny", {}, 132}, {"glu_pair", "qwen3-tiny", {}, 132},
      {"rope_parts", "qwen3-tiny", {}, 132},       {"gemv_parts", "llama-tiny", {}, 132},
      {"gemv_parts", "qwen3-tiny", {"glu_pair"}, 132}, {"rows_a_warp", "qwen3-tiny", {}, 1},
  };
  for (const Case& c : cases) {
    auto model = test::tiny_model(c.preset);
    PlanOptions options;
    options.held = c.held;
    Schedule s = plan_graph(model->graph, test::test_knobs("f32", "dequant", c.sms), options).schedule;
    INFO(c.rule << " on " << c.preset);
    CHECK(rule_count(s, c.rule).fired > 0);
    CHECK(rule_count(s, c.rule).status == "active");
  }
  // embed_norm declines with its reason on llama-style models.
  auto model = test::tiny_model("llama-tiny");
  Schedule s = plan_graph(model->graph, test::test_knobs("f32", "dequant"), {}).schedule;
  const RuleCount& e = rule_count(s, "embed_norm");
  CHECK(e.fired == 0);
  REQUIRE(e.declined.size() == 1);
  CHECK(e.declined.begin()->first ==
        "the gathered row inp_embd is also read by #11 add attn_res_l00; the fused gather keeps "
        "only the normed row");
  CHECK(rule_count(s, "conv_silu").status == "waiting for architecture qwen3next");
}

TEST_CASE("held rules show in the census and cost launches", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  Knobs knobs = test::test_knobs("f32", "dequant");
  Schedule on = plan_graph(model->graph, knobs, {}).schedule;
  PlanOptions all;
  all.held = rule_names();
  Schedule off = plan_graph(model->graph, knobs, all).schedule;
  CHECK(off.launches.size() > on.launches.size());
  for (const RuleCount& r : off.census.rules) {
    CHECK(r.status == "held");
    CHECK(r.matched == 0);
  }
  // Unfused, a head norm is a rope launch that rotates nothing.
  bool norm_only = false;
  for (const Launch& l : off.launches)
    if (const auto* r = std::get_if<RopeLaunch>(&l.params))
      norm_only = norm_only || (r->rope_dims == 0 && !r->parts[0].norm_weight.empty());
  CHECK(norm_only);
}

TEST_CASE("a node no kernel can take is refused naming the op, its kind, output and why", "[plan]") {
  auto model = test::tiny_model("llama-tiny", /*head_dim=*/16);
  CHECK_THROWS_WITH(plan_graph(model->graph, test::test_knobs("f32", "dequant"), {}),
                    Catch::StartsWith("no kernel for op #9 (attention -> attn_l00): kind attention, "
                                      "output attn_l00: the attention kernel takes head sizes that "
                                      "are multiples of 32 up to 256"));
  auto wide_heads = test::tiny_model("qwen3-tiny", /*head_dim=*/288);
  CHECK_THROWS_WITH(plan_graph(wide_heads->graph, test::test_knobs("f32", "dequant"), {}),
                    Catch::Contains("the rope kernel takes head sizes up to 256, got 288"));
  auto q4 = test::tiny_model("qwen3-tiny", 0, GgmlType::Q4_0);
  CHECK_THROWS_WITH(plan_graph(q4->graph, test::test_knobs("f32", "dequant"), {}),
                    Catch::Contains("GEMV takes f32, f16, bf16 and q8_0 weights, got q4_0"));
}

// A one-norm step: gather a row of `dim`, RMS-norm it (by a constant
// weight, or by the row itself), project to 8 logits, argmax.
Graph one_norm_step(int64_t dim, bool computed_weight) {
  constexpr int64_t kVocab = 8;
  GraphBuilder b;
  b.set_metadata("arch", std::string("test"));
  TensorId token = b.param("token", GgmlType::I32, {1});
  b.param("pos", GgmlType::I32, {1});
  TensorId row = b.apply(OpKind::embed_get_rows, "row", {dim},
                         {b.constant("table", GgmlType::F32, {kVocab, dim}), token});
  TensorId weight = computed_weight ? row : b.constant("norm_w", GgmlType::F32, {dim});
  TensorId normed = b.rms_norm("normed", row, weight, 1e-6);
  TensorId logits = b.apply(OpKind::matmul, "logits", {kVocab}, {normed, b.constant("wo", GgmlType::F32, {kVocab, dim})});
  b.output(logits);
  b.output(b.apply(OpKind::argmax, "next_token", {1}, {logits}, {}, GgmlType::I32));
  return b.finish();
}

// Plans a graph with its norm left standalone (embed_norm held).
PlanResult plan_unfused_norm(const Graph& g) {
  PlanOptions unfused;
  unfused.held = {"embed_norm"};
  return plan_graph(g, test::test_knobs("f32", "dequant"), unfused);
}

TEST_CASE("an RMS norm longer than one block holds in registers is refused", "[plan]") {
  CHECK_NOTHROW(plan_unfused_norm(one_norm_step(16384, false)));
  CHECK_THROWS_WITH(plan_unfused_norm(one_norm_step(16384 + 32, false)),
                    Catch::Contains("the RMS norm kernel takes vectors of up to 16384 elements") &&
                        Catch::Contains("got 16416"));
}

TEST_CASE("an RMS norm whose weight is computed in the step is refused", "[plan]") {
  // The norm kernels load their weight before waiting on the previous launch.
  CHECK_NOTHROW(plan_unfused_norm(one_norm_step(64, false)));
  CHECK_THROWS_WITH(plan_unfused_norm(one_norm_step(64, true)),
                    Catch::Contains("must be a model constant; row is computed in the step"));
}

TEST_CASE("the long-context step begins where a second cluster of splits is in use", "[plan][attention]") {
  // kernels/limits.h: the emitted program replays its long-context graph
  // (the clusters' merge as a launch of its own) from attention_clusters_from
  // on; below it, and for launches of at most 8 splits, one cluster holds
  // every used split.
  for (int n_split : {1, 5, 8, 16, 33, 40, 64}) {
    INFO("n_split " << n_split);
    const int from = kernels::attention_clusters_from(n_split);
    CHECK((from == 0) == (n_split <= kernels::kAttnClusterSplits));
    for (int len = 1; len <= 5000; ++len) {
      const int eff = kernels::attention_effective_splits(len, n_split);
      const int clusters = (eff + kernels::kAttnClusterSplits - 1) / kernels::kAttnClusterSplits;
      if ((clusters > 1) != (from > 0 && len >= from)) FAIL("len " << len << ": " << clusters << " clusters");
    }
  }
  CHECK(kernels::attention_clusters_from(64) == 129);  // 8 splits of 16 keys fill one cluster
  CHECK(kernels::attention_effective_splits(1, 64) == 1);
  CHECK(kernels::attention_effective_splits(17, 64) == 2);
  CHECK(kernels::attention_effective_splits(4097, 64) == 64);
}

TEST_CASE("attention heads a block and argmax blocks", "[plan][attention][argmax]") {
  // Heads a block serves: the largest divisor of the GQA ratio within 8 heads and 1024 elements.
  CHECK(attention_heads_per_block(2, 128) == 2);
  CHECK(attention_heads_per_block(8, 128) == 8);
  CHECK(attention_heads_per_block(8, 256) == 4);
  CHECK(attention_heads_per_block(6, 256) == 3);
  CHECK(attention_heads_per_block(7, 64) == 7);
  CHECK(attention_heads_per_block(16, 64) == 8);
  CHECK(attention_heads_per_block(11, 64) == 1);
  CHECK(attention_heads_per_block(1, 32) == 1);
  // Argmax blocks: one per SM at most, at least 1024 logits a block.
  CHECK(choose_argmax_blocks(151936, 132) == 132);
  CHECK(choose_argmax_blocks(32000, 132) == 32);
  CHECK(choose_argmax_blocks(1000, 132) == 1);
  CHECK(choose_argmax_blocks(1, 132) == 1);
  // Splits: 56 for the longest context, more where blocks x splits would not
  // cover the SMs twice, a multiple of the kernel's 8-split clusters above one.
  CHECK(choose_attention_splits(16, 2, 4096, 132) == 56);
  CHECK(choose_attention_splits(32, 4, 4096, 132) == 56);
  CHECK(choose_attention_splits(64, 8, 4096, 132) == 56);
  CHECK(choose_attention_splits(8, 2, 4096, 132) == 64);  // 4 blocks: 66 to cover, held to the kernel's 64
  CHECK(choose_attention_splits(16, 2, 256, 132) == 16);   // one split per 16 cache rows
  CHECK(choose_attention_splits(16, 2, 128, 132) == 8);
  CHECK(choose_attention_splits(16, 2, 64, 132) == 8);     // 4 by the rows, rounded up
  CHECK(choose_attention_splits(32, 4, 64, 132) == 8);
  CHECK(choose_attention_splits(16, 2, 16, 132) == 1);     // one split: no merge at all
  CHECK(choose_attention_splits(64, 1, 32768, 132) == 56);
  CHECK(choose_attention_splits(16, 2, 4352, 132) == 56);  // past 4k rows: 7 clusters
  CHECK(choose_attention_splits(2, 1, 32768, 132) == 64);   // 132 to cover, at most 64
  // The cluster merge's owners: equal shares of whole int8 blocks within a
  // head or of whole heads, at most 8.
  CHECK(kernels::attention_merge_owners(256, 128) == 8);  // 32 elements each
  CHECK(kernels::attention_merge_owners(128, 128) == 4);
  CHECK(kernels::attention_merge_owners(384, 128) == 6);  // 3 heads: 64 each
  CHECK(kernels::attention_merge_owners(96, 96) == 3);
  CHECK(kernels::attention_merge_owners(32, 32) == 1);
  // Shared memory: with the cluster merge a slot for each of 8 splits' share and m, l;
  // at 4 heads a block also the tensor-core loop's query fragments (2 parts,
  // 4 chunks of 32 elements, a 16-byte word a lane).
  CHECK(attention_smem_bytes(128, 2) == (2 * (4 * (128 + 2) + 2 * 64) + 8 * (32 + 2 * 2)) * 4 + 1);
  CHECK(attention_smem_bytes(128, 4) ==
        (4 * (4 * (128 + 2) + 2 * 64) + 8 * (64 + 2 * 4)) * 4 + 1 + 2 * 4 * 32 * 16);  // + the tensor-core queries
  CHECK(attention_smem_bytes(128, 8) == 8 * (4 * (128 + 2) + 2 * 64) * 4 + 1);  // no cluster merge at 8 heads
}

TEST_CASE("an 8B model plans in well under a second", "[plan]") {
  Graph g = test::decoder_graph(test::DecoderDims{});
  auto start = std::chrono::steady_clock::now();
  PlanResult r = plan_graph(std::move(g), test::test_knobs("f16", "int8"), {});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 1.0);
  // 32 layers: qkv, rope, kv_write, attention, quantize, wo (+ residual), norm, glu, quantize, down...
  CHECK(r.schedule.census.launches.at("attention") == 32);
  CHECK(r.schedule.census.launches.at("gemv") == 32 * 4 + 1);
  const auto& logits = std::get<GemvLaunch>(find_launch(r.schedule, "gemv_logits")->params);
  CHECK(logits.rows_per_warp == 1);  // int8: measured fastest at 1
  CHECK(logits.split_k == 1);        // tall
  Schedule deq = plan_graph(test::decoder_graph(test::DecoderDims{}), test::test_knobs("f16", "dequant"), {}).schedule;
  CHECK(std::get<GemvLaunch>(find_launch(deq, "gemv_logits")->params).rows_per_warp == 2);
  // 32/8 heads: a block serves the 4 query heads of a kv head, 8 blocks a
  // split, and 56 splits (a maximum: short contexts use fewer): 448 blocks,
  // about 3.4 an SM of 132.
  const auto& attn = std::get<AttentionLaunch>(find_launch(deq, "attention_attn_l00")->params);
  CHECK(attn.heads_per_block == 4);
  CHECK(attn.n_split == 56);
  // Argmax over the 8B vocabulary: one block per SM, with its workspaces
  // (the register GEMV runs the logits, so gemv_argmax declines).
  CHECK(rule_count(deq, "gemv_argmax").fired == 0);
  const auto& am = std::get<ArgmaxLaunch>(deq.launches.back().params);
  CHECK(am.key.empty());
  CHECK(std::get<GemvLaunch>(find_launch(deq, "gemv_logits")->params).argmax_key.empty());
  CHECK(am.n_blocks == std::min<int64_t>(132, (am.n_vocab + 1023) / 1024));
  CHECK(am.n_blocks > 1);
  CHECK(deq.buffer(am.block_value).elements == am.n_blocks);
  CHECK(deq.buffer(am.block_index).elements == am.n_blocks);
  CHECK(deq.buffer(am.done).elements == 1);
  CHECK(deq.buffer(am.done).role == BufferRole::workspace);
  CHECK(r.schedule.census.weight_bytes_per_step > 7000000000ull);
}

TEST_CASE("staged_weights declines at 1.7B shapes where load_ahead takes the output projection", "[plan]") {
  const test::DecoderDims d = test::decoder_dims(2048, 16, 6144, 2, 1024);  // Qwen3-1.7B's widths, two layers
  const Knobs knobs = test::test_knobs("f16", "two-pass-int8");
  const Schedule s = plan_graph(test::decoder_graph(d), knobs, {}).schedule;
  for (const Launch& l : s.launches)
    if (const auto* g = std::get_if<GemvLaunch>(&l.params)) CHECK_FALSE(g->staged);
  CHECK(rule_count(s, "staged_weights").fired == 0);
  const auto& out = std::get<GemvLaunch>(find_launch(s, "gemv_attn_res_l00")->params);
  CHECK(out.load_ahead);
  CHECK(out.split_k == 2);
  CHECK(out.rows_per_warp == 1);
}

TEST_CASE("staged_weights stages the output projection after the attention at 1.7B shapes, load_ahead held", "[plan]") {
  const test::DecoderDims d = test::decoder_dims(2048, 16, 6144, 2, 1024);  // Qwen3-1.7B's widths, two layers
  const Knobs knobs = test::test_knobs("f16", "two-pass-int8");
  PlanOptions no_ahead;
  no_ahead.held = {"load_ahead"};
  Schedule s = plan_graph(test::decoder_graph(d), knobs, no_ahead).schedule;
  int staged = 0;
  for (const Launch& l : s.launches) {
    const auto* g = std::get_if<GemvLaunch>(&l.params);
    if (g == nullptr || !g->staged) continue;
    ++staged;
    CHECK(l.name.rfind("gemv_attn_res_l", 0) == 0);  // only the GEMVs reading an attention output
    CHECK(g->split_k == 2);
    CHECK(g->rows_per_warp == 2);
    CHECK(std::find(l.rules.begin(), l.rules.end(), "staged_weights") != l.rules.end());
  }
  CHECK(staged == 2);
  CHECK(rule_count(s, "staged_weights").fired == 2);
  // Held: the register GEMV everywhere, with its own split.
  PlanOptions held;
  held.held = {"staged_weights", "load_ahead"};
  Schedule h = plan_graph(test::decoder_graph(d), knobs, held).schedule;
  for (const Launch& l : h.launches)
    if (const auto* g = std::get_if<GemvLaunch>(&l.params)) CHECK_FALSE(g->staged);
  const auto& out = std::get<GemvLaunch>(find_launch(h, "gemv_attn_res_l00")->params);
  CHECK(out.rows_per_warp == 1);
  CHECK(out.split_k == 2);
  CHECK_FALSE(out.load_ahead);
  // The verifier refuses a staged GEMV the staged kernel cannot take.
  auto& bad = std::get<GemvLaunch>(s.launches[static_cast<size_t>(
      std::find_if(s.launches.begin(), s.launches.end(), [](const Launch& l) {
        const auto* g = std::get_if<GemvLaunch>(&l.params);
        return g != nullptr && g->staged;
      }) - s.launches.begin())].params);
  bad.split_k = 8;
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("staged GEMV outside what the staged kernel takes"));
}

// One layer at Qwen3-0.6B's widths and vocabulary under two-pass int8, with
// `held` rules held.
Schedule plan_06b_widths(const std::vector<std::string>& held = {}) {
  PlanOptions options;
  options.held = held;
  return plan_graph(test::decoder_graph(test::decoder_dims(1024, 16, 3072, 1, 151936)),
                    test::test_knobs("f16", "two-pass-int8"), options)
      .schedule;
}

TEST_CASE("ffn_fused at Qwen3's widths: one launch a layer, its shape from the chip, the residual in place",
          "[plan]") {
  struct Width {
    int64_t hidden, n_head, ffn;
    int chunks;
    bool preload_down;
  };
  // The fewest waves of one thread block an SM (132 SMs), the fewest blocks
  // of 32 a thread block among equals: 0.6B one (96 thread blocks), 1.7B two
  // (96), 8B three (128, where two gives 192); 8B's 1,024 row groups are two
  // a thread, so its down group is not preloaded.
  for (const Width& w : {Width{1024, 16, 3072, 1, true}, Width{2048, 16, 6144, 2, true},
                         Width{4096, 32, 12288, 3, false}}) {
    INFO(w.hidden);
    const Schedule s = plan_graph(test::decoder_graph(test::decoder_dims(w.hidden, w.n_head, w.ffn, 1, 151936)),
                                  test::test_knobs("f16", "two-pass-int8"), {})
                           .schedule;
    CHECK(rule_count(s, "ffn_fused").fired == 1);
    CHECK(s.census.launches.count("swiglu") == 0);
    const Launch* l = find_launch(s, "ffn_l_out_l00");
    REQUIRE(l != nullptr);
    const auto& f = std::get<FfnLaunch>(l->params);
    CHECK(f.hidden == w.hidden);
    CHECK(f.ffn == w.ffn);
    CHECK(f.chunks == w.chunks);
    CHECK(f.warps == 16);
    CHECK(f.preload_down == w.preload_down);
    CHECK(s.buffer(f.down).layout == "q8_0_cols");
    CHECK(s.buffer(f.gate).layout.empty());
    CHECK(s.buffer(f.y).view_of == f.residual);
    CHECK(s.buffer(f.x_q8).form == BufferForm::q8x2);
  }
  // The verifier refuses an ffn launch that does not add into its residual's storage.
  Schedule s = plan_06b_widths();
  for (Launch& l : s.launches)
    if (auto* f = std::get_if<FfnLaunch>(&l.params)) f->y = "inp_embd";
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("which is not the storage of its residual"));
  // ... and a block shape the kernel cannot take (a warp count not dividing the row pairs).
  Schedule odd = plan_06b_widths();
  for (Launch& l : odd.launches)
    if (auto* f = std::get_if<FfnLaunch>(&l.params)) f->warps = 12;
  CHECK_THROWS_WITH(verify_schedule(odd), Catch::Contains("ffn block shape outside the kernel's"));
  // ... and forms outside the kernel's: a third trip ahead, clusters of 4, more warps an SM than it holds.
  for (auto [min_blocks, ahead, split] : {std::tuple{1, 3, 1}, std::tuple{1, 1, 4}, std::tuple{5, 1, 1}}) {
    Schedule form = plan_06b_widths();
    for (Launch& l : form.launches) {
      if (auto* f = std::get_if<FfnLaunch>(&l.params)) {
        f->min_blocks = min_blocks;
        f->ahead = ahead;
        f->split = split;
      }
    }
    CHECK_THROWS_WITH(verify_schedule(form), Catch::Contains("ffn form outside the kernel's"));
  }
  // Clusters of two: taken on sm_90, refused below it.
  Schedule split = plan_06b_widths();
  for (Launch& l : split.launches)
    if (auto* f = std::get_if<FfnLaunch>(&l.params)) f->split = 2;
  CHECK_NOTHROW(verify_schedule(split));
  CHECK(print_launch(*find_launch(split, "ffn_l_out_l00")).find("ffn=3072 chunks=1 warps=16 preload_down split=2") !=
        std::string::npos);
  split.knobs.chip.arch = "sm_89";
  CHECK_THROWS_WITH(verify_schedule(split), Catch::Contains("needs thread-block clusters (sm_90), not sm_89"));
  CHECK(choose_ffn_shape(1024, 3072, 132).chunks == 1);
  CHECK(choose_ffn_shape(1024, 3072, 60).chunks == 2);     // 48 thread blocks: one wave on 60 SMs
  CHECK(choose_ffn_shape(2048, 6144, 132).chunks == 2);    // 96 blocks; 3 (64) is one wave too: fewer chunks
  CHECK(choose_ffn_shape(4096, 12288, 132).chunks == 3);   // 128 blocks, where 2 gives 192 (two waves)
  CHECK(choose_ffn_shape(4096, 14336, 132).chunks == 2);   // 3 does not divide: 224 blocks, two waves
  CHECK(choose_ffn_shape(64, 128, 1).chunks == 2);         // one SM: the fewest waves (2 of 4, 2, -)
  CHECK(choose_ffn_shape(2048, 6144, 132).preload_down);
  CHECK_FALSE(choose_ffn_shape(2052, 6144, 132).preload_down);
}

TEST_CASE("load_ahead runs Qwen3-0.6B's Q/K/V and down GEMVs, no other", "[plan]") {
  // With ffn_fused the down GEMV is part of the ffn launch: held here.
  Schedule s = plan_06b_widths({"ffn_fused"});
  for (const Launch& l : s.launches) {
    const auto* g = std::get_if<GemvLaunch>(&l.params);
    if (g == nullptr) continue;
    const bool ahead = std::find(l.rules.begin(), l.rules.end(), "load_ahead") != l.rules.end();
    INFO(l.name);
    CHECK(ahead == (l.name.rfind("gemv_q", 0) == 0 || l.name.rfind("gemv_l_out", 0) == 0));
    CHECK(g->load_ahead == ahead);
  }
  CHECK(rule_count(s, "load_ahead").fired == 2);
  CHECK(rule_count(plan_06b_widths(), "load_ahead").fired == 1);  // the Q/K/V GEMV only
  for (const Launch& l : plan_06b_widths({"load_ahead", "ffn_fused"}).launches)
    if (const auto* g = std::get_if<GemvLaunch>(&l.params)) CHECK_FALSE(g->load_ahead);
  // The verifier refuses the ahead form outside the register kernel.
  for (Launch& l : s.launches) {
    auto* g = std::get_if<GemvLaunch>(&l.params);
    if (g == nullptr || !g->load_ahead) continue;
    g->row_loop_chunks = 2;
    CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("load-ahead GEMV outside the register kernel"));
    break;
  }
}

TEST_CASE("the residual GEMVs load their residual before the wait unless the launch before writes it", "[plan]") {
  Schedule s = plan_06b_widths({"ffn_fused"});  // the down GEMV a launch of its own
  // gemv_norm_epilogue takes both residual adds (before add_norm in the registry).
  CHECK(rule_count(s, "gemv_norm_epilogue").fired == 2);
  CHECK(rule_count(s, "add_norm").fired == 0);
  int early = 0;
  for (const Launch& l : s.launches) {
    const auto* g = std::get_if<GemvLaunch>(&l.params);
    if (g == nullptr) continue;
    const bool residual = !g->parts.front().residual.empty();
    INFO(l.name);
    CHECK(g->residual_early == residual);
    early += g->residual_early ? 1 : 0;
  }
  CHECK(early == 2);  // the output and down projections
  // The output projection adds the embedding: the embed launch writes it.
  const auto at = [&](const std::string& name) {
    return static_cast<size_t>(std::find_if(s.launches.begin(), s.launches.end(),
                                            [&](const Launch& l) { return l.name == name; }) -
                               s.launches.begin());
  };
  const size_t out = at("gemv_attn_res_l00"), embed = at("embed_inp_embd");
  REQUIRE(std::get<GemvLaunch>(s.launches[out].params).parts.front().residual == "inp_embd");
  CHECK(early_read_clash(s, s.launches[embed], s.launches[out]) ==
        std::optional<std::string>("embed_inp_embd writes its residual inp_embd"));
  CHECK_FALSE(early_read_clash(s, s.launches[out - 1], s.launches[out]));
  // Moved right after the embedding, it may start while the embedding runs:
  // mark_early_residuals keeps its residual after the wait, and the verifier
  // refuses the early form there.
  Schedule moved = s;
  Launch gemv = moved.launches[out];
  moved.launches.erase(moved.launches.begin() + static_cast<std::ptrdiff_t>(out));
  moved.launches.insert(moved.launches.begin() + static_cast<std::ptrdiff_t>(embed + 1), gemv);
  CHECK_THROWS_WITH(verify_schedule(moved), Catch::Contains("may start while embed_inp_embd writes its residual"));
  mark_early_residuals(moved);
  CHECK_FALSE(std::get<GemvLaunch>(moved.launches[embed + 1].params).residual_early);
  // Outside the register kernel the early form is refused.
  auto& row_loop = std::get<GemvLaunch>(s.launches[out].params);
  row_loop.row_loop_chunks = 4;
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("early residual on a GEMV outside the register kernel"));
}

// The launches early_trigger fired for, by name.
std::vector<std::string> early_launches(const Schedule& s) {
  std::vector<std::string> names;
  for (const Launch& l : s.launches) {
    const bool fired = std::find(l.rules.begin(), l.rules.end(), "early_trigger") != l.rules.end();
    CHECK(l.early_trigger == fired);
    if (fired) names.push_back(l.name);
  }
  return names;
}

TEST_CASE("early_trigger: at Qwen3-0.6B's widths every small launch after a GEMV, at 1.7B's the rope and the norm after the output projection, at 8B's the rope and the quantize", "[plan]") {
  // The chain ffn_fused replaces is held: its quantize is what this measures.
  const Schedule s06 = plan_06b_widths({"ffn_fused"});
  const std::vector<std::string> expected06 = {"rope_q_l00", "rms_norm_ffn_norm_l00", "swiglu_ffn_act_l00",
                                               "rms_norm_result_norm"};
  CHECK(early_launches(s06) == expected06);  // the first norm follows the embedding
  CHECK(rule_count(s06, "early_trigger").fired == 4);
  CHECK(early_launches(plan_06b_widths({"early_trigger", "ffn_fused"})).empty());
  CHECK(early_launches(plan_06b_widths()) ==
        (std::vector<std::string>{"rope_q_l00", "rms_norm_ffn_norm_l00", "rms_norm_result_norm"}));

  PlanOptions options;
  options.held = {"ffn_fused"};
  const Schedule s17 = plan_graph(test::decoder_graph(test::decoder_dims(2048, 16, 6144, 1, 151936)),
                                  test::test_knobs("f16", "two-pass-int8"), options)
                           .schedule;
  // The output projection takes the register GEMV (load_ahead, not staged),
  // so the norm after it triggers early too.
  CHECK(early_launches(s17) == (std::vector<std::string>{"rope_q_l00", "rms_norm_ffn_norm_l00"}));
  // Both Q/K/V GEMVs are short enough for the rope to trigger early at
  // every position (rules/early_trigger.h); 8B's is not.
  for (const Schedule* s : {&s06, &s17})
    for (const Launch& l : s->launches)
      if (const auto* r = std::get_if<RopeLaunch>(&l.params)) CHECK(r->early_trigger_rows == 0);
  const Schedule s8 = plan_graph(test::decoder_graph(test::decoder_dims(4096, 32, 12288, 1, 151936)),
                                 test::test_knobs("f16", "two-pass-int8"), options)
                          .schedule;
  // The quantize after 8B's gate/up GEMV of 2.9 waves fires; its norms do not.
  CHECK(early_launches(s8) == (std::vector<std::string>{"rope_q_l00", "swiglu_ffn_act_l00"}));
  for (const Launch& l : s8.launches)
    if (const auto* r = std::get_if<RopeLaunch>(&l.params)) CHECK(r->early_trigger_rows == kRopeShortTriggerRows);
}

TEST_CASE("verify_schedule checks what a launch reads before its wait against every launch still running", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  const Schedule s = plan_graph(model->graph, test::test_knobs("f16", "int8"), {}).schedule;
  verify_schedule(s);
  const auto at = static_cast<size_t>(std::find_if(s.launches.begin(), s.launches.end(), [](const Launch& l) {
                                        return std::holds_alternative<AttentionLaunch>(l.params);
                                      }) - s.launches.begin());
  REQUIRE(at < s.launches.size());
  REQUIRE(std::holds_alternative<RopeLaunch>(s.launches[at - 1].params));
  REQUIRE(s.launches[at - 1].early_trigger);
  const auto& attn = std::get<AttentionLaunch>(s.launches[at].params);
  // A second rope before it writes its cache rows at another row: with the
  // rope just before the attention triggering early, the second one may
  // still run when the attention reads the earlier rows.
  REQUIRE(attn.pos != s.token_param());  // so the second rope's row is another row
  Launch again = s.launches[at - 1];
  again.name = "rope_again";
  again.early_trigger = false;
  std::get<RopeLaunch>(again.params).pos = s.token_param();
  Schedule two_back = s;
  two_back.launches.insert(two_back.launches.begin() + static_cast<std::ptrdiff_t>(at - 1), again);
  CHECK_THROWS_WITH(verify_schedule(two_back), Catch::Contains("may start while rope_again writes its cache"));
  two_back.launches[at].early_trigger = false;  // the trigger after the wait: only the rope just before runs
  verify_schedule(two_back);
  // The kernels without an early form refuse it.
  Schedule gemv_early = s;
  for (Launch& l : gemv_early.launches)
    if (std::holds_alternative<GemvLaunch>(l.params)) {
      l.early_trigger = true;
      break;
    }
  CHECK_THROWS_WITH(verify_schedule(gemv_early), Catch::Contains("early trigger on a kernel without one"));
}

TEST_CASE("row_loop runs Qwen3-0.6B's logits GEMV and declines 8B's", "[plan]") {
  const Knobs knobs = test::test_knobs("f16", "two-pass-int8");
  Schedule s = plan_06b_widths();
  for (const Launch& l : s.launches) {
    const auto* g = std::get_if<GemvLaunch>(&l.params);
    if (g == nullptr) continue;
    const bool looped = std::find(l.rules.begin(), l.rules.end(), "row_loop") != l.rules.end();
    CHECK(looped == (l.name == "gemv_logits"));
    CHECK(g->row_loop_chunks == (looped ? 2 : 0));
  }
  CHECK(rule_count(s, "row_loop").fired == 1);
  // 8B's logits: k 4096 is 8 chunks a lane.
  test::DecoderDims large;
  large.n_layer = 1;
  Schedule l = plan_graph(test::decoder_graph(large), knobs, {}).schedule;
  CHECK(std::get<GemvLaunch>(find_launch(l, "gemv_logits")->params).row_loop_chunks == 0);
  CHECK(rule_count(l, "row_loop").fired == 0);
  // Held: the one-row-a-warp grid.
  Schedule h = plan_06b_widths({"row_loop"});
  CHECK(std::get<GemvLaunch>(find_launch(h, "gemv_logits")->params).row_loop_chunks == 0);
  // The verifier refuses a row loop the kernel cannot take.
  auto& bad = std::get<GemvLaunch>(s.launches[static_cast<size_t>(
      std::find_if(s.launches.begin(), s.launches.end(), [](const Launch& x) { return x.name == "gemv_logits"; }) -
      s.launches.begin())].params);
  bad.row_loop_chunks = 1;  // k 1024 is 2 chunks a lane
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("row-loop GEMV outside what the row loop takes"));
  bad.row_loop_chunks = 2;
  bad.split_k = 2;
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("row-loop GEMV outside what the row loop takes"));
}

TEST_CASE("gemv_argmax: the logits GEMV folds the winner, the argmax finishes; the verifier checks the pairing", "[plan]") {
  const test::DecoderDims small = test::decoder_dims(1024, 16, 3072, 1, 151936);  // 0.6B's widths and vocabulary
  const Knobs knobs = test::test_knobs("f16", "two-pass-int8");
  Schedule s = plan_graph(test::decoder_graph(small), knobs, {}).schedule;
  CHECK(rule_count(s, "gemv_argmax").fired == 1);
  CHECK(rule_count(s, "gemv_argmax").declined.empty());
  const Launch* logits = find_launch(s, "gemv_logits");
  const auto& g = std::get<GemvLaunch>(logits->params);
  const auto& am = std::get<ArgmaxLaunch>(s.launches.back().params);
  CHECK(g.row_loop_chunks == 2);  // the row loop's Argmax form
  CHECK(g.argmax_key == am.key);
  CHECK(logits->rules == std::vector<std::string>{"row_loop", "gemv_argmax"});
  CHECK(s.launches.back().rules == std::vector<std::string>{"gemv_argmax"});
  CHECK(s.launches.back().reads() == std::vector<std::string>{am.key, am.token, am.pos});
  CHECK(s.find_buffer(am.out + ".block_value") == nullptr);
  CHECK(s.buffer(am.key).elements == 2);
  CHECK(s.buffer(am.key).role == BufferRole::workspace);
  // Held, the full argmax over the logits.
  PlanOptions held;
  held.held = {"gemv_argmax"};
  const Schedule h = plan_graph(test::decoder_graph(small), knobs, held).schedule;
  CHECK(std::get<ArgmaxLaunch>(h.launches.back().params).key.empty());
  CHECK(std::get<ArgmaxLaunch>(h.launches.back().params).n_blocks > 1);
  CHECK(std::get<GemvLaunch>(find_launch(h, "gemv_logits")->params).argmax_key.empty());
  // 8B's logits GEMV is the register kernel's (8 chunks a lane): the rule declines.
  test::DecoderDims large;
  large.n_layer = 1;
  const Schedule l = plan_graph(test::decoder_graph(large), knobs, {}).schedule;
  CHECK(rule_count(l, "gemv_argmax").fired == 0);
  CHECK(rule_count(l, "gemv_argmax").declined.size() == 1);
  CHECK(std::get<ArgmaxLaunch>(l.launches.back().params).key.empty());
  // The verifier refuses a key no GEMV folds into, a GEMV of other logits,
  // and a fold the kernels cannot take.
  auto& gemv = std::get<GemvLaunch>(s.launches[static_cast<size_t>(
      std::find_if(s.launches.begin(), s.launches.end(), [](const Launch& x) { return x.name == "gemv_logits"; }) -
      s.launches.begin())].params);
  gemv.argmax_key.clear();
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("that no GEMV before it folds into"));
  gemv.argmax_key = am.key;
  gemv.parts.front().rows -= 1;
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("does not write its logits"));
  gemv.parts.front().rows += 1;
  gemv.row_loop_chunks = 0;
  gemv.staged = true;
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("argmax-folding GEMV outside what its kernels take"));
  gemv.staged = false;
  verify_schedule(s);
  Schedule rewritten = s;  // a launch between the fold and its finish that writes the logits again
  Launch again = rewritten.launches[rewritten.launches.size() - 2];  // the logits GEMV, without the fold
  REQUIRE(again.name == "gemv_logits");
  std::get<GemvLaunch>(again.params).argmax_key.clear();
  rewritten.launches.insert(rewritten.launches.end() - 1, again);
  CHECK_THROWS_WITH(verify_schedule(rewritten), Catch::Contains("after the GEMV that folds their argmax"));
  auto& finish = std::get<ArgmaxLaunch>(s.launches.back().params);
  finish.key.clear();
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("no argmax finishes the key"));
}

TEST_CASE("staged_weights declines every GEMV at Qwen3-0.6B's and 8B's widths", "[plan]") {
  // 0.6B: the output projection's split already covers every chunk
  const test::DecoderDims small = test::decoder_dims(1024, 16, 3072, 2, 1024);
  test::DecoderDims large;  // 8B: 17 MiB output projections
  large.n_layer = 2;
  large.n_vocab = 1024;
  const Knobs knobs = test::test_knobs("f16", "two-pass-int8");
  for (const test::DecoderDims& d : {small, large}) {
    Schedule s = plan_graph(test::decoder_graph(d), knobs, {}).schedule;
    for (const Launch& l : s.launches)
      if (const auto* g = std::get_if<GemvLaunch>(&l.params)) CHECK_FALSE(g->staged);
    const RuleCount& count = rule_count(s, "staged_weights");
    CHECK(count.fired == 0);
    const std::string reason = d.n_embd == 1024 ? "the register GEMV already loads all its weights before the wait"
                                                : "MiB of weights, more than the 8.0 MiB";
    bool output_projections_declined = false;
    for (const auto& [why, sites] : count.declined)
      if (why.find(reason) != std::string::npos) output_projections_declined = sites == 2;
    CHECK(output_projections_declined);
  }
}

}  // namespace
}  // namespace lanec

#include "lib/plan/verify_schedule.h"

namespace lanec {
namespace {

TEST_CASE("the schedule verifier catches a launch moved before its input", "[plan]") {
  auto model = test::tiny_model("llama-tiny");
  Schedule s = plan_graph(model->graph, test::test_knobs("f32", "dequant"), {}).schedule;
  verify_schedule(s);
  std::swap(s.launches[1], s.launches[2]);  // the QKV GEMV before the norm making its input
  CHECK_THROWS_WITH(verify_schedule(s), Catch::Contains("reads attn_norm_l00 before any launch writes it"));
}

// Index of the schedule's first attention launch.
size_t first_attention(const Schedule& s) {
  for (size_t i = 1; i < s.launches.size(); ++i)
    if (std::holds_alternative<AttentionLaunch>(s.launches[i].params)) return i;
  FAIL("no attention launch");
  return 0;
}

TEST_CASE("the launch before attention writes its caches only at the step's row and never the position", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  for (const std::vector<std::string>& held : {std::vector<std::string>{}, {"row_write"}}) {
    PlanOptions options;
    options.held = held;
    const Schedule s = plan_graph(model->graph, test::test_knobs("f16", "int8"), options).schedule;
    verify_schedule(s);  // rope (or the cache write, row_write held) writes row pos just before
    const size_t at = first_attention(s);
    const auto& attn = std::get<AttentionLaunch>(s.launches[at].params);
    CAPTURE(held, s.launches[at - 1].name);

    Schedule other_row = s;  // the cache row written at another position
    Launch& prev = other_row.launches[at - 1];
    if (auto* r = std::get_if<RopeLaunch>(&prev.params)) r->pos = other_row.token_param();
    if (auto* w = std::get_if<KvWriteLaunch>(&prev.params)) w->pos = other_row.token_param();
    CHECK_THROWS_WITH(verify_schedule(other_row), Catch::Contains("other than at row " + attn.pos));

    Schedule position = s;  // a launch advancing the position just before attention
    Launch advance = *std::find_if(s.launches.begin(), s.launches.end(), [](const Launch& l) {
      return std::holds_alternative<ArgmaxLaunch>(l.params);
    });
    std::get<ArgmaxLaunch>(advance.params).logits = attn.q;  // an input written by then
    position.launches.insert(position.launches.begin() + static_cast<std::ptrdiff_t>(at), advance);
    CHECK_THROWS_WITH(verify_schedule(position), Catch::Contains("writes its position " + attn.pos));
  }
}

TEST_CASE("the launch before a rope never writes its position", "[plan]") {
  auto model = test::tiny_model("qwen3-tiny");
  const Schedule s = plan_graph(model->graph, test::test_knobs("f16", "int8"), {}).schedule;
  verify_schedule(s);
  const auto rope = std::find_if(s.launches.begin(), s.launches.end(),
                                 [](const Launch& l) { return std::holds_alternative<RopeLaunch>(l.params); });
  REQUIRE(rope != s.launches.end());
  const auto& r = std::get<RopeLaunch>(rope->params);
  Launch advance = *std::find_if(s.launches.begin(), s.launches.end(), [](const Launch& l) {
    return std::holds_alternative<ArgmaxLaunch>(l.params);
  });
  std::get<ArgmaxLaunch>(advance.params).logits = r.parts.front().x;  // an input written by then
  Schedule position = s;
  position.launches.insert(position.launches.begin() + (rope - s.launches.begin()), advance);
  CHECK_THROWS_WITH(verify_schedule(position), Catch::Contains("writes its position " + r.pos));
}

}  // namespace
}  // namespace lanec
