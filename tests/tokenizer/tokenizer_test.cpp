// Tokenizer behaviour on small hand-built vocabularies, where the expected
// ids follow from the rules by hand. Real vocabularies: vocab_files_test.cpp.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "lib/common/error.h"
#include "lib/tokenizer/byte_unicode.h"
#include "lib/tokenizer/tokenizer.h"

using lanec::TokenType;
using lanec::Tokenizer;
using lanec::Vocab;
using Ids = std::vector<int32_t>;

namespace {

// 256 byte tokens (id = byte value), then `extra` normal tokens, then
// <|end|> (control), <|end|>x (control, longer), <think> (user-defined).
Vocab byte_level_vocab(const std::vector<std::string>& extra, const std::vector<std::string>& merges) {
  Vocab vocab;
  vocab.model = "gpt2";
  vocab.pre = "qwen2";
  const auto& map = lanec::ByteUnicodeMap::instance();
  for (int b = 0; b < 256; ++b) vocab.tokens.push_back(map.encode_byte(static_cast<uint8_t>(b)));
  for (const auto& token : extra) vocab.tokens.push_back(token);
  vocab.types.assign(vocab.tokens.size(), TokenType::Normal);
  for (const char* special : {"<|end|>", "<|end|>x"}) {
    vocab.tokens.push_back(special);
    vocab.types.push_back(TokenType::Control);
  }
  vocab.tokens.push_back("<think>");
  vocab.types.push_back(TokenType::UserDefined);
  vocab.merges = merges;
  vocab.eos_id = static_cast<int32_t>(vocab.tokens.size()) - 3;  // <|end|>
  return vocab;
}

int32_t id_of(const Tokenizer& tokenizer, const std::string& text) {
  const int32_t id = tokenizer.find_token(text);
  REQUIRE(id >= 0);
  return id;
}

}  // namespace

TEST_CASE("bpe: the lowest-rank pair merges first", "[tokenizer]") {
  const auto bc_first = Tokenizer::from_vocab(byte_level_vocab({"ab", "bc"}, {"b c", "a b"}));
  CHECK(bc_first.encode("abc") == Ids{'a', id_of(bc_first, "bc")});
  const auto ab_first = Tokenizer::from_vocab(byte_level_vocab({"ab", "bc"}, {"a b", "b c"}));
  CHECK(ab_first.encode("abc") == Ids{id_of(ab_first, "ab"), 'c'});
}

TEST_CASE("bpe: equal ranks merge leftmost first, merges chain", "[tokenizer]") {
  const auto tokenizer = Tokenizer::from_vocab(byte_level_vocab({"aa", "aaaa"}, {"a a", "aa aa"}));
  const int32_t aa = id_of(tokenizer, "aa");
  CHECK(tokenizer.encode("aaa") == Ids{aa, 'a'});
  CHECK(tokenizer.encode("aaaa") == Ids{id_of(tokenizer, "aaaa")});
  CHECK(tokenizer.encode("aaaaa") == Ids{id_of(tokenizer, "aaaa"), 'a'});
}

TEST_CASE("bpe: merges stay inside pre-tokenizer words; spaces use the byte map", "[tokenizer]") {
  const auto tokenizer = Tokenizer::from_vocab(byte_level_vocab({"\xC4\xA0" "a", "a\xC4\xA0"}, {"a \xC4\xA0", "\xC4\xA0 a"}));
  // "a a" splits into "a" and " a": "a " never forms although it ranks first.
  CHECK(tokenizer.encode("a a") == Ids{'a', id_of(tokenizer, "\xC4\xA0" "a")});
  CHECK(tokenizer.decode(tokenizer.encode("a a")) == "a a");
  CHECK(tokenizer.token_piece(id_of(tokenizer, "\xC4\xA0" "a")) == " a");
}

