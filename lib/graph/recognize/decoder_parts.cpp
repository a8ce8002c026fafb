#include "lib/graph/recognize/decoder_parts.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"

namespace lanec {
namespace {

// A count that GGUF may store as a scalar or as a per-layer array; the dense
// recognizers need one value for all layers.
int64_t read_uniform_count(const GgufFile& gguf, const std::string& key) {
  const GgufValue* value = gguf.find(key);
  if (!value) throw Error(gguf.path() + ": missing metadata key " + key);
  if (value->type != GgufValueType::ARRAY) return static_cast<int64_t>(gguf.get_uint(key));
  std::vector<int64_t> per_layer = gguf.get_int_array(key);
  if (per_layer.empty()) throw Error(gguf.path() + ": " + key + ": expected a count, got an empty array");
  for (int64_t v : per_layer)
    if (v != per_layer.front())
      throw Error(gguf.path() + ": " + key +
                  ": expected the same value for every layer (per-layer counts are not "
                  "supported by this recognizer), got " +
                  std::to_string(per_layer.front()) + " and " + std::to_string(v));
  return per_layer.front();
}

// GGUF stores eps and rope bases as f32; widen them to the shortest decimal
// that reads back to the same float (1e-06, not 9.99999997e-07), so printed
// graphs show the values the model's config has.
double f32_key_to_double(double widened) {
  const float f = static_cast<float>(widened);
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
  }
  return widened;
}

int64_t positive(const GgufFile& gguf, const std::string& key, int64_t value) {
  if (value < 1)
    throw Error(gguf.path() + ": " + key + ": expected a value >= 1, got " + std::to_string(value));
  return value;
}

}  // namespace

std::string ne_to_string(const std::vector<int64_t>& ne) { return shape_to_string(ne); }

DecoderHparams read_decoder_hparams(const GgufFile& gguf, const std::string& arch,
                                    const RecognizeOptions& options) {
  const std::string a = arch + ".";
  DecoderHparams hp;
  hp.arch = arch;
  hp.n_ctx_train = positive(gguf, a + "context_length",
                            static_cast<int64_t>(gguf.get_uint(a + "context_length")));
  hp.n_embd = positive(gguf, a + "embedding_length",
                       static_cast<int64_t>(gguf.get_uint(a + "embedding_length")));
  hp.n_layer = positive(gguf, a + "block_count",
                        static_cast<int64_t>(gguf.get_uint(a + "block_count")));
  hp.n_head = positive(gguf, a + "attention.head_count",
                       read_uniform_count(gguf, a + "attention.head_count"));
  hp.n_head_kv = gguf.has(a + "attention.head_count_kv")
                     ? positive(gguf, a + "attention.head_count_kv",
                                read_uniform_count(gguf, a + "attention.head_count_kv"))
                     : hp.n_head;
  hp.n_ff = positive(gguf, a + "feed_forward_length",
                     read_uniform_count(gguf, a + "feed_forward_length"));
  if (hp.n_head % hp.n_head_kv != 0)
    throw Error(gguf.path() + ": " + a + "attention.head_count_kv: expected a divisor of the " +
                std::to_string(hp.n_head) + " attention heads, got " +
                std::to_string(hp.n_head_kv));
  // Head size: key_length when present (Qwen3-4B: 32 heads x 128 != 2560).
  const int64_t default_head_dim = hp.n_embd / hp.n_head;
  hp.head_dim = positive(gguf, a + "attention.key_length",
                         static_cast<int64_t>(gguf.get_uint_or(
                             a + "attention.key_length", static_cast<uint64_t>(default_head_dim))));
  const int64_t value_dim = static_cast<int64_t>(gguf.get_uint_or(
      a + "attention.value_length", static_cast<uint64_t>(hp.head_dim)));
  if (value_dim != hp.head_dim)
    throw Error(gguf.path() + ": " + a + "attention.value_length: expected " +
                std::to_string(hp.head_dim) + " (equal to attention.key_length), got " +
                std::to_string(value_dim));
  hp.n_rot = static_cast<int64_t>(
      gguf.get_uint_or(a + "rope.dimension_count", static_cast<uint64_t>(hp.head_dim)));
  if (hp.n_rot < 2 || hp.n_rot % 2 != 0 || hp.n_rot > hp.head_dim)
    throw Error(gguf.path() + ": " + a + "rope.dimension_count: expected an even value in [2, " +
                std::to_string(hp.head_dim) + "], got " + std::to_string(hp.n_rot));
  hp.rope_freq_base = f32_key_to_double(gguf.get_float_or(a + "rope.freq_base", 10000.0));
  const std::string scaling = gguf.get_string_or(a + "rope.scaling.type", "none");
  if (scaling == "linear") {
    const double factor = gguf.get_float_or(a + "rope.scaling.factor", 1.0);
    if (!(factor > 0.0))
      throw Error(gguf.path() + ": " + a + "rope.scaling.factor: expected a value > 0");
    hp.rope_freq_scale = 1.0 / f32_key_to_double(factor);
  } else if (scaling != "none") {
    throw Error(gguf.path() + ": " + a + "rope.scaling.type: expected \"none\" or \"linear\", got \"" +
                scaling + "\" (not supported yet)");
  }
  hp.rms_eps = f32_key_to_double(gguf.get_float_or(a + "attention.layer_norm_rms_epsilon", 1e-5));
  if (!(hp.rms_eps > 0.0))
    throw Error(gguf.path() + ": " + a + "attention.layer_norm_rms_epsilon: expected a value > 0");

  const GgufTensorInfo* embd = gguf.find_tensor("token_embd.weight");
  if (!embd || embd->ne.size() != 2)
    throw Error(gguf.path() + ": token_embd.weight: expected a matrix with ne [" +
                std::to_string(hp.n_embd) + ", n_vocab], got " +
                (embd ? "ne " + embd->shape_string() : std::string("no such tensor")));
  hp.n_vocab = static_cast<int64_t>(embd->ne[1]);

  hp.n_ctx = hp.n_ctx_train;
  if (options.max_ctx > 0 && options.max_ctx < hp.n_ctx) hp.n_ctx = options.max_ctx;
  return hp;
}

