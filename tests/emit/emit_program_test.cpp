// The emitter's contract: golden programs for the tiny samples under two knob
// files, byte for byte; identical text across runs; clear errors for launches
// the kernel library cannot take; the model identity the program checks.
// Regenerate the golden files after an intended change with
//   LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests "[emit]"
// and read the diff. The nvcc compile check of every golden program is the
// hidden test "[emit-nvcc]" (tests/emit/nvcc_compile_test.cpp).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "emit/emit_program.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/knobs/knobs.h"
#include "lib/plan/planner.h"
#include "lib/synth/synth.h"
#include "tests/emit/emit_samples.h"
#include "tests/support/golden.h"

using namespace lanec;

using test::first_difference;

TEST_CASE("emitted programs match the golden files", "[emit]") {
  const bool update = std::getenv("LANEC_UPDATE_GOLDEN") != nullptr;
  for (const std::string& sample : emit_test::samples()) {
    for (const std::string& knobs : emit_test::knob_files()) {
      const std::string path = emit_test::golden_path(sample, knobs);
      const std::string text = emit_test::emit_sample(sample, knobs);
      if (update) {
        std::ofstream(path, std::ios::binary) << text;
        continue;
      }
      INFO(path);
      const std::string golden = test::read_text(path);
      REQUIRE_FALSE(golden.empty());
      if (golden != text) FAIL(first_difference(golden, text));
    }
  }
}

TEST_CASE("emitted text is identical across runs", "[emit]") {
  const std::string a = emit_test::emit_sample("qwen3-tiny", "h200");
  const std::string b = emit_test::emit_sample("qwen3-tiny", "h200");
  CHECK(a == b);
  // No absolute paths: the knob file appears by its name only.
  CHECK(a.find(LANEC_SOURCE_DIR) == std::string::npos);
  CHECK(a.find("// knob file:   h200.yaml") != std::string::npos);
}

TEST_CASE("emitted program names every launch, its ops and its rules", "[emit]") {
  const std::string text = emit_test::emit_sample("qwen3-tiny", "h200");
  const emit_test::Planned planned = emit_test::plan_sample("qwen3-tiny", "h200");
  for (const Launch& l : planned.result.schedule.launches) {
    INFO(l.name);
    CHECK(text.find("{  // " + l.name + ": ") != std::string::npos);
  }
  CHECK(text.find("[head_norm_rope, row_write, rope_parts") != std::string::npos);
  CHECK(text.find("launch_rope<RopeMode::neox, CachePrecision::f16") != std::string::npos);
  CHECK(text.find("launch_kv_write") == std::string::npos);
  CHECK(text.find("launch_gemv<WeightFormat::q8_0_split, Activation::int8x2, 1, false>") != std::string::npos);
  CHECK(text.find("launch_quantize_q8<true") != std::string::npos);  // the SwiGLU, quantized for the down GEMV
  CHECK(text.find("launch_attention<32, CachePrecision::f16, ") != std::string::npos);
  CHECK(text.find("{\"blk.1.ffn_down.weight\", 8, 2, {128, 64}, 8704u,") != std::string::npos);
  CHECK(text.find("{\"qwen3.rope.freq_base\", \"1e+06\"}") != std::string::npos);
}

TEST_CASE("held rules and knobs show in the header and change the launches", "[emit]") {
  emit_test::Planned planned = emit_test::plan_sample("llama-tiny", "rtx4090", {"glu_pair"});
  EmitOptions options;
  options.knob_file = "/somewhere/rtx4090.yaml";
  const std::string text = emit_program(planned.result.schedule, planned.result.graph, planned.identity, options);
  CHECK(text.find("// held rules:  glu_pair\n") != std::string::npos);
  CHECK(text.find("// knob file:   rtx4090.yaml\n") != std::string::npos);
  CHECK(text.find("-arch=sm_89") != std::string::npos);
  // The SwiGLU, no longer in the GEMV, is the launch that quantizes it for the down GEMV.
  CHECK(text.find("launch_quantize_q8<true") != std::string::npos);
  CHECK(text.find("p.up = b.ffn_up_l00;") != std::string::npos);
  CHECK(text.find("launch_quantize_q8(p") == std::string::npos);
  CHECK(text.find("launch_elementwise<ElementwiseOp::swiglu>") == std::string::npos);
  CHECK(text.find("/somewhere") == std::string::npos);
}

