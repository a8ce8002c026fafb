#include "lib/synth/synth.h"

#include <cmath>
#include <variant>
#include <vector>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/synth/random_rows.h"
#include "lib/synth/synthetic_vocab.h"

namespace lanec {
namespace {

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> ne;  // ne[0] contiguous
  GgmlType type;
  ValueDraw draw;
};

class ModelBuilder {
 public:
  ModelBuilder(const SynthOptions& options, uint32_t n_vocab)
      : options_(options), shape_(options.shape), n_vocab_(n_vocab) {}

  std::vector<TensorSpec> tensors() {
    const uint64_t d = shape_.n_embd;
    matrix("token_embd.weight", d, n_vocab_);
    vector("output_norm.weight", d, norm_draw());
    if (!shape_.tied_output) matrix("output.weight", d, n_vocab_);
    const uint32_t layers = options_.layers.value_or(shape_.n_layer);
    for (uint32_t l = 0; l < layers; ++l) add_layer(l);
    return std::move(specs_);
  }

 private:
  static ValueDraw norm_draw() { return {1.0f, 0.05f}; }
  static ValueDraw bias_draw() { return {0.0f, 0.02f}; }

  void matrix(const std::string& name, uint64_t in, uint64_t out, uint64_t experts = 0) {
    std::vector<uint64_t> ne{in, out};
    if (experts) ne.push_back(experts);
    const float sigma = 1.0f / std::sqrt(static_cast<float>(in));
    specs_.push_back({name, ne, matrix_type(in), {0.0f, sigma}});
  }

  // Rows too short for a 256-element super-block fall back to q8_0, as
  // llama.cpp's quantizer does, so tiny shapes take every --type.
  GgmlType matrix_type(uint64_t in) const {
    if (ggml_row_bytes(options_.type, in)) return options_.type;
    return ggml_row_bytes(GgmlType::Q8_0, in) ? GgmlType::Q8_0 : GgmlType::F32;
  }
  void vector(const std::string& name, uint64_t n, ValueDraw draw) {
    specs_.push_back({name, {n}, GgmlType::F32, draw});
  }

  void add_layer(uint32_t l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const uint64_t d = shape_.n_embd;
    const uint64_t q = uint64_t{shape_.n_head} * shape_.head_dim;
    const uint64_t kv = uint64_t{shape_.n_head_kv} * shape_.head_dim;
    vector(p + "attn_norm.weight", d, norm_draw());
    matrix(p + "attn_q.weight", d, q);
    matrix(p + "attn_k.weight", d, kv);
    matrix(p + "attn_v.weight", d, kv);
    if (shape_.qkv_bias) {
      vector(p + "attn_q.bias", q, bias_draw());
      vector(p + "attn_k.bias", kv, bias_draw());
      vector(p + "attn_v.bias", kv, bias_draw());
    }
    if (shape_.qk_norm) {
      vector(p + "attn_q_norm.weight", shape_.head_dim, norm_draw());
      vector(p + "attn_k_norm.weight", shape_.head_dim, norm_draw());
    }
    matrix(p + "attn_output.weight", q, d);
    vector(p + "ffn_norm.weight", d, norm_draw());
    if (shape_.n_expert) {
      const uint64_t ff = shape_.n_ff_expert, e = shape_.n_expert;
      specs_.push_back({p + "ffn_gate_inp.weight", {d, e}, GgmlType::F32,
                        {0.0f, 1.0f / std::sqrt(static_cast<float>(d))}});
      matrix(p + "ffn_gate_exps.weight", d, ff, e);
      matrix(p + "ffn_up_exps.weight", d, ff, e);
      matrix(p + "ffn_down_exps.weight", ff, d, e);
    } else {
      matrix(p + "ffn_gate.weight", d, shape_.n_ff);
      matrix(p + "ffn_up.weight", d, shape_.n_ff);
      matrix(p + "ffn_down.weight", shape_.n_ff, d);
    }
  }