DecoderBuilder::DecoderBuilder(const GgufFile& gguf, DecoderHparams hp)
    : gguf_(gguf), hp_(std::move(hp)) {
  builder_.set_metadata("arch", hp_.arch);
  builder_.set_metadata("n_vocab", hp_.n_vocab);
  builder_.set_metadata("n_ctx", hp_.n_ctx);
  builder_.set_metadata("n_ctx_train", hp_.n_ctx_train);
  builder_.set_metadata("n_embd", hp_.n_embd);
  builder_.set_metadata("n_layer", hp_.n_layer);
  builder_.set_metadata("n_head", hp_.n_head);
  builder_.set_metadata("n_head_kv", hp_.n_head_kv);
  builder_.set_metadata("head_dim", hp_.head_dim);
  builder_.set_metadata("n_ff", hp_.n_ff);
  token_ = builder_.param("token", GgmlType::I32, {1});
  pos_ = builder_.param("pos", GgmlType::I32, {1});
  // Llama 3.1-style per-frequency rope factors, when the model has them.
  rope_freqs_ = optional_weight("rope_freqs.weight", {hp_.n_rot / 2});
}

bool DecoderBuilder::has_tensor(const std::string& name) const {
  return gguf_.find_tensor(name) != nullptr;
}

std::optional<TensorId> DecoderBuilder::optional_weight(const std::string& name,
                                                        const std::vector<int64_t>& ne) {
  if (!has_tensor(name)) return std::nullopt;
  return weight(name, ne);
}

TensorId DecoderBuilder::weight(const std::string& name, const std::vector<int64_t>& ne) {
  std::vector<int64_t> shape(ne.rbegin(), ne.rend());
  const GgufTensorInfo* info = gguf_.find_tensor(name);
  if (!info)
    throw Error(gguf_.path() + ": missing tensor " + name + " (expected shape " +
                shape_to_string(shape) + " (ne " + ne_to_string(ne) + ") for architecture " +
                hp_.arch + ")");
  std::vector<int64_t> got_ne(info->ne.begin(), info->ne.end());
  if (got_ne != ne) {
    std::vector<int64_t> got_shape(got_ne.rbegin(), got_ne.rend());
    throw Error(gguf_.path() + ": " + name + ": expected shape " + shape_to_string(shape) +
                " (ne " + ne_to_string(ne) + "), got " + shape_to_string(got_shape) + " (ne " +
                ne_to_string(got_ne) + ")");
  }
  if (!elem_type_name(info->type))
    throw Error(gguf_.path() + ": " + name + ": element type " + ggml_type_name(info->type) +
                " is not a weight format the step graph holds");
  if (auto existing = builder_.graph().find(name)) return *existing;  // tied head
  return builder_.constant(name, info->type, shape, name);
}