TEST_CASE("a per-head norm without RoPE (head_norm_rope held) is a rope launch of 0 dims", "[emit]") {
  emit_test::Planned qwen3 = emit_test::plan_sample("qwen3-tiny", "h200", {"head_norm_rope"});
  const std::string text = emit_program(qwen3.result.schedule, qwen3.result.graph, qwen3.identity, {});
  CHECK(text.find("p.rope_dims = 0;") != std::string::npos);
}

TEST_CASE("launches without a kernel are refused with the launch's name", "[emit]") {
  emit_test::Planned planned = emit_test::plan_sample("llama-tiny", "h200");
  Schedule& s = planned.result.schedule;
  SECTION("a GEMV over Q4_K weights") {
    for (Launch& l : s.launches)
      if (auto* g = std::get_if<GemvLaunch>(&l.params)) {
        g->format = GgmlType::Q4_K;
        g->numerics = GemvNumerics::f32;
        break;
      }
    CHECK_THROWS_WITH(emit_program(s, planned.result.graph, planned.identity, {}),
                      Catch::Contains("no GEMV kernel reads q4_K") || Catch::Contains("no GEMV kernel reads q4_k"));
  }
  SECTION("a head size the attention kernel does not take") {
    for (Launch& l : s.launches)
      if (auto* a = std::get_if<AttentionLaunch>(&l.params)) {
        a->head_dim = 48;
        break;
      }
    CHECK_THROWS_WITH(emit_program(s, planned.result.graph, planned.identity, {}), Catch::Contains("head_dim 48"));
  }
}

TEST_CASE("with row_write held, K and V are written by launches of their own", "[emit]") {
  emit_test::Planned planned = emit_test::plan_sample("qwen3-tiny", "h200", {"row_write"});
  const std::string text = emit_program(planned.result.schedule, planned.result.graph, planned.identity, {});
  CHECK(text.find("// K only: passed as both K and V") != std::string::npos);
  CHECK(text.find("// V only: passed as both K and V") != std::string::npos);
  CHECK(text.find("p.k_cache = b.cache_v_l01;\n    p.v_cache = b.cache_v_l01;") != std::string::npos);
}

TEST_CASE("two-pass-int8 programs (the samples) read and write both int8 words", "[emit]") {
  const std::string code = emit_test::emit_sample("qwen3-tiny", "h200");
  // GEMVs over q8_0 take the two-word path and its low words.
  CHECK(code.find("Activation::int8x2") != std::string::npos);
  CHECK(code.find("Activation::int8,") == std::string::npos);
  CHECK(code.find("p.x_lo = b.attn_norm_l00_q8.lo;") != std::string::npos);
  // The norm, the attention and the SwiGLU's quantize launch write the low words.
  CHECK(code.find("p.out_lo = b.attn_norm_l00_q8.lo;") != std::string::npos);
  CHECK(code.find("launch_rms_norm<false, true>") != std::string::npos);
  CHECK(code.find("p.out_lo = b.attn_l00_q8.lo;") != std::string::npos);
  CHECK(code.find("p.out_lo = b.ffn_act_l00_q8.lo;") != std::string::npos);
  CHECK(code.find("launch_quantize_q8") != std::string::npos);
  // The form's three planes: n high, n low, n/32 scales.
  CHECK(code.find("int8 high + int8 low + f32 scale per 32") != std::string::npos);
}

TEST_CASE("one-word int8 programs read and write no low words", "[emit]") {
  const std::string code = emit_test::emit_one_word_sample("qwen3-tiny");
  CHECK(code.find("Activation::int8,") != std::string::npos);
  CHECK(code.find("Activation::int8x2") == std::string::npos);
  CHECK(code.find("_lo = ") == std::string::npos);
  CHECK(code.find("launch_rms_norm<false, true>") != std::string::npos);
  CHECK(code.find("launch_quantize_q8") != std::string::npos);  // the SwiGLU output's
}

// Occurrences of `needle` in `text`.
size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

