#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lib/tokenizer/pre_tokenizer.h"

using lanec::PreTokenizer;
using lanec::PreTokenizerKind;

namespace {

std::vector<std::string> split(PreTokenizerKind kind, const std::string& text) {
  std::vector<std::string_view> views;
  PreTokenizer(kind).split(text, views);
  return std::vector<std::string>(views.begin(), views.end());
}

using Words = std::vector<std::string>;

}  // namespace

TEST_CASE("pre-tokenizer names map to their kinds; others are refused", "[tokenizer]") {
  PreTokenizerKind kind{};
  REQUIRE(lanec::pre_tokenizer_from_name("qwen2", kind));
  CHECK(kind == PreTokenizerKind::Qwen2);
  REQUIRE(lanec::pre_tokenizer_from_name("deepseek-r1-qwen", kind));
  CHECK(kind == PreTokenizerKind::Qwen2);
  REQUIRE(lanec::pre_tokenizer_from_name("llama-bpe", kind));
  CHECK(kind == PreTokenizerKind::Llama3);
  REQUIRE(lanec::pre_tokenizer_from_name("gpt-2", kind));
  CHECK(kind == PreTokenizerKind::Gpt2);
  CHECK_FALSE(lanec::pre_tokenizer_from_name("default", kind));
  CHECK_FALSE(lanec::pre_tokenizer_from_name("gpt-4o", kind));
}

TEST_CASE("pre-tokenizer: digits singly (qwen2), by three (llama-bpe), as a run (gpt-2)", "[tokenizer]") {
  CHECK(split(PreTokenizerKind::Qwen2, "12345") == Words{"1", "2", "3", "4", "5"});
  CHECK(split(PreTokenizerKind::Llama3, "12345") == Words{"123", "45"});
  CHECK(split(PreTokenizerKind::Gpt2, "x 12345") == Words{"x", " 12345"});
}

TEST_CASE("pre-tokenizer: contractions, letters with one leading non-letter, whitespace runs", "[tokenizer]") {
  CHECK(split(PreTokenizerKind::Qwen2, "I'M here") == Words{"I", "'M", " here"});
  CHECK(split(PreTokenizerKind::Gpt2, "I'M here") == Words{"I", "'", "M", " here"});
  // The last space of a run joins the next word; the rest stay together.
  CHECK(split(PreTokenizerKind::Qwen2, "a   b") == Words{"a", "  ", " b"});
  CHECK(split(PreTokenizerKind::Qwen2, "a.\n\n  b") == Words{"a", ".\n\n", " ", " b"});
  CHECK(split(PreTokenizerKind::Qwen2, "x\n\n  ") == Words{"x", "\n\n", "  "});
  // \p{L} is Unicode-aware: one word for a run of CJK letters.
  CHECK(split(PreTokenizerKind::Qwen2, " 你好，世界") == Words{" 你好", "，世界"});
}

TEST_CASE("pre-tokenizer: invalid UTF-8 is kept as its own word, no byte lost", "[tokenizer]") {
  const std::string text = "ab\xFF\xFE" "cd";
  const Words words = split(PreTokenizerKind::Qwen2, text);
  std::string joined;
  for (const auto& w : words) joined += w;
  CHECK(joined == text);
  CHECK(words == Words{"ab", "\xFF\xFE", "cd"});
}
