// Shared fixtures of the planner tests: tiny synthetic models held in memory
// (GGUF bytes + parsed file + recognized graph) and knob sets.
#pragma once

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

// A tiny preset as a parsed GGUF and its step graph. The llama and qwen2
// tiny presets have 16-wide heads, which the attention kernel cannot take
// (it needs multiples of 32); `head_dim_32` widens them so the planner can
// plan them (the unwidened presets are an error test of their own).
inline std::unique_ptr<TinyModel> tiny_model(const std::string& preset, bool head_dim_32 = true,
                                             GgmlType type = GgmlType::Q8_0) {
  SynthOptions options;
  options.shape = find_preset(preset);
  if (head_dim_32) options.shape.head_dim = 32;
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