TEST_CASE("a tall logits GEMV launches the row loop; held, the register GEMV", "[emit]") {
  const std::string looped = emit_test::emit_row_loop_sample();
  CHECK(count_of(looped, "launch_gemv_row_loop<WeightFormat::q8_0_split, Activation::int8x2, 1, true>") == 1);
  // Two layers' Q/K/V and output GEMVs; on one SM ffn_fused takes their FFN blocks.
  CHECK(count_of(looped, "launch_gemv<") == 4);
  CHECK(count_of(looped, "launch_ffn<") == 2);
  CHECK(looped.find("row_loop") != std::string::npos);
  const std::string held = emit_test::emit_row_loop_sample({"row_loop"});
  CHECK(count_of(held, "launch_gemv_row_loop") == 0);
  CHECK(count_of(held, "launch_gemv<") == 5);
}

TEST_CASE("the ffn launch's other forms show in its template arguments; its defaults stay unwritten", "[emit]") {
  const std::string planned = emit_test::emit_row_loop_sample();
  CHECK(count_of(planned, "launch_ffn<2, 16, 1, true>") == 2);  // qwen3-tiny's 128 on one SM: two blocks of 32
  CHECK(count_of(emit_test::emit_ffn_form_sample(8, 2, 1, 1), "launch_ffn<2, 8, 2, true>") == 2);
  CHECK(count_of(emit_test::emit_ffn_form_sample(16, 1, 2, 1), "launch_ffn<2, 16, 1, true, 2>") == 2);
  CHECK(count_of(emit_test::emit_ffn_form_sample(8, 2, 1, 2), "launch_ffn<2, 8, 2, true, 1, 2>") == 2);
}

TEST_CASE("a GEMV of two chunks a lane launches the ahead form; held, the plain one", "[emit]") {
  const std::string ahead = emit_test::emit_load_ahead_sample();
  CHECK(count_of(ahead, "launch_gemv<WeightFormat::q8_0_split, Activation::int8x2, 1, false, false, true>") == 1);
  CHECK(count_of(ahead, "[qkv_head_epilogue, gemv_parts, load_ahead]") == 1);  // the Q/K/V GEMV's
  const std::string held = emit_test::emit_load_ahead_sample({"load_ahead"});
  CHECK(count_of(held, ", true>") == count_of(ahead, ", true>") - 1);
  CHECK(count_of(held, "load_ahead]") == 0);  // in no launch's rules
}

TEST_CASE("the residual GEMVs load their residual before the wait; gemv_norm_epilogue held, the norms add it", "[emit]") {
  // Qwen3-0.6B's widths, one layer: the output and down projections add the
  // residual stream; the norms after them read it finished.
  const std::string early = emit_test::emit_load_ahead_sample();
  CHECK(count_of(early, "p.residual_early = true;") == 2);
  CHECK(count_of(early, "[gemv_norm_epilogue") == 2);
  CHECK(count_of(early, "launch_rms_norm<true") == 0);
  const std::string held = emit_test::emit_load_ahead_sample({"gemv_norm_epilogue"});
  CHECK(count_of(held, "p.residual_early") == 0);
  CHECK(count_of(held, "launch_rms_norm<true, true, true>") == 2);  // add_norm, early trigger
}

TEST_CASE("the small launches between one-wave GEMVs trigger early; held, after their wait", "[emit]") {
  // Qwen3-0.6B's widths, one layer: the rope, the FFN norm, the SwiGLU
  // quantize and the final norm follow register GEMVs of at most 6,144
  // warps; the first norm follows the embedding and keeps its late trigger.
  const std::string early = emit_test::emit_load_ahead_sample();
  CHECK(count_of(early, "launch_rope<RopeMode::neox, CachePrecision::f16, true>") == 1);
  // (The residual adds run in the GEMVs' epilogues: gemv_norm_epilogue.)
  CHECK(count_of(early, "launch_rms_norm<false, true, true>") == 2);
  CHECK(count_of(early, "launch_quantize_q8<true, true>") == 1);
  CHECK(count_of(early, "launch_rms_norm<false, true>") == 1);
  CHECK(count_of(early, "early_trigger]") == 4);  // the launches' comments
  const std::string held = emit_test::emit_load_ahead_sample({"early_trigger"});
  CHECK(count_of(held, "early_trigger]") == 0);
  CHECK(count_of(held, "launch_rope<RopeMode::neox, CachePrecision::f16>") == 1);
  CHECK(count_of(held, "launch_rms_norm<false, true>") == 3);
  CHECK(count_of(held, "launch_quantize_q8<true>") == 1);
  // Without row_write the rope stores no cache rows: its early form still
  // names the (unused) cache precision before the trigger.
  const std::string no_rows = emit_test::emit_load_ahead_sample({"row_write"});
  CHECK(count_of(no_rows, "launch_rope<RopeMode::neox, CachePrecision::f32, true>") == 1);
}

