// User errors at the command line: each says what and where, and exits 1
// (never a crash). One case per kind of mistake a user makes.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <utility>

#include "tests/support/run_lanec.h"

using lanec::test::run_lanec;

namespace {

std::string scratch_file(const std::string& name, const std::string& content) {
  const std::string path = "/tmp/lanec_cli_errors_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

void check_user_error(const std::string& args, const std::string& expected) {
  const auto result = run_lanec(args);
  INFO(args << "\n" << result.output);
  CHECK(result.exit_code == 1);
  CHECK(result.output.find("lanec: error: ") != std::string::npos);
  CHECK(result.output.find(expected) != std::string::npos);
}

}  // namespace

TEST_CASE("info: a missing file is named", "[errors]") {
  check_user_error("info /nonexistent/model.gguf", "/nonexistent/model.gguf");
}

TEST_CASE("info: a file that is not GGUF is refused at byte 0", "[errors]") {
  const std::string path = scratch_file("not_gguf.gguf", "this is not a gguf file at all");
  check_user_error("info " + path, path + ": at byte 0");
}

TEST_CASE("info: a truncated GGUF is refused with the offset", "[errors]") {
  const std::string path = scratch_file("truncated.gguf", std::string("GGUF\x03\0\0\0", 8));
  check_user_error("info " + path, "at byte 8");
}

TEST_CASE("synth: unknown preset lists the valid ones", "[errors]") {
  check_user_error("synth qwen9-huge -o /tmp/lanec_cli_errors_x.gguf", "valid presets: qwen3-tiny");
}

TEST_CASE("synth: unknown weight type is named", "[errors]") {
  check_user_error("synth qwen3-tiny --type q9_9 -o /tmp/lanec_cli_errors_x.gguf", "q9_9");
}

TEST_CASE("every subcommand has help, the binary a version", "[errors]") {
  CHECK(run_lanec("--version").output.find("lanec ") == 0);
  for (const char* command : {"info", "synth", "tokenize", "graph"}) {
    const auto result = run_lanec(std::string(command) + " --help");
    INFO(command << "\n" << result.output);
    CHECK(result.exit_code == 0);
    CHECK(result.output.find("Usage:") != std::string::npos);
  }
  const auto none = run_lanec("");
  CHECK(none.exit_code != 0);
  CHECK(none.output.find("subcommand") != std::string::npos);
}

namespace {

// A tiny model written once by `lanec synth` for the plan error cases.
const std::string& tiny_model_path() {
  static const std::string path = [] {
    const std::string p = "/tmp/lanec_cli_errors_qwen3_tiny.gguf";
    const auto r = run_lanec("synth qwen3-tiny --layers 1 -o " + p);
    REQUIRE(r.exit_code == 0);
    return p;
  }();
  return path;
}

}  // namespace

TEST_CASE("plan: a bad knob file names the file, line and key", "[errors]") {
  const std::string knobs = scratch_file("bad_knobs.yaml",
                                         "chip: { name: x, arch: sm_90, sms: 132, smem_kib_per_block: 227 }\n"
                                         "cache_precision: f8\n"
                                         "recurrent_state: f32\n"
                                         "activations: int8\n");
  check_user_error("plan " + tiny_model_path() + " --knobs " + knobs, knobs + ":2:");
  check_user_error("plan " + tiny_model_path() + " --knobs " + knobs, "cache_precision");
}

TEST_CASE("plan: an unknown rule name lists the valid ones", "[errors]") {
  const std::string knobs = std::string(LANEC_SOURCE_DIR) + "/samples/knobs/h200.yaml";
  check_user_error("plan " + tiny_model_path() + " --knobs " + knobs + " --hold add_norms", "add_norms");
  check_user_error("plan " + tiny_model_path() + " --knobs " + knobs + " --hold add_norms", "glu_pair");
}

TEST_CASE("plan: a chip architecture without figures plans, with a warning naming it", "[errors]") {
  const std::string knobs = scratch_file("sm95_knobs.yaml",
                                         "chip: { name: x, arch: sm_95, sms: 132, smem_kib_per_block: 227 }\n"
                                         "cache_precision: f16\n"
                                         "recurrent_state: f32\n"
                                         "activations: int8\n");
  const auto unknown = run_lanec("plan " + tiny_model_path() + " --knobs " + knobs + " --census");
  INFO(unknown.output);
  CHECK(unknown.exit_code == 0);
  CHECK(unknown.output.find(knobs + ": chip.arch sm_95: no resident-warps-per-SM figure") != std::string::npos);
  const std::string h200 = std::string(LANEC_SOURCE_DIR) + "/samples/knobs/h200.yaml";
  const auto known = run_lanec("plan " + tiny_model_path() + " --knobs " + h200 + " --census");
  CHECK(known.exit_code == 0);
  CHECK(known.output.find("resident-warps") == std::string::npos);
}

TEST_CASE("ref: an unknown architecture is named", "[errors]") {
  const auto r = run_lanec("synth qwen3moe-tiny -o /tmp/lanec_cli_errors_moe.gguf");
  REQUIRE(r.exit_code == 0);
  check_user_error("ref /tmp/lanec_cli_errors_moe.gguf --tokens 1 -n 1", "qwen3moe");
}

// Counts outside their range are refused by the command line itself (CLI11's
// exit code), naming the option and the bound, instead of falling back to a
// default, wrapping a sign or clamping to the type's largest value.
TEST_CASE("counts out of range or not in decimal are refused, naming the option", "[errors]") {
  const std::string model = tiny_model_path();
  const std::string knobs = std::string(LANEC_SOURCE_DIR) + "/samples/knobs/h200.yaml";
  const std::string bound0 = "--max-ctx: expected a whole number of at least 0, got ";
  const std::pair<std::string, std::string> cases[] = {
      {"plan " + model + " --knobs " + knobs + " --max-ctx -5", bound0 + "'-5'"},
      {"graph " + model + " --max-ctx -1", bound0 + "'-1'"},
      {"ref " + model + " --tokens 1 --max-ctx 12x", bound0 + "'12x'"},
      {"synth qwen3-tiny --layers 0 -o /tmp/lanec_cli_errors_x.gguf",
       "--layers: expected a whole number of at least 1, got '0'"},
      {"synth qwen3-tiny --seed -1 -o /tmp/lanec_cli_errors_x.gguf",
       "--seed: expected a whole number of at least 0, got '-1'"},
      {"synth qwen3-tiny --seed ' -1' -o /tmp/lanec_cli_errors_x.gguf",
       "--seed: expected a whole number of at least 0, got ' -1'"},
      {"plan " + model + " --knobs " + knobs + " --max-ctx 9223372036854775808",
       "--max-ctx: expected a whole number of at most 9223372036854775807, got '9223372036854775808'"},
      {"ref " + model + " --tokens 1 -n 0", "--n-predict: expected a whole number of at least 1, got '0'"},
      {"ref " + model + " --tokens 1 -n 2 -j -1", "--threads: expected a whole number of at least 0, got '-1'"},
      {"synth qwen3-tiny --layers 4294967296 -o /tmp/lanec_cli_errors_x.gguf",
       "--layers: expected a whole number of at most 4294967295, got '4294967296'"},
  };
  for (const auto& [args, expected] : cases) {
    const auto result = run_lanec(args);
    INFO(args << "\n" << result.output);
    CHECK(result.exit_code != 0);
    CHECK(result.output.find(expected) != std::string::npos);
  }
  CHECK(run_lanec("plan " + model + " --knobs " + knobs + " --max-ctx 0 --census").exit_code == 0);
  // Leading zeros are decimal, not octal (CLI11 alone would read 010 as 8).
  const auto decimal = run_lanec("plan " + model + " --knobs " + knobs + " --max-ctx 010");
  INFO(decimal.output);
  CHECK(decimal.exit_code == 0);
  CHECK(decimal.output.find("n_ctx=10 ") != std::string::npos);
  // The largest 64-bit seed still passes (unsigned, not wrapped from a sign).
  const auto big_seed =
      run_lanec("synth qwen3-tiny --layers 1 --seed 18446744073709551615 -o /tmp/lanec_cli_errors_x.gguf");
  INFO(big_seed.output);
  CHECK(big_seed.exit_code == 0);
  CHECK(big_seed.output.find("seed 18446744073709551615") != std::string::npos);
}
