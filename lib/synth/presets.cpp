#include "lib/synth/presets.h"

#include "lib/common/error.h"

namespace lanec {
namespace {

ModelShape qwen3(std::string preset, std::string name, uint32_t d, uint32_t layers,
                 uint32_t heads, uint32_t kv_heads, uint32_t head_dim, uint32_t ff, bool tied) {
  ModelShape s;
  s.preset = std::move(preset);
  s.arch = "qwen3";
  s.display_name = std::move(name);
  s.n_embd = d;
  s.n_layer = layers;
  s.n_head = heads;
  s.n_head_kv = kv_heads;
  s.head_dim = head_dim;
  s.n_ff = ff;
  s.n_vocab = 151936;
  s.n_ctx = 40960;
  s.rope_theta = 1000000.0f;
  s.rms_eps = 1e-6f;
  s.tied_output = tied;
  s.qk_norm = true;
  return s;
}

ModelShape llama(std::string preset, std::string name, uint32_t d, uint32_t layers,
                 uint32_t heads, uint32_t kv_heads, uint32_t ff, bool tied) {
  ModelShape s;
  s.preset = std::move(preset);
  s.arch = "llama";
  s.display_name = std::move(name);
  s.n_embd = d;
  s.n_layer = layers;
  s.n_head = heads;
  s.n_head_kv = kv_heads;
  s.head_dim = d / heads;
  s.n_ff = ff;
  s.n_vocab = 128256;
  s.n_ctx = 131072;
  s.rope_theta = 500000.0f;
  s.rms_eps = 1e-5f;
  s.tied_output = tied;
  return s;
}

// Tiny shapes keep every distinguishing feature of their architecture:
// GQA, a head size that differs from n_embd / n_head, tied or untied heads.
ModelShape tiny(ModelShape s, uint32_t vocab) {
  s.n_embd = 64;
  s.n_layer = 2;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.head_dim = s.arch == "llama" ? 16 : 32;
  s.n_ff = 128;
  s.n_vocab = vocab;
  s.n_ctx = 256;
  return s;
}

std::vector<ModelShape> make_presets() {
  std::vector<ModelShape> presets;
  // Published shapes: Qwen3 config.json files, Llama 3.x config.json files.
  ModelShape q06 = qwen3("qwen3-0.6b", "Qwen3 0.6B (synthetic)", 1024, 28, 16, 8, 128, 3072, true);
  ModelShape q17 = qwen3("qwen3-1.7b", "Qwen3 1.7B (synthetic)", 2048, 28, 16, 8, 128, 6144, true);
  ModelShape q4 = qwen3("qwen3-4b", "Qwen3 4B (synthetic)", 2560, 36, 32, 8, 128, 9728, true);
  ModelShape q8 = qwen3("qwen3-8b", "Qwen3 8B (synthetic)", 4096, 36, 32, 8, 128, 12288, false);

  ModelShape moe = qwen3("qwen3moe-30b-a3b", "Qwen3 30B-A3B (synthetic)", 2048, 48, 32, 4, 128, 6144, false);
  moe.arch = "qwen3moe";
  moe.n_expert = 128;
  moe.n_expert_used = 8;
  moe.n_ff_expert = 768;

  ModelShape l1 = llama("llama-1b", "Llama 3.2 1B (synthetic)", 2048, 16, 32, 8, 8192, true);
  ModelShape l8 = llama("llama-8b", "Llama 3.1 8B (synthetic)", 4096, 32, 32, 8, 14336, false);

  ModelShape q3t = tiny(q06, 512);
  q3t.preset = "qwen3-tiny";
  q3t.display_name = "Qwen3 tiny (synthetic)";
  ModelShape q2t = tiny(q06, 512);
  q2t.preset = "qwen2-tiny";
  q2t.arch = "qwen2";
  q2t.display_name = "Qwen2 tiny (synthetic)";
  q2t.qk_norm = false;
  q2t.qkv_bias = true;
  q2t.tied_output = false;
  q2t.head_dim = 16;
  ModelShape mt = tiny(moe, 512);
  mt.preset = "qwen3moe-tiny";
  mt.display_name = "Qwen3 MoE tiny (synthetic)";
  mt.n_expert = 8;
  mt.n_expert_used = 2;
  mt.n_ff_expert = 32;
  ModelShape lt = tiny(l1, 512);
  lt.preset = "llama-tiny";
  lt.display_name = "Llama tiny (synthetic)";
  lt.rope_theta = 10000.0f;

  presets = {q3t, q06, q17, q4, q8, mt, moe, lt, l1, l8, q2t};
  return presets;
}

}  // namespace

const std::vector<ModelShape>& model_presets() {
  static const std::vector<ModelShape> presets = make_presets();
  return presets;
}

std::string preset_names() {
  std::string names;
  for (const auto& p : model_presets()) names += (names.empty() ? "" : ", ") + p.preset;
  return names;
}

const ModelShape& find_preset(const std::string& name) {
  for (const auto& p : model_presets()) {
    if (p.preset == name) return p;
  }
  throw Error("unknown model preset '" + name + "'; valid presets: " + preset_names());
}

}  // namespace lanec