TEST_CASE("the early rope after Qwen3-8B's Q/K/V GEMV triggers early below 512 positions only, after 0.6B's at "
          "every position",
          "[emit]") {
  // 8B's GEMV streams 26.7 MB, 202 KB a SM of the H200 (rules/early_trigger.h).
  const std::string wide = emit_test::emit_one_layer_sample("qwen3-8b", {});
  CHECK(count_of(wide, "launch_rope<RopeMode::neox, CachePrecision::f16, true>") == 1);
  CHECK(count_of(wide, "p.early_trigger_rows = 512;") == 1);
  const std::string narrow = emit_test::emit_load_ahead_sample();
  CHECK(count_of(narrow, "launch_rope<RopeMode::neox, CachePrecision::f16, true>") == 1);
  CHECK(count_of(narrow, "p.early_trigger_rows") == 0);  // the kernel's 0: every position
  // Held, no rope triggers early and none carries a bound.
  CHECK(count_of(emit_test::emit_one_layer_sample("qwen3-8b", {"early_trigger"}), "p.early_trigger_rows") == 0);
}

TEST_CASE("the argmax folded into the logits GEMV: one key, a finish launch; held, the full argmax", "[emit]") {
  const std::string folded = emit_test::emit_row_loop_sample();  // the row loop's Argmax form
  CHECK(count_of(folded, "launch_gemv_row_loop<WeightFormat::q8_0_split, Activation::int8x2, 1, true>") == 1);
  CHECK(count_of(folded, "p.argmax_best = reinterpret_cast<unsigned long long*>(b.next_token_key);") == 1);
  CHECK(count_of(folded, "p.best = reinterpret_cast<unsigned long long*>(b.next_token_key);") == 1);
  CHECK(count_of(folded, "p.n_blocks = ") == 0);
  CHECK(count_of(folded, "launch_argmax") == 1);
  // The register GEMV keeps the full argmax (the rule declines there).
  const std::string plain = emit_test::emit_sample("qwen3-tiny", "h200");
  CHECK(count_of(plain, "argmax_best") == 0);
  CHECK(count_of(plain, "p.logits = b.logits;") == 1);
  const std::string held = emit_test::emit_row_loop_sample({"gemv_argmax"});
  CHECK(count_of(held, "launch_gemv_row_loop<WeightFormat::q8_0_split, Activation::int8x2, 1>") == 1);
  CHECK(count_of(held, "argmax_best") == 0);
  CHECK(count_of(held, "next_token_key") == 0);
  CHECK(count_of(held, "p.n_blocks = ") == 1);
  CHECK(count_of(held, "p.logits = b.logits;") == 1);  // the full argmax reads the logits
  CHECK(count_of(folded, "p.logits = ") == 0);
}

TEST_CASE("a staged output projection launches the staged GEMV; held, the register GEMV", "[emit]") {
  // With every rule on, load_ahead takes the output projection and nothing is staged.
  const std::string all_on = emit_test::emit_one_layer_sample("qwen3-1.7b", {});
  CHECK(count_of(all_on, "launch_gemv_staged") == 0);
  CHECK(count_of(all_on, "gemv_attn_res_l00: #12 matmul attn_out_l00, #13 add attn_res_l00  [gemv_norm_epilogue, load_ahead]") == 1);
  const std::string staged = emit_test::emit_staged_sample();
  CHECK(count_of(staged, "launch_gemv_staged<Activation::int8x2, 2>") == 1);
  CHECK(count_of(staged, "launch_gemv<") == 4);  // Q/K/V, gate/up, down and the logits
  CHECK(staged.find("staged_weights") != std::string::npos);
  const std::string held = emit_test::emit_staged_sample({"staged_weights"});
  CHECK(count_of(held, "launch_gemv_staged") == 0);
  CHECK(count_of(held, "launch_gemv<") == count_of(staged, "launch_gemv<") + 1);
  // The attention the staged GEMV reads keeps its two heads a block at
  // short contexts too; with the register GEMV the short form serves one.
  CHECK(count_of(staged, "launch_attention<128, CachePrecision::f16, 2>") == 1);
  CHECK(count_of(staged, "launch_attention<") == 1);
  CHECK(count_of(held, "    if (long_context)\n      LANEC_CUDA_CHECK((launch_attention<128, CachePrecision::f16, 2>") == 1);
  CHECK(count_of(held, "    else\n      LANEC_CUDA_CHECK((launch_attention<128, CachePrecision::f16, 1>") == 1);
}

