// qwen2 and qwen3: llama's decoder with RoPE in the NEOX layout (rotation of
// the two halves of each head) and
//  - qwen2: biases on the Q, K and V projections (added before RoPE);
//  - qwen3: no biases, but a per-head RMS norm of Q and of K (weights
//    [head_dim], shared by all heads) before RoPE.
// Qwen3's head size comes from attention.key_length and may differ from
// n_embd / n_head (Qwen3-4B); the recognizer never assumes they match.
#include "lib/graph/recognize/decoder_parts.h"

namespace lanec {

Graph recognize_qwen2(const GgufFile& gguf, const RecognizeOptions& options) {
  DecoderLayerSpec spec;
  spec.rope = RopeLayout::neox;
  spec.qkv_bias = true;
  return recognize_dense_decoder(gguf, "qwen2", options, spec);
}

Graph recognize_qwen3(const GgufFile& gguf, const RecognizeOptions& options) {
  DecoderLayerSpec spec;
  spec.rope = RopeLayout::neox;
  spec.qk_norm = true;
  return recognize_dense_decoder(gguf, "qwen3", options, spec);
}

}  // namespace lanec