TensorId DecoderBuilder::embed() {
  TensorId table = weight("token_embd.weight", {hp_.n_embd, hp_.n_vocab});
  return builder_.apply(OpKind::embed_get_rows, "inp_embd", {hp_.n_embd}, {table, token_});
}

TensorId DecoderBuilder::rms_norm(const std::string& out, TensorId x, TensorId weight) {
  return builder_.apply_like(OpKind::rms_norm, out, {x, weight}, {{"eps", hp_.rms_eps}});
}

TensorId DecoderBuilder::head_rms_norm(const std::string& out, TensorId x, TensorId weight) {
  return builder_.apply_like(OpKind::head_rms_norm, out, {x, weight}, {{"eps", hp_.rms_eps}});
}

TensorId DecoderBuilder::matmul(const std::string& out, TensorId x, TensorId w,
                                std::vector<int64_t> shape) {
  return builder_.apply(OpKind::matmul, out, std::move(shape), {x, w});
}

TensorId DecoderBuilder::add(const std::string& out, TensorId a, TensorId b) {
  return builder_.apply_like(OpKind::add, out, {a, b});
}

TensorId DecoderBuilder::reshape(const std::string& out, TensorId x, std::vector<int64_t> shape) {
  return builder_.apply(OpKind::reshape, out, std::move(shape), {x});
}

TensorId DecoderBuilder::rope(const std::string& out, TensorId x, RopeLayout layout) {
  Attrs attrs{{"mode", std::string(layout == RopeLayout::norm ? "norm" : "neox")},
              {"n_rot", hp_.n_rot},
              {"freq_base", hp_.rope_freq_base}};
  if (hp_.rope_freq_scale != 1.0) attrs["freq_scale"] = hp_.rope_freq_scale;
  std::vector<TensorId> inputs{x, pos_};
  if (rope_freqs_) inputs.push_back(*rope_freqs_);
  return builder_.apply_like(OpKind::rope, out, inputs, attrs);
}

TensorId DecoderBuilder::project(int layer, const std::string& base, const std::string& gguf_stem,
                                 TensorId x, int64_t heads, bool bias) {
  const int64_t width = heads * hp_.head_dim;
  TensorId w = weight(blk(layer, gguf_stem + ".weight"), {hp_.n_embd, width});
  if (!bias) return matmul(layer_name(base, layer), x, w, {heads, hp_.head_dim});
  TensorId flat = matmul(layer_name(base + "_flat", layer), x, w, {width});
  TensorId b = weight(blk(layer, gguf_stem + ".bias"), {width});
  TensorId biased = add(layer_name(base + "_bias", layer), flat, b);
  return reshape(layer_name(base, layer), biased, {heads, hp_.head_dim});
}

TensorId DecoderBuilder::cache_and_attend(int layer, TensorId q, TensorId k, TensorId v) {
  const std::vector<int64_t> cache_shape{hp_.n_ctx, hp_.n_head_kv, hp_.head_dim};
  TensorId k_cache = builder_.state(layer_name("cache_k", layer), GgmlType::F32, cache_shape);
  TensorId v_cache = builder_.state(layer_name("cache_v", layer), GgmlType::F32, cache_shape);
  builder_.op(OpKind::kv_write, {k, pos_}, {k_cache});
  builder_.op(OpKind::kv_write, {v, pos_}, {v_cache});
  const double scale = 1.0 / std::sqrt(static_cast<double>(hp_.head_dim));
  return builder_.apply(OpKind::attention, layer_name("attn", layer), {hp_.n_head, hp_.head_dim},
                        {q, k_cache, v_cache, pos_}, {{"scale", scale}});
}

