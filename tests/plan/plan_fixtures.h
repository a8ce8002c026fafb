// Shared fixtures of the planner tests: tiny synthetic models held in memory
// (GGUF bytes + parsed file + recognized graph) and knob sets.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/knobs/knobs.h"
#include "lib/synth/presets.h"
#include "lib/synth/synth.h"

namespace lanec::test {

struct TinyModel {
  std::vector<uint8_t> bytes;
  std::unique_ptr<GgufFile> gguf;
  Graph graph;
};

// A tiny preset as a parsed GGUF and its step graph. `head_dim` overrides
// the preset's head size (0 keeps it): the attention kernel takes multiples
// of 32, so a 16-wide head is an error test of its own.
inline std::unique_ptr<TinyModel> tiny_model(const std::string& preset, uint32_t head_dim = 0,
                                             GgmlType type = GgmlType::Q8_0) {
  SynthOptions options;
  options.shape = find_preset(preset);
  if (head_dim) options.shape.head_dim = head_dim;
  options.type = type;
  options.seed = 7;
  options.threads = 1;
  auto model = std::make_unique<TinyModel>();
  model->bytes = build_synthetic_model(options).to_bytes();
  model->gguf = std::make_unique<GgufFile>(
      GgufFile::parse(model->bytes.data(), model->bytes.size(), preset + ".gguf"));
  model->graph = recognize_model(*model->gguf);
  return model;
}

// Knob text with the chip of an H200 and the given precisions.
inline Knobs test_knobs(const std::string& cache, const std::string& activations,
                        int sms = 132) {
  std::string yaml = "chip: { name: test, arch: sm_90, sms: " + std::to_string(sms) +
                     ", smem_kib_per_block: 227 }\ncache_precision: " + cache +
                     "\nrecurrent_state: f32\nactivations: " + activations + "\n";
  return parse_knobs(yaml, "test-knobs");
}

}  // namespace lanec::test

#include "lib/graph/builder.h"

