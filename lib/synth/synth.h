// `lanec synth`: a GGUF model with random weights at a real shape, complete
// enough (metadata, tokenizer, tensor names) that GGUF readers load it as its
// architecture. Weight scales keep activations finite through a forward pass:
// matrices have std 1/sqrt(fan_in), norms are near 1.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "lib/gguf/ggml_types.h"
#include "lib/synth/presets.h"

namespace lanec {

class GgufWriter;

struct SynthOptions {
  ModelShape shape;
  GgmlType type = GgmlType::Q8_0;     // matrices (and the embedding); 1-D tensors stay f32
  uint64_t seed = 1;
  std::optional<uint32_t> layers;     // override shape.n_layer
  std::optional<std::string> vocab_path;  // copy tokenizer.* metadata from this GGUF
  unsigned threads = 0;               // 0 = hardware concurrency
};

// Builds the writer for the model (cheap: tensors are filled at write time).
GgufWriter build_synthetic_model(const SynthOptions& options);

// Builds and writes; progress(done_bytes, total_bytes) may be empty.
void write_synthetic_model(const SynthOptions& options, const std::string& path,
                           const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace lanec