TensorId DecoderBuilder::swiglu_ffn(int layer, TensorId x) {
  const int64_t d = hp_.n_embd, ff = hp_.n_ff;
  TensorId w_gate = weight(blk(layer, "ffn_gate.weight"), {d, ff});
  TensorId w_up = weight(blk(layer, "ffn_up.weight"), {d, ff});
  TensorId w_down = weight(blk(layer, "ffn_down.weight"), {ff, d});
  TensorId gate = matmul(layer_name("ffn_gate", layer), x, w_gate, {ff});
  TensorId up = matmul(layer_name("ffn_up", layer), x, w_up, {ff});
  TensorId act = builder_.apply_like(OpKind::swiglu, layer_name("ffn_act", layer), {gate, up});
  return matmul(layer_name("ffn_out", layer), act, w_down, {d});
}

TensorId DecoderBuilder::attention_and_ffn(int l, TensorId x, TensorId q_rope, TensorId k_rope,
                                           TensorId v) {
  const int64_t d = hp_.n_embd, q_dim = hp_.n_head * hp_.head_dim;
  TensorId attn = cache_and_attend(l, q_rope, k_rope, v);
  TensorId attn_out = matmul(layer_name("attn_out", l), attn,
                             weight(blk(l, "attn_output.weight"), {q_dim, d}), {d});
  TensorId attn_res = add(layer_name("attn_res", l), x, attn_out);
  TensorId ffn_norm = rms_norm(layer_name("ffn_norm", l), attn_res,
                               weight(blk(l, "ffn_norm.weight"), {d}));
  TensorId ffn_out = swiglu_ffn(l, ffn_norm);
  return add(layer_name("l_out", l), attn_res, ffn_out);
}

TensorId DecoderBuilder::decoder_layer(int l, TensorId x, const DecoderLayerSpec& spec) {
  const std::string router = blk(l, "ffn_gate_inp.weight");
  if (has_tensor(router))
    throw Error(gguf_.path() + ": " + router + ": " + hp_.arch +
                " mixture-of-experts layers are not supported by this recognizer");
  const int64_t hd = hp_.head_dim;
  TensorId attn_norm = rms_norm(layer_name("attn_norm", l), x, weight(blk(l, "attn_norm.weight"), {hp_.n_embd}));
  TensorId q = project(l, "q", "attn_q", attn_norm, hp_.n_head, spec.qkv_bias);
  TensorId k = project(l, "k", "attn_k", attn_norm, hp_.n_head_kv, spec.qkv_bias);
  TensorId v = project(l, "v", "attn_v", attn_norm, hp_.n_head_kv, spec.qkv_bias);
  if (spec.qk_norm) {
    q = head_rms_norm(layer_name("q_norm", l), q, weight(blk(l, "attn_q_norm.weight"), {hd}));
    k = head_rms_norm(layer_name("k_norm", l), k, weight(blk(l, "attn_k_norm.weight"), {hd}));
  }
  TensorId q_rope = rope(layer_name("q_rope", l), q, spec.rope);
  TensorId k_rope = rope(layer_name("k_rope", l), k, spec.rope);
  return attention_and_ffn(l, x, q_rope, k_rope, v);
}

Graph DecoderBuilder::finish_with_head(TensorId x) {
  const int64_t d = hp_.n_embd;
  TensorId norm_w = weight("output_norm.weight", {d});
  TensorId normed = rms_norm("result_norm", x, norm_w);
  // Tied embeddings: without output.weight the head is token_embd.
  const std::string head_name = has_tensor("output.weight") ? "output.weight" : "token_embd.weight";
  TensorId head = weight(head_name, {d, hp_.n_vocab});
  TensorId logits = matmul("logits", normed, head, {hp_.n_vocab});
  TensorId next = builder_.apply(OpKind::argmax, "next_token", {1}, {logits}, {}, GgmlType::I32);
  builder_.output(logits);
  builder_.output(next);
  return builder_.finish();
}

Graph recognize_dense_decoder(const GgufFile& gguf, const std::string& arch,
                              const RecognizeOptions& options, const DecoderLayerSpec& spec) {
  DecoderBuilder m(gguf, read_decoder_hparams(gguf, arch, options));
  TensorId x = m.embed();
  for (int l = 0; l < static_cast<int>(m.hp().n_layer); ++l) x = m.decoder_layer(l, x, spec);
  return m.finish_with_head(x);
}

}  // namespace lanec
