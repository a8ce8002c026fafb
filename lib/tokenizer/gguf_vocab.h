// Reads a tokenizer vocabulary from a GGUF file's tokenizer.ggml.* keys.
// Kept apart from the tokenizer so generated programs can embed the
// tokenizer without the GGUF reader.
#pragma once

#include "lib/tokenizer/vocab.h"

namespace lanec {

class GgufFile;

// Throws lanec::Error naming the file and key when a required key is
// missing, has the wrong type or size, or names an unknown model or
// pre-tokenizer. Works on vocabulary-only files (no tensors).
Vocab load_vocab(const GgufFile& file);

}  // namespace lanec
