// llama: pre-norm decoder, GQA attention with RoPE in the NORM layout
// (rotation of adjacent pairs: GGUF stores Q/K rows permuted for it), SwiGLU
// FFN, RMS norms; output head output.weight or, when absent, token_embd.
// No projection biases, no Q/K norms: the plain DecoderLayerSpec.
#include "lib/graph/recognize/decoder_parts.h"

namespace lanec {

Graph recognize_llama(const GgufFile& gguf, const RecognizeOptions& options) {
  DecoderLayerSpec spec;
  spec.rope = RopeLayout::norm;
  return recognize_dense_decoder(gguf, "llama", options, spec);
}

}  // namespace lanec
