// qwen2 and qwen3: llama's decoder with RoPE in the NEOX layout (rotation of
// the two halves of each head) and
//  - qwen2: biases on the Q, K and V projections (added before RoPE);
//  - qwen3: no biases, but a per-head RMS norm of Q and of K (weights
//    [head_dim], shared by all heads) before RoPE.
// Qwen3's head size comes from attention.key_length and may differ from
// n_embd / n_head (Qwen3-4B); the recognizer never assumes they match.
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/decoder_parts.h"

namespace lanec {
namespace {

struct QwenFeatures {
  bool qkv_bias = false;
  bool qk_norm = false;
};

// A projection to `heads` x head_dim, with the bias added (as a flat vector,
// then viewed as heads) when the architecture has one.
TensorId project(DecoderBuilder& m, int l, const std::string& base, const std::string& gguf_stem,
                 TensorId x, int64_t heads, bool bias) {
  const DecoderHparams& hp = m.hp();
  const int64_t width = heads * hp.head_dim;
  TensorId w = m.weight(m.blk(l, gguf_stem + ".weight"), {hp.n_embd, width});
  if (!bias) return m.matmul(layer_name(base, l), x, w, {heads, hp.head_dim});
  TensorId flat = m.matmul(layer_name(base + "_flat", l), x, w, {width});
  TensorId b = m.weight(m.blk(l, gguf_stem + ".bias"), {width});
  TensorId biased = m.add(layer_name(base + "_bias", l), flat, b);
  return m.reshape(layer_name(base, l), biased, {heads, hp.head_dim});
}

Graph recognize_qwen(const GgufFile& gguf, const std::string& arch,
                     const RecognizeOptions& options, QwenFeatures features) {
  DecoderBuilder m(gguf, read_decoder_hparams(gguf, arch, options));
  const DecoderHparams& hp = m.hp();
  const int64_t d = hp.n_embd, hd = hp.head_dim;
  const int64_t q_dim = hp.n_head * hd;

  TensorId x = m.embed();
  for (int l = 0; l < static_cast<int>(hp.n_layer); ++l) {
    if (m.has_tensor(m.blk(l, "ffn_gate_inp.weight")))
      throw Error(gguf.path() + ": " + m.blk(l, "ffn_gate_inp.weight") + ": " + arch +
                  " mixture-of-experts layers are not supported by this recognizer");
    TensorId attn_norm = m.rms_norm(layer_name("attn_norm", l), x,
                                    m.weight(m.blk(l, "attn_norm.weight"), {d}));
    TensorId q = project(m, l, "q", "attn_q", attn_norm, hp.n_head, features.qkv_bias);
    TensorId k = project(m, l, "k", "attn_k", attn_norm, hp.n_head_kv, features.qkv_bias);
    TensorId v = project(m, l, "v", "attn_v", attn_norm, hp.n_head_kv, features.qkv_bias);
    if (features.qk_norm) {
      q = m.head_rms_norm(layer_name("q_norm", l), q, m.weight(m.blk(l, "attn_q_norm.weight"), {hd}));
      k = m.head_rms_norm(layer_name("k_norm", l), k, m.weight(m.blk(l, "attn_k_norm.weight"), {hd}));
    }
    TensorId q_rope = m.rope(layer_name("q_rope", l), q, RopeLayout::neox);
    TensorId k_rope = m.rope(layer_name("k_rope", l), k, RopeLayout::neox);
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

}  // namespace

Graph recognize_qwen2(const GgufFile& gguf, const RecognizeOptions& options) {
  return recognize_qwen(gguf, "qwen2", options, {/*qkv_bias=*/true, /*qk_norm=*/false});
}

Graph recognize_qwen3(const GgufFile& gguf, const RecognizeOptions& options) {
  return recognize_qwen(gguf, "qwen3", options, {/*qkv_bias=*/false, /*qk_norm=*/true});
}

}  // namespace lanec