TEST_CASE("attention past 8 splits takes the long-context form; at most 8, one form serves", "[emit]") {
  // The tiny samples' 256 cache rows plan 16 splits: every attention launch
  // switches with the step's long_context (merge launch, and two query heads
  // a block where the short form serves one), and the spec names the splits.
  const std::string long_form = emit_test::emit_sample("qwen3-tiny", "h200");
  const size_t launches = count_of(long_form, "  {  // attention_attn_l");
  CHECK(launches == 2);
  CHECK(count_of(long_form, "    p.merge_launch = long_context ? 1 : 0;\n") == launches);
  CHECK(count_of(long_form, "    if (long_context)\n      LANEC_CUDA_CHECK((launch_attention<32, CachePrecision::f16, 2>") ==
        launches);
  CHECK(count_of(long_form, "    else\n      LANEC_CUDA_CHECK((launch_attention<32, CachePrecision::f16, 1>") == launches);
  CHECK(count_of(long_form, "launch_attention<") == 2 * launches);
  CHECK(long_form.find("    16,  // most attention splits\n") != std::string::npos);
  CHECK(long_form.find("(void)long_context;") == std::string::npos);
  // 128 cache rows plan 8 splits, one cluster: no merge launch at any length.
  const emit_test::Planned p =
      emit_test::plan_sample_with("qwen3-tiny", lanec::load_knobs(emit_test::knob_path("h200")), {}, 128);
  const std::string short_form = lanec::emit_program(p.result.schedule, p.result.graph, p.identity, {});
  CHECK(count_of(short_form, "p.merge_launch") == 0);
  CHECK(count_of(short_form, "    LANEC_CUDA_CHECK((launch_attention<32, CachePrecision::f16, 1>(p, stream)));\n") == launches);
  CHECK(count_of(short_form, "launch_attention<") == launches);
  CHECK(short_form.find("  (void)long_context;  // one graph serves every length\n") != std::string::npos);
  CHECK(short_form.find("    8,  // most attention splits\n") != std::string::npos);
}

TEST_CASE("model identity: checked metadata and fingerprint", "[emit]") {
  const emit_test::Planned a = emit_test::plan_sample("qwen3-tiny", "h200");
  const emit_test::Planned b = emit_test::plan_sample("qwen2-tiny", "h200");
  REQUIRE_FALSE(a.identity.checked_metadata.empty());
  CHECK(a.identity.checked_metadata.front().first == "general.architecture");
  CHECK(a.identity.checked_metadata.front().second == "\"qwen3\"");
  for (const auto& [key, value] : a.identity.checked_metadata) {
    INFO(key);
    CHECK((key == "general.architecture" || key.rfind("qwen3.", 0) == 0));
  }
  CHECK(a.identity.fingerprint.size() == 16);
  CHECK(a.identity.fingerprint != b.identity.fingerprint);
  CHECK(a.identity.fingerprint == emit_test::plan_sample("qwen3-tiny", "rtx4090").identity.fingerprint);
}

TEST_CASE("the build command names the runtime sources and the arch", "[emit]") {
  const std::string cmd = nvcc_build_command("/src", "sm_90", "model.cu", "model");
  CHECK(cmd.rfind("nvcc -std=c++17 -O3 -arch=sm_90 -I/src -o model model.cu ", 0) == 0);
  for (const std::string& s : runtime_sources()) {
    INFO(s);
    CHECK(cmd.find("/src/" + s) != std::string::npos);
    CHECK(std::ifstream(std::string(LANEC_SOURCE_DIR) + "/" + s).good());
  }
  CHECK(cmd.size() > 9);
  CHECK(cmd.compare(cmd.size() - 9, 9, "-lpcre2-8") == 0);
}

