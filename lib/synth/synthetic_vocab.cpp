#include "lib/synth/synthetic_vocab.h"

#include "lib/common/error.h"

namespace lanec {
namespace {

// UTF-8 of a code point below 0x800 (all bytes_to_unicode needs).
std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// GPT-2's byte → printable character map: printable Latin-1 bytes map to
// themselves, the other 68 bytes to U+0100 upwards in byte order.
std::vector<std::string> byte_symbols() {
  std::vector<std::string> symbols(256);
  uint32_t next_extra = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    symbols[b] = utf8(printable ? b : 0x100 + next_extra++);
  }
  return symbols;
}

const char* const kPairs[] = {"th", "he", "in", "er", "an", "re", "on", "at", "en", "nd", "ti",
                              "es", "or", "te", "of", "ed", "is", "it", "al", "ar", "st", "to",
                              "nt", "ng", "se", "ha", "as", "ou", "io", "le", "ve", "co", "me"};

}  // namespace

std::vector<std::pair<std::string, GgufValue>> synthetic_vocab_metadata(uint32_t n_vocab) {
  const std::vector<std::string> bytes = byte_symbols();
  std::vector<std::string> tokens(bytes.begin(), bytes.end());
  std::vector<int32_t> types(256, 1);
  std::vector<std::string> merges;
  const std::string space = bytes[' '];
  for (char c = 'a'; c <= 'z'; ++c) {
    merges.push_back(space + " " + std::string(1, c));
    tokens.push_back(space + std::string(1, c));
    types.push_back(1);
  }
  for (const char* pair : kPairs) {
    merges.push_back(std::string(1, pair[0]) + " " + std::string(1, pair[1]));
    tokens.emplace_back(pair);
    types.push_back(1);
  }
  const int32_t eos = static_cast<int32_t>(tokens.size());
  for (const char* control : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    tokens.emplace_back(control);
    types.push_back(3);
  }
  if (n_vocab < tokens.size()) {
    throw Error("synthetic vocabulary needs at least " + std::to_string(tokens.size()) +
                " tokens, the shape asks for " + std::to_string(n_vocab));
  }
  while (tokens.size() < n_vocab) {
    tokens.push_back("[PAD" + std::to_string(tokens.size()) + "]");
    types.push_back(5);
  }
  return {
      {"tokenizer.ggml.model", GgufValue::string("gpt2")},
      {"tokenizer.ggml.pre", GgufValue::string("qwen2")},
      {"tokenizer.ggml.tokens", GgufValue::string_array(tokens)},
      {"tokenizer.ggml.token_type", GgufValue::i32_array(types)},
      {"tokenizer.ggml.merges", GgufValue::string_array(merges)},
      {"tokenizer.ggml.eos_token_id", GgufValue::u32(static_cast<uint32_t>(eos))},
      {"tokenizer.ggml.padding_token_id", GgufValue::u32(static_cast<uint32_t>(eos))},
      {"tokenizer.ggml.add_bos_token", GgufValue::boolean(false)},
  };
}

}  // namespace lanec
