// A small byte-level BPE vocabulary (tokenizer.ggml.model = gpt2, pre = qwen2)
// for synthetic models made without --vocab: 256 byte tokens, a few merges
// of common English pairs, the Qwen chat control tokens, and unused padding
// up to the requested size. Any text encodes (every byte has a token).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lib/gguf/gguf_value.h"

namespace lanec {

// tokenizer.* metadata for a vocabulary of exactly n_vocab tokens (n_vocab ≥ 300).
std::vector<std::pair<std::string, GgufValue>> synthetic_vocab_metadata(uint32_t n_vocab);

}  // namespace lanec