  const SynthOptions& options_;
  const ModelShape& shape_;
  uint32_t n_vocab_;
  std::vector<TensorSpec> specs_;
};

void set_hyperparameters(GgufWriter& w, const SynthOptions& options, uint32_t n_vocab) {
  const ModelShape& s = options.shape;
  const std::string a = s.arch + ".";
  w.set("general.architecture", GgufValue::string(s.arch));
  w.set("general.name", GgufValue::string(s.display_name));
  w.set("general.file_type", GgufValue::u32(ggml_traits(options.type).llama_file_type));
  w.set("general.quantization_version", GgufValue::u32(2));
  w.set(a + "vocab_size", GgufValue::u32(n_vocab));
  w.set(a + "context_length", GgufValue::u32(s.n_ctx));
  w.set(a + "embedding_length", GgufValue::u32(s.n_embd));
  w.set(a + "block_count", GgufValue::u32(options.layers.value_or(s.n_layer)));
  w.set(a + "feed_forward_length", GgufValue::u32(s.n_ff));
  w.set(a + "attention.head_count", GgufValue::u32(s.n_head));
  w.set(a + "attention.head_count_kv", GgufValue::u32(s.n_head_kv));
  w.set(a + "attention.key_length", GgufValue::u32(s.head_dim));
  w.set(a + "attention.value_length", GgufValue::u32(s.head_dim));
  w.set(a + "rope.dimension_count", GgufValue::u32(s.head_dim));
  w.set(a + "rope.freq_base", GgufValue::f32(s.rope_theta));
  w.set(a + "attention.layer_norm_rms_epsilon", GgufValue::f32(s.rms_eps));
  if (s.n_expert) {
    w.set(a + "expert_count", GgufValue::u32(s.n_expert));
    w.set(a + "expert_used_count", GgufValue::u32(s.n_expert_used));
    w.set(a + "expert_feed_forward_length", GgufValue::u32(s.n_ff_expert));
  }
}

// Every tokenizer.* key of another GGUF.
std::vector<std::pair<std::string, GgufValue>> read_vocab_metadata(const std::string& path) {
  const GgufFile vocab = GgufFile::open(path);
  vocab.get_array("tokenizer.ggml.tokens");  // an Error naming the file when absent
  std::vector<std::pair<std::string, GgufValue>> keys;
  for (const auto& [key, value] : vocab.metadata()) {
    if (key.rfind("tokenizer.", 0) == 0) keys.emplace_back(key, value);
  }
  return keys;
}

uint32_t vocab_size(const std::vector<std::pair<std::string, GgufValue>>& vocab) {
  for (const auto& [key, value] : vocab) {
    if (key == "tokenizer.ggml.tokens")
      return static_cast<uint32_t>(std::get<GgufArray>(value.data).items.size());
  }
  LANEC_ASSERT(false, "vocabulary without tokens");
  return 0;
}

void check_options(const SynthOptions& options) {
  if (!synth_can_write(options.type)) {
    throw Error(std::string("synth cannot write tensors of type ") +
                ggml_type_name(options.type) + "; use one of " +
                ggml_type_names_with(ggml_use::kSynth, ", ", GgmlSpelling::lower_case));
  }
  if (options.layers && *options.layers == 0) throw Error("--layers must be at least 1");
}

uint64_t stream_of(const std::string& name) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

GgufWriter build_synthetic_model(const SynthOptions& options) {
  check_options(options);
  const auto vocab = options.vocab_path ? read_vocab_metadata(*options.vocab_path)
                                        : synthetic_vocab_metadata(options.shape.n_vocab);
  const uint32_t n_vocab = vocab_size(vocab);
  // Metadata order: general and architecture keys first, tokenizer last.
  GgufWriter writer(3);
  set_hyperparameters(writer, options, n_vocab);
  for (const auto& [key, value] : vocab) writer.set(key, value);

  for (TensorSpec& spec : ModelBuilder(options, n_vocab).tensors()) {
    const uint64_t row_elems = spec.ne[0];
    const uint64_t row_bytes = *ggml_row_bytes(spec.type, row_elems);
    const uint64_t seed = options.seed, stream = stream_of(spec.name);
    const GgmlType type = spec.type;
    const ValueDraw draw = spec.draw;
    writer.add_tensor(spec.name, spec.ne, spec.type,
                      [=](uint8_t* dst, uint64_t first_row, uint64_t n_rows) {
                        for (uint64_t r = 0; r < n_rows; ++r) {
                          RowRng rng(seed, stream, first_row + r);
                          fill_random_row(type, draw, rng, dst + r * row_bytes, row_elems);
                        }
                      });
  }
  return writer;
}

void write_synthetic_model(const SynthOptions& options, const std::string& path,
                           const std::function<void(uint64_t, uint64_t)>& progress) {
  build_synthetic_model(options).write(path, options.threads, progress);
}

}  // namespace lanec