TEST_CASE("special tokens: longest match, parse_special, user-defined always", "[tokenizer]") {
  const auto tokenizer = Tokenizer::from_vocab(byte_level_vocab({}, {}));
  const int32_t end = id_of(tokenizer, "<|end|>");
  const int32_t end_x = id_of(tokenizer, "<|end|>x");
  const int32_t think = id_of(tokenizer, "<think>");
  CHECK(tokenizer.encode("a<|end|>b") == Ids{'a', end, 'b'});
  CHECK(tokenizer.encode("<|end|>xy") == Ids{end_x, 'y'});
  CHECK(tokenizer.encode("<think>hi</think>") ==
        Ids{think, 'h', 'i', '<', '/', 't', 'h', 'i', 'n', 'k', '>'});
  // Without parse_special a control token's text is just text; <think> still splits out.
  const Ids plain = tokenizer.encode("<|end|><think>", true, false);
  CHECK(plain.size() == 8);
  CHECK(plain.back() == think);
  CHECK(tokenizer.decode(plain) == "<|end|><think>");
  CHECK(tokenizer.is_control(end));
  CHECK_FALSE(tokenizer.is_control(think));
}

TEST_CASE("add_special puts BOS/EOS only where the vocabulary asks", "[tokenizer]") {
  Vocab vocab = byte_level_vocab({}, {});
  vocab.bos_id = 'B';
  vocab.add_bos = true;
  vocab.add_eos = true;
  const auto tokenizer = Tokenizer::from_vocab(vocab);
  CHECK(tokenizer.encode("x") == Ids{'B', 'x', vocab.eos_id});
  CHECK(tokenizer.encode("x", false) == Ids{'x'});
  CHECK(tokenizer.encode("", false).empty());
}

TEST_CASE("decode: control tokens shown or hidden, bytes reassembled", "[tokenizer]") {
  const auto tokenizer = Tokenizer::from_vocab(byte_level_vocab({}, {}));
  const int32_t end = id_of(tokenizer, "<|end|>");
  // 你 is three bytes, each its own token here; together they are the character again.
  CHECK(tokenizer.decode({0xE4, 0xBD, 0xA0, end}) == "\xE4\xBD\xA0<|end|>");
  CHECK(tokenizer.decode({0xE4, 0xBD, 0xA0, end}, false) == "\xE4\xBD\xA0");
  const std::string binary("\x00\xFF\x80 \n", 5);
  CHECK(tokenizer.decode(tokenizer.encode(binary)) == binary);
}

TEST_CASE("vocabulary errors name what is wrong", "[tokenizer]") {
  Vocab vocab = byte_level_vocab({}, {});
  SECTION("unknown model") {
    vocab.model = "wordpiece";
    CHECK_THROWS_WITH(Tokenizer::from_vocab(vocab), Catch::Contains("unknown tokenizer model 'wordpiece'"));
  }
  SECTION("unknown pre-tokenizer") {
    vocab.pre = "gpt-4o";
    CHECK_THROWS_WITH(Tokenizer::from_vocab(vocab), Catch::Contains("unknown pre-tokenizer 'gpt-4o'"));
  }
  SECTION("malformed merge") {
    vocab.merges = {"ab"};
    CHECK_THROWS_WITH(Tokenizer::from_vocab(vocab), Catch::Contains("tokenizer.ggml.merges[0]"));
  }
  SECTION("token types of the wrong length") {
    vocab.types.pop_back();
    CHECK_THROWS_WITH(Tokenizer::from_vocab(vocab), Catch::Contains("token_type: expected 259 entries"));
  }
  SECTION("special id outside the vocabulary") {
    vocab.bos_id = 5000;
    CHECK_THROWS_WITH(Tokenizer::from_vocab(vocab), Catch::Contains("bos_token id 5000"));
  }
  SECTION("token type outside 1..6") {
    vocab.types[3] = static_cast<lanec::TokenType>(9);
    CHECK_THROWS_WITH(Tokenizer::from_vocab(vocab),
                      Catch::Contains("tokenizer.ggml.token_type[3]: expected a token type 1..6, got 9"));
  }
  SECTION("add_eos_token without an eos id") {
    vocab.eos_id = -1;
    vocab.add_eos = true;
    CHECK_THROWS_WITH(Tokenizer::from_vocab(vocab), Catch::Contains("tokenizer.ggml.add_eos_token"));
  }
  SECTION("decode of an unknown id") {
    const auto tokenizer = Tokenizer::from_vocab(vocab);
    CHECK_THROWS_AS(tokenizer.decode({1, 259}), lanec::Error);
    CHECK_THROWS_WITH(tokenizer.decode({-1}), Catch::Contains("token id -1"));
  }
}