namespace lanec::test {

// A llama-style decoder step graph built directly (no GGUF): the planner
// needs only shapes and formats, so a graph at an 8B model's shapes costs
// nothing to build.
struct DecoderDims {
  int64_t n_embd = 4096, n_layer = 32, n_head = 32, n_head_kv = 8, head_dim = 128;
  int64_t n_ff = 14336, n_vocab = 128256, n_ctx = 4096;
  GgmlType type = GgmlType::Q8_0;
  bool k_rope_output = false;  // layer 0's rotated K is also a graph output
};

// Narrower decoders (Qwen3-0.6B's and 1.7B's widths in the tests): the
// defaults with these widths, layers and vocabulary.
inline DecoderDims decoder_dims(int64_t n_embd, int64_t n_head, int64_t n_ff, int64_t n_layer, int64_t n_vocab) {
  DecoderDims d;
  d.n_embd = n_embd;
  d.n_head = n_head;
  d.n_ff = n_ff;
  d.n_layer = n_layer;
  d.n_vocab = n_vocab;
  return d;
}

inline Graph decoder_graph(const DecoderDims& d) {
  GraphBuilder b;
  b.set_metadata("arch", std::string("llama"));
  TensorId token = b.param("token", GgmlType::I32, {1});
  TensorId pos = b.param("pos", GgmlType::I32, {1});
  TensorId table = b.constant("token_embd.weight", d.type, {d.n_vocab, d.n_embd});
  TensorId x = b.apply(OpKind::embed_get_rows, "inp_embd", {d.n_embd}, {table, token});
  auto blk = [](int64_t l, const std::string& s) { return "blk." + std::to_string(l) + "." + s; };
  for (int l = 0; l < static_cast<int>(d.n_layer); ++l) {
    TensorId an = b.apply_like(OpKind::rms_norm, layer_name("attn_norm", l),
                               {x, b.constant(blk(l, "attn_norm.weight"), GgmlType::F32, {d.n_embd})},
                               {{"eps", 1e-5}});
    TensorId q = b.apply(OpKind::matmul, layer_name("q", l), {d.n_head, d.head_dim},
                         {an, b.constant(blk(l, "attn_q.weight"), d.type, {d.n_head * d.head_dim, d.n_embd})});
    TensorId k = b.apply(OpKind::matmul, layer_name("k", l), {d.n_head_kv, d.head_dim},
                         {an, b.constant(blk(l, "attn_k.weight"), d.type, {d.n_head_kv * d.head_dim, d.n_embd})});
    TensorId v = b.apply(OpKind::matmul, layer_name("v", l), {d.n_head_kv, d.head_dim},
                         {an, b.constant(blk(l, "attn_v.weight"), d.type, {d.n_head_kv * d.head_dim, d.n_embd})});
    Attrs rope{{"mode", std::string("norm")}, {"n_rot", d.head_dim}, {"freq_base", 500000.0}};
    TensorId qr = b.apply_like(OpKind::rope, layer_name("q_rope", l), {q, pos}, rope);
    TensorId kr = b.apply_like(OpKind::rope, layer_name("k_rope", l), {k, pos}, rope);
    TensorId kc = b.state(layer_name("cache_k", l), GgmlType::F32, {d.n_ctx, d.n_head_kv, d.head_dim});
    TensorId vc = b.state(layer_name("cache_v", l), GgmlType::F32, {d.n_ctx, d.n_head_kv, d.head_dim});
    b.op(OpKind::kv_write, {kr, pos}, {kc});
    b.op(OpKind::kv_write, {v, pos}, {vc});
    if (d.k_rope_output && l == 0) b.output(kr);
    TensorId at = b.apply(OpKind::attention, layer_name("attn", l), {d.n_head, d.head_dim},
                          {qr, kc, vc, pos}, {{"scale", 1.0 / std::sqrt(static_cast<double>(d.head_dim))}});
    TensorId ao = b.apply(OpKind::matmul, layer_name("attn_out", l), {d.n_embd},
                          {at, b.constant(blk(l, "attn_output.weight"), d.type, {d.n_embd, d.n_head * d.head_dim})});
    TensorId res = b.apply_like(OpKind::add, layer_name("attn_res", l), {x, ao});
    TensorId fn = b.apply_like(OpKind::rms_norm, layer_name("ffn_norm", l),
                               {res, b.constant(blk(l, "ffn_norm.weight"), GgmlType::F32, {d.n_embd})},
                               {{"eps", 1e-5}});
    TensorId gate = b.apply(OpKind::matmul, layer_name("ffn_gate", l), {d.n_ff},
                            {fn, b.constant(blk(l, "ffn_gate.weight"), d.type, {d.n_ff, d.n_embd})});
    TensorId up = b.apply(OpKind::matmul, layer_name("ffn_up", l), {d.n_ff},
                          {fn, b.constant(blk(l, "ffn_up.weight"), d.type, {d.n_ff, d.n_embd})});
    TensorId act = b.apply_like(OpKind::swiglu, layer_name("ffn_act", l), {gate, up});
    TensorId down = b.apply(OpKind::matmul, layer_name("ffn_out", l), {d.n_embd},
                            {act, b.constant(blk(l, "ffn_down.weight"), d.type, {d.n_embd, d.n_ff})});
    x = b.apply_like(OpKind::add, layer_name("l_out", l), {res, down});
  }
  TensorId normed = b.apply_like(OpKind::rms_norm, "result_norm",
                                 {x, b.constant("output_norm.weight", GgmlType::F32, {d.n_embd})},
                                 {{"eps", 1e-5}});
  TensorId logits = b.apply(OpKind::matmul, "logits", {d.n_vocab},
                            {normed, b.constant("output.weight", d.type, {d.n_vocab, d.n_embd})});
  TensorId next = b.apply(OpKind::argmax, "next_token", {1}, {logits}, {}, GgmlType::I32);
  b.output(logits);
  b.output(next);
  return b.finish();
}

}  // namespace lanec::test
