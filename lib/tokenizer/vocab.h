// A tokenizer vocabulary as GGUF stores it (tokenizer.ggml.* keys), plain
// data with no behaviour: lib/tokenizer/gguf_vocab.h fills it from a file,
// tests build it by hand, and Tokenizer::from_vocab validates and indexes it.
// Standard C++17 only: this header is also compiled into generated programs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lanec {

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

struct Vocab {
  std::string model;  // "gpt2" (byte-level BPE) or "llama" (SentencePiece)
  std::string pre;    // pre-tokenizer: "qwen2", "deepseek-r1-qwen", "llama-bpe", "gpt-2"; SPM: "default"
  std::vector<std::string> tokens;
  std::vector<TokenType> types;      // empty = all Normal; else one per token
  std::vector<std::string> merges;   // "A B", rank = index (gpt2 model)
  std::vector<float> scores;         // one per token (llama model); empty = all 0
  int32_t bos_id = -1;               // -1 = none
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  int32_t pad_id = -1;
  bool add_bos = false;              // encode(add_special=true) prepends bos_id
  bool add_eos = false;              // encode(add_special=true) appends eos_id
  bool add_space_prefix = true;      // llama model: a space goes in front of the text
};

}  // namespace lanec
