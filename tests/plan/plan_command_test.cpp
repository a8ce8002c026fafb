// `lanec plan` end to end: the summary, --json, --dump-after, --hold and its
// errors (exit 1 with the message), on a tiny model written to /tmp.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "tests/plan/plan_fixtures.h"
#include "tests/support/run_lanec.h"

namespace lanec {
namespace {

std::string tiny_model_file() {
  static const std::string path = [] {
    SynthOptions options;
    options.shape = find_preset("qwen3-tiny");
    options.threads = 1;
    std::vector<uint8_t> bytes = build_synthetic_model(options).to_bytes();
    std::string p = "/tmp/lanec_plan_command_qwen3_tiny.gguf";
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
  }();
  return path;
}

const std::string kKnobs = std::string(LANEC_SOURCE_DIR) + "/samples/knobs/h200.yaml";

TEST_CASE("lanec plan prints the census, launches and buffers", "[plan]") {
  auto r = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("model: qwen3 \"") == 0);
  CHECK(r.output.find("rules (matched / fired / declined):") != std::string::npos);
  CHECK(r.output.find("  glu_pair                2 / 0 / 2") != std::string::npos);
  CHECK(r.output.find("    declined 2x: the SwiGLU output is quantized for an int8 GEMV") != std::string::npos);
  CHECK(r.output.find("weight bytes read per step: ") != std::string::npos);
  CHECK(r.output.find("\nlaunches:\ngemv_") == std::string::npos);  // the embed comes first
  CHECK(r.output.find("\nlaunches:\nembed_inp_embd embed") != std::string::npos);
  CHECK(r.output.find("qkv_l00 activation f32 [256]") != std::string::npos);
}

TEST_CASE("lanec plan --json and --hold", "[plan]") {
  auto r = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs + " --json --hold glu_pair,add_norm");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.output);
  CHECK(j["held"] == nlohmann::json::array({"add_norm", "glu_pair"}));
  CHECK(j["rules"].size() == 33);
  CHECK(j["rules"][3]["rule"] == "add_norm");
  CHECK(j["rules"][3]["status"] == "held");
  CHECK(j["launches"]["swiglu"] == 2);
  REQUIRE(j["firings"].size() > 0);
  CHECK(j["firings"][0]["ops"].size() >= 2);
}

TEST_CASE("lanec plan --dump-after rewrite prints the fused graph", "[plan]") {
  auto r = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs + " --dump-after rewrite");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("rope [head_norm_rope") != std::string::npos);
}

TEST_CASE("lanec plan --graph plans the file as lanec graph printed it; a bad one is named", "[plan]") {
  const std::string graph = "/tmp/lanec_plan_command_qwen3_tiny.graph";
  REQUIRE(test::run_lanec("graph " + tiny_model_file() + " -o " + graph).exit_code == 0);
  auto direct = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs);
  auto from_file = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs + " --graph " + graph);
  INFO(from_file.output);
  CHECK(from_file.exit_code == 0);
  CHECK(from_file.output == direct.output);

  // A pos param of the wrong type parses but fails the verifier.
  std::ifstream in(graph);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string pos_line = "param pos i32 [1]";
  REQUIRE(text.find(pos_line) != std::string::npos);
  text.replace(text.find(pos_line), pos_line.size(), "param pos f32 [1]");
  const std::string bad = "/tmp/lanec_plan_command_bad.graph";
  std::ofstream(bad) << text;
  auto refused = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs + " --graph " + bad);
  INFO(refused.output);
  CHECK(refused.exit_code == 1);
  CHECK(refused.output.find("lanec: error: " + bad + ": ") != std::string::npos);
  std::remove(graph.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("lanec plan: unknown rules and stages are user errors", "[plan]") {
  auto hold = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs + " --hold add_norms");
  CHECK(hold.exit_code == 1);
  CHECK(hold.output.find("lanec: error: unknown rule 'add_norms' in --hold; valid rules: "
                         "sandwich_norm, gemv_bias, gemv_norm_epilogue, add_norm,") != std::string::npos);
  auto stage = test::run_lanec("plan " + tiny_model_file() + " --knobs " + kKnobs + " --dump-after lower");
  CHECK(stage.exit_code == 1);
  CHECK(stage.output.find("unknown stage 'lower' in --dump-after") != std::string::npos);
}

}  // namespace
}  // namespace lanec
