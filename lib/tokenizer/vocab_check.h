// The rules a tokenizer vocabulary must follow, in one place for both ways a
// Vocab is made: load_vocab (read from a GGUF file) and Tokenizer::from_vocab
// (any Vocab, e.g. one built in memory). A broken rule throws lanec::Error as
// "[WHERE: ]KEY: WHY": WHERE is the file's path (empty for a Vocab built in
// memory), KEY the tokenizer.ggml.* key at fault (with [i] for one entry).
//
// Header-only: generated programs compile the tokenizer's .cpp files by name
// (docs/emitted-program.md), and a header leaves that list as it is.
#pragma once

#include <cstdint>
#include <string>

#include "lib/common/error.h"
#include "lib/tokenizer/pre_tokenizer.h"
#include "lib/tokenizer/vocab.h"

namespace lanec {

[[noreturn]] inline void fail_vocab(const std::string& where, const std::string& key, const std::string& why) {
  throw Error((where.empty() ? std::string() : where + ": ") + key + ": " + why);
}

// Throws unless `id` names one of n_tokens tokens; `what` names the id in the
// message ("bos_token id 7 is outside ..."). -1 is an error here: callers
// that read "none" as -1 skip it themselves.
inline void check_token_id(const std::string& where, const std::string& key, const std::string& what,
                           int64_t id, size_t n_tokens) {
  if (id < 0 || static_cast<uint64_t>(id) >= n_tokens) {
    fail_vocab(where, key,
               what + " id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(n_tokens) +
                   " tokens");
  }
}

// Throws unless `raw`, entry `index` of tokenizer.ggml.token_type, is a
// TokenType value (1..6). Takes the raw integer so a GGUF reader can check
// before narrowing it.
inline void check_token_type(const std::string& where, size_t index, int64_t raw) {
  if (raw < 1 || raw > 6) {
    fail_vocab(where, "tokenizer.ggml.token_type[" + std::to_string(index) + "]",
               "expected a token type 1..6, got " + std::to_string(raw));
  }
}

// Throws unless the model is one lanec tokenizes and, for gpt2, the
// pre-tokenizer is one it knows.
inline void check_tokenizer_model(const Vocab& vocab, const std::string& where) {
  if (vocab.model != "gpt2" && vocab.model != "llama") {
    fail_vocab(where, "tokenizer.ggml.model",
               "unknown tokenizer model '" + vocab.model + "'; supported: gpt2 (byte-level BPE), llama (SentencePiece)");
  }
  PreTokenizerKind kind{};
  if (vocab.model == "gpt2" && !pre_tokenizer_from_name(vocab.pre, kind)) {
    fail_vocab(where, "tokenizer.ggml.pre",
               "unknown pre-tokenizer '" + vocab.pre +
                   "' for the gpt2 (byte-level BPE) model; supported: qwen2, deepseek-r1-qwen, llama-bpe, gpt-2");
  }
}

// Throws unless the per-token arrays (types, scores) have one entry per token
// and every type is valid.
inline void check_per_token_arrays(const Vocab& vocab, const std::string& where) {
  const size_t n = vocab.tokens.size();
  if (!vocab.types.empty() && vocab.types.size() != n) {
    fail_vocab(where, "tokenizer.ggml.token_type",
               "expected " + std::to_string(n) + " entries (one per token), got " + std::to_string(vocab.types.size()));
  }
  for (size_t i = 0; i < vocab.types.size(); ++i) check_token_type(where, i, static_cast<int32_t>(vocab.types[i]));
  if (!vocab.scores.empty() && vocab.scores.size() != n) {
    fail_vocab(where, "tokenizer.ggml.scores",
               "expected " + std::to_string(n) + " entries (one per token), got " + std::to_string(vocab.scores.size()));
  }
}

// Throws unless every merge of a gpt2 vocabulary reads "LEFT RIGHT":
// byte-level token texts never contain a space (it maps to 'Ġ'), so the first
// space separates two non-empty sides. The llama model ignores merges.
inline void check_merges(const Vocab& vocab, const std::string& where) {
  if (vocab.model != "gpt2") return;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& merge = vocab.merges[rank];
    const size_t space = merge.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == merge.size()) {
      fail_vocab(where, "tokenizer.ggml.merges[" + std::to_string(rank) + "]",
                 "expected \"LEFT RIGHT\", got \"" + merge + "\"");
    }
  }
}

// Throws unless each special id is -1 (none) or a token, and BOS/EOS exist
// when the vocabulary asks for them to be added.
inline void check_special_ids(const Vocab& vocab, const std::string& where) {
  const struct {
    const char* key;
    const char* what;
    int32_t id;
  } specials[] = {
      {"tokenizer.ggml.bos_token_id", "bos_token", vocab.bos_id},
      {"tokenizer.ggml.eos_token_id", "eos_token", vocab.eos_id},
      {"tokenizer.ggml.unknown_token_id", "unknown_token", vocab.unk_id},
      {"tokenizer.ggml.padding_token_id", "padding_token", vocab.pad_id},
  };
  for (const auto& special : specials) {
    if (special.id != -1) check_token_id(where, special.key, special.what, special.id, vocab.tokens.size());
  }
  if (vocab.add_bos && vocab.bos_id < 0) {
    fail_vocab(where, "tokenizer.ggml.add_bos_token", "set, but there is no tokenizer.ggml.bos_token_id");
  }
  if (vocab.add_eos && vocab.eos_id < 0) {
    fail_vocab(where, "tokenizer.ggml.add_eos_token", "set, but there is no tokenizer.ggml.eos_token_id");
  }
}

// Throws unless the vocabulary has between 1 and INT32_MAX tokens (ids are int32).
inline void check_token_count(const Vocab& vocab, const std::string& where) {
  const size_t n = vocab.tokens.size();
  if (n == 0) fail_vocab(where, "tokenizer.ggml.tokens", "the vocabulary is empty");
  if (n > static_cast<size_t>(INT32_MAX)) {
    fail_vocab(where, "tokenizer.ggml.tokens", "too many tokens (" + std::to_string(n) + "; at most 2^31 - 1)");
  }
}

// The rules on the arrays (tokens, types, scores, merges), first broken one thrown.
inline void check_vocab_arrays(const Vocab& vocab, const std::string& where) {
  check_token_count(vocab, where);
  check_per_token_arrays(vocab, where);
  check_merges(vocab, where);
}

// Every rule above, first broken one thrown: model and pre-tokenizer, arrays,
// special ids. A Vocab that passes is safe to index by any id below its size.
inline void check_vocab(const Vocab& vocab, const std::string& where = std::string()) {
  check_tokenizer_model(vocab, where);
  check_vocab_arrays(vocab, where);
  check_special_ids(vocab, where);
}

}  // namespace lanec
