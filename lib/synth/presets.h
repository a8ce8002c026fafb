// Model shapes that `lanec synth` can write: tiny ones for tests and the real
// published shapes of Qwen3, Qwen3-MoE and Llama 3 for benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lanec {

struct ModelShape {
  std::string preset;        // "qwen3-0.6b"
  std::string arch;          // GGUF general.architecture: llama, qwen2, qwen3, qwen3moe
  std::string display_name;  // general.name
  uint32_t n_embd = 0;
  uint32_t n_layer = 0;
  uint32_t n_head = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim = 0;     // may differ from n_embd / n_head (Qwen3-4B)
  uint32_t n_ff = 0;         // dense FFN width
  uint32_t n_vocab = 0;      // without --vocab; a copied vocabulary sets its own size
  uint32_t n_ctx = 0;
  float rope_theta = 10000.0f;
  float rms_eps = 1e-6f;
  bool tied_output = false;  // output head shares token_embd
  bool qkv_bias = false;     // qwen2
  bool qk_norm = false;      // qwen3, qwen3moe
  uint32_t n_expert = 0;     // MoE only
  uint32_t n_expert_used = 0;
  uint32_t n_ff_expert = 0;
};

const std::vector<ModelShape>& model_presets();
// Error listing the valid names when `name` is unknown.
const ModelShape& find_preset(const std::string& name);
std::string preset_names();  // "qwen3-tiny, qwen3-0.6b, ..."

}  // namespace lanec
