// The tokenizer on real vocabularies read from GGUF files: the ggml project's
// reference vectors (GPT-2 byte-level BPE, LLaMA SentencePiece), Qwen3 vectors
// made independently with Hugging Face `tokenizers`
// (scripts/qwen3_tokenizer_reference.py), round trips and speed on Qwen3, and
// load_vocab's errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/synth/synthetic_vocab.h"
#include "lib/tokenizer/gguf_vocab.h"
#include "lib/tokenizer/tokenizer.h"

using lanec::Tokenizer;

namespace {

const std::string kVocabDir = std::string(LANEC_TEST_DATA) + "/vocab/";
const std::string kQwenCases = std::string(LANEC_TEST_DATA) + "/../tokenizer/qwen3-vocab";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> split_on(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + separator.size()) {
    parts.push_back(text.substr(start, at - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

// (input, expected ids as " 1 2 3") pairs of a .inp/.out file pair.
std::vector<std::pair<std::string, std::string>> read_cases(const std::string& prefix) {
  const auto inputs = split_on(read_file(prefix + ".inp"), "\n__ggml_vocab_test__\n");
  const auto outputs = split_on(read_file(prefix + ".out"), "\n");
  REQUIRE(inputs.size() == outputs.size());
  REQUIRE(inputs.back().empty());
  REQUIRE(outputs.back().empty());
  std::vector<std::pair<std::string, std::string>> cases;
  for (size_t i = 0; i < inputs.size(); ++i) cases.emplace_back(inputs[i], outputs[i]);
  return cases;
}

std::string ids_line(const std::vector<int32_t>& ids) {
  std::string line;
  for (int32_t id : ids) line += " " + std::to_string(id);
  return line;
}

Tokenizer open_tokenizer(const std::string& file) {
  return Tokenizer::from_vocab(lanec::load_vocab(lanec::GgufFile::open(kVocabDir + file)));
}

void check_cases(const Tokenizer& tokenizer, const std::string& prefix, bool parse_special) {
  const auto cases = read_cases(prefix);
  CHECK(cases.size() > 10);
  for (const auto& [input, expected] : cases) {
    INFO("input: [" << input << "]");
    const auto ids = tokenizer.encode(input, false, parse_special);
    CHECK(ids_line(ids) == expected);
    CHECK(tokenizer.decode(ids) == input);
  }
}

const Tokenizer& qwen3() {
  static const Tokenizer tokenizer = open_tokenizer("qwen3-vocab.gguf");
  return tokenizer;
}

std::string varied_text() {
  std::string text;
  for (int i = 0; i < 12; ++i) {
    text +=
        "def fibonacci(n: int) -> int:\n    if n < 2:\n        return n\n    return fibonacci(n - 1)\n\n"
        "<|im_start|>user\n你好，世界！今天天气怎么样？我想在apple工作1314151天～<|im_end|>\n"
        "<|im_start|>assistant\n<think>\n\n</think>\n\n"
        "Emoji: 🦙🚀 😶‍🌫️ ✅ 👨‍👩‍👧‍👦 — numbers 3.14159, 1,000,000, 0xDEADBEEF\n"
        "Whitespace:\t\t  tabs and   runs    \n\n\n   \r\n  trailing   \n"
        "Ελληνικά, русский, العربية, हिन्दी, 日本語, 한국어. Cửa Việt. Führer ½\n"
        "It's I'M you'll they'VE {\"json\": [1, 2]} <html>&amp;</html>\n";
  }
  return text;
}

}  // namespace

TEST_CASE("gpt-2 vocabulary matches the reference ids", "[tokenizer]") {
  const Tokenizer tokenizer = open_tokenizer("ggml-vocab-gpt-2.gguf");
  CHECK(tokenizer.vocab().pre == "gpt-2");
  CHECK(tokenizer.n_tokens() == 50257);
  check_cases(tokenizer, kVocabDir + "ggml-vocab-gpt-2.gguf", false);
}

TEST_CASE("llama SentencePiece vocabulary matches the reference ids", "[tokenizer]") {
  const Tokenizer tokenizer = open_tokenizer("ggml-vocab-llama-spm.gguf");
  CHECK(tokenizer.vocab().model == "llama");
  CHECK(tokenizer.vocab().add_bos);
  check_cases(tokenizer, kVocabDir + "ggml-vocab-llama-spm.gguf", false);
  // add_bos_token is set: with add_special the ids start with <s>.
  const auto ids = tokenizer.encode("Hello world");
  REQUIRE(ids.size() >= 2);
  CHECK(ids[0] == 1);
  CHECK(tokenizer.decode(ids, false) == "Hello world");
}

TEST_CASE("qwen3 vocabulary matches Hugging Face tokenizers", "[tokenizer]") {
  check_cases(qwen3(), kQwenCases, true);
}

TEST_CASE("qwen3: chat tokens, no BOS, round trip of a varied text, fast", "[tokenizer]") {
  const Tokenizer& tokenizer = qwen3();
  CHECK(tokenizer.vocab().pre == "qwen2");
  CHECK(tokenizer.encode("<|im_start|>") == std::vector<int32_t>{151644});
  CHECK(tokenizer.encode("<|im_end|>") == std::vector<int32_t>{151645});
  CHECK(tokenizer.eos_id() == 151645);
  CHECK(tokenizer.is_control(151643));
  CHECK(tokenizer.encode("Hello world") == std::vector<int32_t>{9707, 1879});

  const std::string text = varied_text();
  REQUIRE(text.size() > 6000);
  const auto start = std::chrono::steady_clock::now();
  const auto ids = tokenizer.encode(text);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  INFO(text.size() << " bytes -> " << ids.size() << " ids in " << ms << " ms");
  CHECK(ids.size() < text.size() / 2);
  CHECK(ms < 100.0);  // ~1 ms in Release; the bound catches quadratic slips, not noise
  CHECK(tokenizer.decode(ids) == text);

  // Long runs stay fast (no quadratic merge loop).
  const std::string runs = std::string(20000, ' ') + std::string(20000, 'x') + "\n";
  CHECK(tokenizer.decode(tokenizer.encode(runs)) == runs);
}

namespace {

lanec::GgufWriter minimal_vocab_writer() {
  lanec::GgufWriter writer;
  writer.set("tokenizer.ggml.model", lanec::GgufValue::string("gpt2"));
  writer.set("tokenizer.ggml.pre", lanec::GgufValue::string("qwen2"));
  writer.set("tokenizer.ggml.tokens", lanec::GgufValue::string_array({"a", "b", "ab"}));
  writer.set("tokenizer.ggml.token_type", lanec::GgufValue::i32_array({1, 1, 1}));
  writer.set("tokenizer.ggml.merges", lanec::GgufValue::string_array({"a b"}));
  return writer;
}

void check_load_error(const lanec::GgufWriter& writer, const std::string& expected) {
  const auto bytes = writer.to_bytes();
  const auto file = lanec::GgufFile::parse(bytes.data(), bytes.size(), "vocab.gguf");
  CHECK_THROWS_WITH(lanec::load_vocab(file), Catch::Contains(expected));
}

}  // namespace

TEST_CASE("load_vocab reads a minimal file and explains what is wrong", "[tokenizer]") {
  {
    const auto bytes = minimal_vocab_writer().to_bytes();
    const auto file = lanec::GgufFile::parse(bytes.data(), bytes.size(), "vocab.gguf");
    const auto tokenizer = Tokenizer::from_vocab(lanec::load_vocab(file));
    CHECK(tokenizer.encode("abba") == std::vector<int32_t>{2, 1, 0});
  }
  auto writer = minimal_vocab_writer();
  SECTION("missing tokens") {
    lanec::GgufWriter bare;
    bare.set("tokenizer.ggml.model", lanec::GgufValue::string("gpt2"));
    bare.set("tokenizer.ggml.pre", lanec::GgufValue::string("qwen2"));
    check_load_error(bare, "vocab.gguf: tokenizer.ggml.tokens: missing");
  }
  SECTION("model of the wrong type") {
    writer.set("tokenizer.ggml.model", lanec::GgufValue::u32(2));
    check_load_error(writer, "tokenizer.ggml.model: expected string, got u32");
  }
  SECTION("unknown model") {
    writer.set("tokenizer.ggml.model", lanec::GgufValue::string("bert"));
    check_load_error(writer, "unknown tokenizer model 'bert'");
  }
  SECTION("unknown pre-tokenizer") {
    writer.set("tokenizer.ggml.pre", lanec::GgufValue::string("gpt-4o"));
    check_load_error(writer, "tokenizer.ggml.pre: unknown pre-tokenizer 'gpt-4o'");
  }
  SECTION("tokens that are not strings") {
    writer.set("tokenizer.ggml.tokens", lanec::GgufValue::i32_array({1, 2, 3}));
    check_load_error(writer, "tokenizer.ggml.tokens: expected an array of strings");
  }
  SECTION("token types of the wrong length") {
    writer.set("tokenizer.ggml.token_type", lanec::GgufValue::i32_array({1, 1}));
    check_load_error(writer, "tokenizer.ggml.token_type: expected 3 entries");
  }
  SECTION("token type outside 1..6") {
    writer.set("tokenizer.ggml.token_type", lanec::GgufValue::i32_array({1, 7, 1}));
    check_load_error(writer, "vocab.gguf: tokenizer.ggml.token_type[1]: expected a token type 1..6, got 7");
  }
  SECTION("malformed merge (the rule Tokenizer::from_vocab applies too)") {
    writer.set("tokenizer.ggml.merges", lanec::GgufValue::string_array({"a b", "ab"}));
    check_load_error(writer, "vocab.gguf: tokenizer.ggml.merges[1]: expected \"LEFT RIGHT\", got \"ab\"");
  }
  SECTION("eos id outside the vocabulary") {
    writer.set("tokenizer.ggml.eos_token_id", lanec::GgufValue::u32(7));
    check_load_error(writer, "tokenizer.ggml.eos_token_id: token id 7 is outside");
  }
}

TEST_CASE("the synthetic vocabulary of lanec synth loads and round-trips", "[tokenizer]") {
  lanec::GgufWriter writer;
  for (auto& [key, value] : lanec::synthetic_vocab_metadata(400)) writer.set(key, value);
  const auto bytes = writer.to_bytes();
  const auto file = lanec::GgufFile::parse(bytes.data(), bytes.size(), "synthetic.gguf");
  const Tokenizer tokenizer = Tokenizer::from_vocab(lanec::load_vocab(file));
  CHECK(tokenizer.n_tokens() == 400);
  const std::string text = "<|im_start|>user\nthe cat sat on the mat, 你好 🦙<|im_end|>";
  const auto ids = tokenizer.encode(text);
  CHECK(ids.front() == tokenizer.find_token("<|im_start|>"));
  CHECK(ids.back() == tokenizer.find_token("<|im_end|>"));
  CHECK(tokenizer.eos_id() == tokenizer.find_token("<|endoftext|>"));
  // " the": Ġt merges first, then "he" cannot form across it -> "Ġt", "he".
  CHECK(std::find(ids.begin(), ids.end(), tokenizer.find_token("\xC4\xA0t")) != ids.end());
  CHECK(tokenizer.decode(ids) == text);
}
