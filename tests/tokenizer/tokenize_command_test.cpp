// `lanec tokenize` end to end: the binary on the real vocabulary files.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

struct RunResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

RunResult run_lanec(const std::string& args) {
  const std::string command = std::string(LANEC_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

const std::string kQwen = std::string(LANEC_TEST_DATA) + "/vocab/qwen3-vocab.gguf";
const std::string kSpm = std::string(LANEC_TEST_DATA) + "/vocab/ggml-vocab-llama-spm.gguf";

}  // namespace

TEST_CASE("lanec tokenize prints ids, --decode prints text", "[tokenizer]") {
  CHECK(run_lanec("tokenize " + kQwen + " 'Hello world'").output == "9707 1879\n");
  CHECK(run_lanec("tokenize " + kQwen + " '<|im_start|>user'").output == "151644 872\n");
  CHECK(run_lanec("tokenize " + kQwen + " --decode '9707 1879'").output == "Hello world\n");
  // The SentencePiece vocabulary asks for BOS.
  CHECK(run_lanec("tokenize " + kSpm + " 'Hello world'").output == "1 15043 3186\n");
  CHECK(run_lanec("tokenize " + kSpm + " --no-add-special 'Hello world'").output == "15043 3186\n");
}

TEST_CASE("lanec tokenize: bad ids and missing arguments are user errors", "[tokenizer]") {
  const RunResult bad_word = run_lanec("tokenize " + kQwen + " --decode '12 x'");
  CHECK(bad_word.exit_code == 1);
  CHECK(bad_word.output == "lanec: error: --decode: expected token ids separated by spaces, got 'x'\n");
  const RunResult out_of_range = run_lanec("tokenize " + kQwen + " --decode 999999");
  CHECK(out_of_range.exit_code == 1);
  CHECK(out_of_range.output.find("token id 999999 is outside the vocabulary") != std::string::npos);
  const RunResult nothing = run_lanec("tokenize " + kQwen);
  CHECK(nothing.exit_code == 1);
  CHECK(nothing.output.find("give the TEXT to encode or --decode") != std::string::npos);
}
