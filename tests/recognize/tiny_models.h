// Tiny synthetic models for the recognizer and reference-executor tests:
// `lanec synth` presets built in memory and parsed back, with knobs for the
// variants the tests need (tied head, fewer layers, edited metadata).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/synth/synth.h"

namespace lanec::testing {

struct TinyModel {
  std::vector<uint8_t> bytes;  // must outlive gguf (it points into them)
  std::optional<GgufFile> gguf;
};

struct TinyOptions {
  std::optional<bool> tied;
  std::optional<uint32_t> layers;
  GgmlType type = GgmlType::F32;
  uint64_t seed = 1;
  std::function<void(ModelShape&)> edit_shape;      // before building
  std::function<void(GgufWriter&)> edit_writer;     // after building, before writing
};

inline std::unique_ptr<TinyModel> make_tiny_model(const std::string& preset,
                                                  const TinyOptions& o = {}) {
  SynthOptions options;
  options.shape = find_preset(preset);
  if (o.tied) options.shape.tied_output = *o.tied;
  if (o.edit_shape) o.edit_shape(options.shape);
  options.type = o.type;
  options.seed = o.seed;
  options.layers = o.layers;
  GgufWriter writer = build_synthetic_model(options);
  if (o.edit_writer) o.edit_writer(writer);
  auto model = std::make_unique<TinyModel>();
  model->bytes = writer.to_bytes();
  model->gguf.emplace(GgufFile::parse(model->bytes.data(), model->bytes.size(), preset));
  return model;
}

}  // namespace lanec::testing
