// User errors at the command line: each says what and where, and exits 1
// (never a crash). One case per kind of mistake a user makes.
#include <catch2/catch.hpp>
#include <fstream>

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
