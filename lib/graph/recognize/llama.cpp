// llama: pre-norm decoder, GQA attention with RoPE in the NORM layout
// (rotation of adjacent pairs: GGUF stores Q/K rows permuted for it), SwiGLU
// FFN, RMS norms; output head output.weight or, when absent, token_embd.
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/decoder_parts.h"

namespace lanec {

Graph recognize_llama(const GgufFile& gguf, const RecognizeOptions& options) {
  DecoderBuilder m(gguf, read_decoder_hparams(gguf, "llama", options));
  const DecoderHparams& hp = m.hp();
  const int64_t d = hp.n_embd, hd = hp.head_dim;
  const int64_t q_dim = hp.n_head * hd, kv_dim = hp.n_head_kv * hd;

  TensorId x = m.embed();
  for (int l = 0; l < static_cast<int>(hp.n_layer); ++l) {
    if (m.has_tensor(m.blk(l, "ffn_gate_inp.weight")))
      throw Error(gguf.path() + ": " + m.blk(l, "ffn_gate_inp.weight") +
                  ": llama mixture-of-experts layers are not supported yet");
    TensorId attn_norm = m.rms_norm(layer_name("attn_norm", l), x,
                                    m.weight(m.blk(l, "attn_norm.weight"), {d}));
    TensorId q = m.matmul(layer_name("q", l), attn_norm,
                          m.weight(m.blk(l, "attn_q.weight"), {d, q_dim}), {hp.n_head, hd});
    TensorId k = m.matmul(layer_name("k", l), attn_norm,
                          m.weight(m.blk(l, "attn_k.weight"), {d, kv_dim}), {hp.n_head_kv, hd});
    TensorId v = m.matmul(layer_name("v", l), attn_norm,
                          m.weight(m.blk(l, "attn_v.weight"), {d, kv_dim}), {hp.n_head_kv, hd});
    TensorId q_rope = m.rope(layer_name("q_rope", l), q, RopeLayout::norm);
    TensorId k_rope = m.rope(layer_name("k_rope", l), k, RopeLayout::norm);
    TensorId attn = m.cache_and_attend(l, q_rope, k_rope, v);
    TensorId attn_out = m.matmul(layer_name("attn_out", l), attn,
                                 m.weight(m.blk(l, "attn_output.weight"), {q_dim, d}), {d});
    TensorId attn_res = m.add(layer_name("attn_res", l), x, attn_out);
    TensorId ffn_norm = m.rms_norm(layer_name("ffn_norm", l), attn_res,
                                   m.weight(m.blk(l, "ffn_norm.weight"), {d}));
    TensorId ffn_out = m.swiglu_ffn(l, ffn_norm);
    x = m.add(layer_name("l_out", l), attn_res, ffn_out);
  }
  return m.finish_with_head(x);
}

}  // namespace lanec
