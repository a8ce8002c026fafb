// Byte-level BPE (tokenizer.ggml.model = "gpt2"): a word from the
// pre-tokenizer is mapped byte by byte through GPT-2's byte->Unicode table,
// starts as one symbol per byte, and adjacent symbols are merged lowest merge
// rank first (leftmost on ties) until no ranked pair is left.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lib/tokenizer/pre_tokenizer.h"
#include "lib/tokenizer/token_index.h"
#include "lib/tokenizer/vocab.h"

namespace lanec {

class BpeModel {
 public:
  // `vocab` has passed check_vocab (lib/tokenizer/vocab_check.h).
  BpeModel(const Vocab& vocab, const TokenIndex& index);
  // Appends the ids of `text` (a fragment free of special tokens).
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  // Bytes a normal token stands for.
  std::string decode_token(std::string_view token_text) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  const TokenIndex& index_;
  PreTokenizer pre_tokenizer_;
  bool whole_word_first_ = false;  // Llama 3's ignore_merges: a word that is a token is taken whole
  int32_t unk_id_ = -1;
  std::array<int32_t, 256> byte_id_{};  // token of each single mapped byte, -1 if none
  std::unordered_map<uint64_t, Merge> merges_;
};

}  // namespace lanec
