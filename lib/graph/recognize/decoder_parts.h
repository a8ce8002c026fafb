// Building blocks shared by the dense decoder recognizers (llama.cpp,
// qwen.cpp): hyperparameters read from GGUF metadata with the defaults
// llama.cpp applies, shape-checked weight lookups, and the pieces every dense
// decoder step has (embedding, KV cache write + attention, SwiGLU FFN,
// output head), and the one layer they all build from them. Each architecture
// file states how its layer differs (a DecoderLayerSpec), so the differences
// between architectures stay visible in one place each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/graph/builder.h"
#include "lib/graph/recognize/recognize.h"

namespace lanec {

class GgufFile;

struct DecoderHparams {
  std::string arch;
  int64_t n_vocab = 0;
  int64_t n_ctx = 0;        // cache rows (context_length, capped by max_ctx)
  int64_t n_ctx_train = 0;  // context_length
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;     // attention.key_length (default n_embd / n_head)
  int64_t n_ff = 0;
  int64_t n_rot = 0;        // rope.dimension_count (default head_dim)
  double rope_freq_base = 10000.0;
  double rope_freq_scale = 1.0;
  double rms_eps = 1e-5;
};

// Reads `{arch}.*` hyperparameters; missing required keys and inconsistent
// values are Errors naming the key.
DecoderHparams read_decoder_hparams(const GgufFile& gguf, const std::string& arch,
                                    const RecognizeOptions& options);

enum class RopeLayout { norm, neox };  // adjacent pairs | halves

// How one dense decoder's layer differs from another's; all else (pre-norm,
// GQA attention over the KV cache, SwiGLU FFN, residuals) is shared.
struct DecoderLayerSpec {
  RopeLayout rope = RopeLayout::norm;
  bool qkv_bias = false;  // Q, K, V projections add blk.L.attn_{q,k,v}.bias before RoPE
  bool qk_norm = false;   // per-head RMS norm of Q and K (blk.L.attn_{q,k}_norm.weight, [head_dim]) before RoPE
};

// Builder plus the GGUF it reads weights from.
class DecoderBuilder {
 public:
  DecoderBuilder(const GgufFile& gguf, DecoderHparams hp);

  GraphBuilder& b() { return builder_; }
  const DecoderHparams& hp() const { return hp_; }

  // A constant for the GGUF tensor `name`, whose ne must equal `ne`
  // (innermost first). Errors name the tensor and both shapes.
  TensorId weight(const std::string& name, const std::vector<int64_t>& ne);
  std::optional<TensorId> optional_weight(const std::string& name,
                                          const std::vector<int64_t>& ne);
  bool has_tensor(const std::string& name) const;

  TensorId token() const { return token_; }
  TensorId pos() const { return pos_; }

  // token_embd[token] -> [n_embd].
  TensorId embed();
  TensorId rms_norm(const std::string& out, TensorId x, TensorId weight);
  TensorId head_rms_norm(const std::string& out, TensorId x, TensorId weight);
  TensorId matmul(const std::string& out, TensorId x, TensorId w, std::vector<int64_t> shape);
  TensorId add(const std::string& out, TensorId a, TensorId b);
  TensorId reshape(const std::string& out, TensorId x, std::vector<int64_t> shape);
  TensorId rope(const std::string& out, TensorId x, RopeLayout layout);
  // Layer l's projection of x to heads x head_dim (GGUF weight
  // blk.L.<gguf_stem>.weight, node `base`); with `bias`, the flat product
  // plus blk.L.<gguf_stem>.bias, then viewed as heads.
  TensorId project(int layer, const std::string& base, const std::string& gguf_stem, TensorId x,
                   int64_t heads, bool bias);
  // Writes k and v at pos into layer l's caches, then attends q over them.
  TensorId cache_and_attend(int layer, TensorId q, TensorId k, TensorId v);
  // SwiGLU FFN of layer l on the normed input: down(silu(gate x) * up x).
  TensorId swiglu_ffn(int layer, TensorId x);
  // The rest of a pre-norm decoder layer once q and k are rotated: cache
  // write and attention, output projection, residual, FFN norm, SwiGLU FFN,
  // residual. Returns the layer's output (the next residual stream).
  TensorId attention_and_ffn(int layer, TensorId x, TensorId q_rope, TensorId k_rope, TensorId v);
  // One whole pre-norm decoder layer on the residual stream x, shaped by
  // `spec`: attention norm, Q/K/V projections, optional Q/K norms, RoPE, then
  // attention_and_ffn. Mixture-of-experts layers are an Error naming the tensor.
  TensorId decoder_layer(int layer, TensorId x, const DecoderLayerSpec& spec);
  // output_norm, output head (output.weight or, when absent, token_embd),
  // logits and next_token outputs. Returns the finished, verified graph.
  Graph finish_with_head(TensorId x);

  std::string blk(int layer, const std::string& suffix) const {
    return "blk." + std::to_string(layer) + "." + suffix;
  }

 private:
  const GgufFile& gguf_;
  DecoderHparams hp_;
  GraphBuilder builder_;
  TensorId token_ = 0;
  TensorId pos_ = 0;
  std::optional<TensorId> rope_freqs_;
};

std::string ne_to_string(const std::vector<int64_t>& ne);

// The step graph of a dense decoder `arch` whose every layer is
// decoder_layer(spec): embedding, the layers, output head.
Graph recognize_dense_decoder(const GgufFile& gguf, const std::string& arch,
                              const RecognizeOptions& options, const DecoderLayerSpec& spec);

Graph recognize_llama(const GgufFile& gguf, const RecognizeOptions& options);
Graph recognize_qwen2(const GgufFile& gguf, const RecognizeOptions& options);
Graph recognize_qwen3(const GgufFile& gguf, const RecognizeOptions& options);

}  // namespace lanec