namespace {

// <unk>, <s>, </s>, 256 byte tokens, then normal pieces with their scores.
Vocab spm_vocab(const std::vector<std::pair<std::string, float>>& pieces) {
  Vocab vocab;
  vocab.model = "llama";
  vocab.pre = "default";
  vocab.tokens = {"<unk>", "<s>", "</s>"};
  vocab.types = {TokenType::Unknown, TokenType::Control, TokenType::Control};
  vocab.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab.tokens.push_back(name);
    vocab.types.push_back(TokenType::Byte);
    vocab.scores.push_back(0);
  }
  for (const auto& [piece, score] : pieces) {
    vocab.tokens.push_back(piece);
    vocab.types.push_back(TokenType::Normal);
    vocab.scores.push_back(score);
  }
  vocab.unk_id = 0;
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  vocab.add_bos = true;
  return vocab;
}

const std::string kMark = "\xE2\x96\x81";  // ▁

}  // namespace

TEST_CASE("spm: leading space, highest score merges first, byte fallback", "[tokenizer]") {
  const auto tokenizer = Tokenizer::from_vocab(
      spm_vocab({{kMark, -1}, {"a", -2}, {"b", -2}, {kMark + "a", -5}, {"ab", -3}, {kMark + "ab", -4}}));
  const int32_t mark = id_of(tokenizer, kMark);
  // "▁ab": "ab" (-3) outscores "▁a" (-5), so ▁ + ab; "▁ab" needs the pair ▁,ab, which merges next.
  CHECK(tokenizer.encode("ab", false) == Ids{id_of(tokenizer, kMark + "ab")});
  CHECK(tokenizer.encode("ab a", false) == Ids{id_of(tokenizer, kMark + "ab"), id_of(tokenizer, kMark + "a")});
  CHECK(tokenizer.encode("ab", true) == Ids{1, id_of(tokenizer, kMark + "ab")});
  // é is not a piece: its two UTF-8 bytes come out as <0xC3><0xA9>.
  CHECK(tokenizer.encode("\xC3\xA9", false) == Ids{mark, 3 + 0xC3, 3 + 0xA9});
}

TEST_CASE("spm: decode strips the prefix space once, after a leading BOS too", "[tokenizer]") {
  const auto tokenizer = Tokenizer::from_vocab(spm_vocab({{kMark, -1}, {"a", -2}, {kMark + "a", -1}}));
  for (const std::string text : {"a", " a", "a  a", "\xC3\xA9 a"}) {
    CHECK(tokenizer.decode(tokenizer.encode(text, false)) == text);
    CHECK(tokenizer.decode(tokenizer.encode(text, true), false) == text);
  }
  CHECK(tokenizer.decode(tokenizer.encode("a", true)) == "<s>a");
}

TEST_CASE("one tokenizer encodes on several threads at once", "[tokenizer]") {
  const auto tokenizer = Tokenizer::from_vocab(byte_level_vocab({"aa", "aaaa"}, {"a a", "aa aa"}));
  const std::string text = "aaaa aaa <|end|> 123 \xE4\xBD\xA0 aaaaaaaa\n";
  const Ids expected = tokenizer.encode(text);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (tokenizer.encode(text) != expected || tokenizer.decode(expected) != text) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}