namespace {

// One row of the emitted kLaunches[] table.
struct LaunchRow {
  std::string name, kind, ops;
  uint64_t weight_bytes = 0, activation_bytes = 0, cache_bytes_per_position = 0;
  size_t index = 0;
};

std::vector<LaunchRow> launch_table(const std::string& text) {
  const std::string start = "constexpr lanec::runtime::LaunchInfo kLaunches[] = {\n";
  const size_t begin = text.find(start);
  REQUIRE(begin != std::string::npos);
  const size_t end = text.find("\n};\n", begin);
  REQUIRE(end != std::string::npos);
  std::istringstream lines(text.substr(begin + start.size(), end - begin - start.size()));
  const std::regex row(R"re(^    \{"([^"]*)", "([^"]*)", "([^"]*)", (\d+)u, (\d+)u, (\d+)u\},  // (\d+)$)re");
  std::vector<LaunchRow> rows;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    INFO(line);
    REQUIRE(std::regex_match(line, m, row));
    rows.push_back({m[1], m[2], m[3], std::stoull(m[4]), std::stoull(m[5]), std::stoull(m[6]), std::stoul(m[7])});
  }
  return rows;
}

// Bytes of a plain f32 buffer or an int8 form, from its element count (views included).
uint64_t activation_extent(const Schedule& s, const std::string& name) {
  if (name.empty()) return 0;
  const Buffer& b = s.buffer(name);
  const uint64_t n = static_cast<uint64_t>(b.elements);
  if (b.form == BufferForm::q8) return n + n / 32 * 4;
  if (b.form == BufferForm::q8x2) return 2 * n + n / 32 * 4;  // high and low words
  return n * 4;
}

}  // namespace

TEST_CASE("the launch table for --profile has one row per launch with the bytes it moves", "[emit]") {
  const emit_test::Planned planned = emit_test::plan_sample("qwen3-tiny", "h200");
  const Schedule& s = planned.result.schedule;
  const std::string text = emit_program(s, planned.result.graph, planned.identity, {});
  const std::vector<LaunchRow> rows = launch_table(text);
  REQUIRE(rows.size() == s.launches.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Launch& l = s.launches[i];
    INFO(l.name);
    CHECK(rows[i].index == i);
    CHECK(rows[i].name == l.name);
    CHECK(rows[i].kind == launch_kind_name(l.kind));
    const std::string ops_prefix = l.ops.empty() ? "no graph op" : l.ops.size() == 1 ? "op " : "ops ";
    CHECK(rows[i].ops.rfind(ops_prefix, 0) == 0);
    CHECK(text.find("  if (prof) prof->mark(stream, " + std::to_string(i) + ");\n") != std::string::npos);
  }
  CHECK(text.find("prof->mark(stream, " + std::to_string(rows.size()) + ")") == std::string::npos);
  CHECK(text.find("void step(cudaStream_t stream, lanec::runtime::LaunchProfiler* prof, bool long_context) {") !=
        std::string::npos);
  CHECK(text.find("    kLaunches, sizeof(kLaunches) / sizeof(kLaunches[0]),\n") != std::string::npos);

  // A GEMV reads its matrices whole, its input and epilogue vectors, and writes its outputs.
  bool checked_gemv = false, checked_attention = false;
  for (size_t i = 0; i < s.launches.size(); ++i) {
    const Launch& l = s.launches[i];
    INFO(l.name);
    if (const auto* g = std::get_if<GemvLaunch>(&l.params); g && !checked_gemv && g->parts.size() > 1) {
      uint64_t weights = 0, activations = activation_extent(s, g->x) + activation_extent(s, g->x_q8);
      for (const GemvPart& p : g->parts) {
        weights += s.buffer(p.weight).bytes;
        activations += activation_extent(s, p.y) + activation_extent(s, p.bias) + activation_extent(s, p.residual);
      }
      CHECK(weights > 0);
      CHECK(rows[i].weight_bytes == weights);
      CHECK(rows[i].activation_bytes == activations);
      CHECK(rows[i].cache_bytes_per_position == 0);
      checked_gemv = true;
    }
    if (const auto* a = std::get_if<AttentionLaunch>(&l.params); a && !checked_attention) {
      // Caches are f16 under h200: K and V rows of every KV head, per cached position.
      CHECK(rows[i].weight_bytes == 0);
      CHECK(rows[i].cache_bytes_per_position == static_cast<uint64_t>(2 * a->n_kv_head * a->head_dim * 2));
      checked_attention = true;
    }
  }
  CHECK(checked_gemv);
  CHECK(checked_attention);
  CHECK(text.find("\"ops ") != std::string::npos);
}
