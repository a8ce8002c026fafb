// SentencePiece-style BPE (tokenizer.ggml.model = "llama"): spaces become
// '▁' (U+2581), the text starts as one symbol per UTF-8 character, and the
// adjacent pair whose concatenation is the highest-scoring token is merged
// first (leftmost on ties). A symbol left without a token is spelled with the
// byte-fallback tokens <0xXX>, or the unknown token if there are none.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/tokenizer/token_index.h"
#include "lib/tokenizer/vocab.h"

namespace lanec {

class SpmModel {
 public:
  SpmModel(const Vocab& vocab, const TokenIndex& index);
  // Appends the ids of `text` (a fragment free of special tokens). With
  // `space_prefix` a space is put in front first, as SentencePiece does.
  void encode(std::string_view text, bool space_prefix, std::vector<int32_t>& out) const;
  // Text a normal token stands for ('▁' back to ' ').
  static std::string decode_token(std::string_view token_text);
  // The byte a byte-fallback token "<0xXX>" stands for; false if not one.
  static bool parse_byte_token(std::string_view token_text, uint8_t& byte);

 private:
  const Vocab& vocab_;
  const TokenIndex& index_;
  std::array<int32_t, 256> byte_id_{};  // <0xXX> token of each byte, -1 if none
};

}  // namespace lanec
