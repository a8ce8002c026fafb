// `lanec tokenize` end to end: the binary on the real vocabulary files.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/run_lanec.h"

namespace {

using lanec::test::run_lanec;
using lanec::test::RunResult;

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
  CHECK(bad_word.output == "lanec: error: --decode: expected non-negative token ids separated by spaces or commas, got 'x'\n");
  const RunResult out_of_range = run_lanec("tokenize " + kQwen + " --decode 999999");
  CHECK(out_of_range.exit_code == 1);
  CHECK(out_of_range.output.find("token id 999999 is outside the vocabulary") != std::string::npos);
  const RunResult nothing = run_lanec("tokenize " + kQwen);
  CHECK(nothing.exit_code == 1);
  CHECK(nothing.output.find("give the TEXT to encode or --decode") != std::string::npos);
}
