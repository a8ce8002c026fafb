// Regex pre-tokenizers of byte-level BPE vocabularies: split text into the
// "words" that BPE merges within. The patterns are the Unicode-category
// regexes the original tokenizers define, run by PCRE2 with UTF and UCP
// (std::regex cannot do \p{L}). Bytes that are not valid UTF-8 never match;
// each such run becomes a word of its own so no byte is ever lost.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lanec {

enum class PreTokenizerKind {
  Gpt2,    // 's|'t|... | ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Llama3,  // case-insensitive contractions, digits in groups of up to 3
  Qwen2,   // as Llama3 but digits one at a time
};

// Maps a tokenizer.ggml.pre name to its kind; false when unknown.
bool pre_tokenizer_from_name(std::string_view name, PreTokenizerKind& kind);
const char* pre_tokenizer_pattern(PreTokenizerKind kind);

class PreTokenizer {
 public:
  explicit PreTokenizer(PreTokenizerKind kind);
  // Appends the words of `text`, in order; together they are exactly `text`.
  void split(std::string_view text, std::vector<std::string_view>& words) const;

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace lanec
