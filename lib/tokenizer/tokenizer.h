// lanec's tokenizer: text <-> token ids for the two GGUF tokenizer models
// lanec supports, byte-level BPE ("gpt2" with the qwen2 / deepseek-r1-qwen,
// llama-bpe and gpt-2 pre-tokenizers) and SentencePiece-style BPE ("llama").
// One implementation, used by the compiler and compiled into the host side of
// generated programs, hence standard C++17 + PCRE2 only.
//
// Encoding first splits out special tokens (control and user-defined tokens,
// longest match at each position), then runs the model over each piece of
// text in between. Decoding concatenates each token's bytes. A Tokenizer is
// immutable and cheap to copy; encode/decode may run on several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/tokenizer/vocab.h"

namespace lanec {

class Tokenizer {
 public:
  // Validates and indexes `vocab`. Throws lanec::Error naming what is wrong
  // (unknown model or pre-tokenizer, array sizes that disagree, special ids
  // out of range, malformed merges).
  static Tokenizer from_vocab(Vocab vocab);

  // add_special: put BOS/EOS around the ids when the vocabulary asks for them
  // (add_bos / add_eos). parse_special: text spelling a control token (e.g.
  // "<|im_start|>") becomes that token; user-defined tokens are always
  // recognized, as in the reference tokenizers.
  std::vector<int32_t> encode(std::string_view text, bool add_special = true,
                              bool parse_special = true) const;

  // The bytes the ids stand for. Control and unknown/unused tokens are
  // written as their text when render_special, else left out. For
  // SentencePiece vocabularies the space that encode puts in front of the
  // text is taken off the first piece (after a leading BOS). Throws
  // lanec::Error on an id outside the vocabulary.
  std::string decode(const std::vector<int32_t>& ids, bool render_special = true) const;

  // The token's text as stored in the vocabulary (e.g. "Ġthe", "▁the").
  // Throws lanec::Error on an id outside the vocabulary.
  const std::string& token_text(int32_t id) const;
  // The bytes one token decodes to (e.g. " the"); special tokens give their text.
  std::string token_piece(int32_t id) const;
  // -1 when no token has exactly this (vocabulary) text.
  int32_t find_token(std::string_view text) const;

  const Vocab& vocab() const;
  int32_t n_tokens() const;
  int32_t bos_id() const;
  int32_t eos_id() const;
  // True for control tokens: the ones generation stops at or that frame a chat.
  bool is_control(int32_t id) const;

 private:
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace lanec
