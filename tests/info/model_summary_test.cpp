#include <catch2/catch.hpp>

#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/info/model_summary.h"
#include "lib/synth/synth.h"

using namespace lanec;

namespace {

ModelSummary summarize(const std::string& preset, std::vector<uint8_t>& storage) {
  SynthOptions options;
  options.shape = find_preset(preset);
  options.type = GgmlType::Q8_0;
  storage = build_synthetic_model(options).to_bytes();
  const GgufFile f = GgufFile::parse(storage.data(), storage.size(), preset);
  return summarize_model(f);
}

uint64_t bytes_of(const ModelSummary& s, const std::string& name) {
  for (const auto& t : s.tensors)
    if (t.name == name) return t.bytes;
  FAIL("no tensor " << name);
  return 0;
}

}  // namespace

TEST_CASE("weight bytes per step: a tied head reads the whole embedding", "[info]") {
  std::vector<uint8_t> storage;
  const ModelSummary s = summarize("qwen3-tiny", storage);
  CHECK(s.architecture == "qwen3");
  CHECK(s.weight_bytes_per_step == s.weight_bytes);
}

TEST_CASE("weight bytes per step: an untied embedding is gathered one row", "[info]") {
  std::vector<uint8_t> storage;
  const ModelSummary s = summarize("qwen2-tiny", storage);
  const uint64_t embd = bytes_of(s, "token_embd.weight");
  const uint64_t row = 64 / 32 * 34;
  CHECK(s.weight_bytes_per_step == s.weight_bytes - embd + row);
  CHECK(s.totals_by_format.at("q8_0").first + s.totals_by_format.at("f32").first == s.tensors.size());
}

TEST_CASE("weight bytes per step: experts count in proportion used / count", "[info]") {
  std::vector<uint8_t> storage;
  const ModelSummary s = summarize("qwen3moe-tiny", storage);
  uint64_t expected = 0;
  for (const auto& t : s.tensors) {
    if (t.name == "token_embd.weight") expected += 64 / 32 * 34;
    else if (t.name.find("_exps.") != std::string::npos) expected += t.bytes / 8 * 2;
    else expected += t.bytes;
  }
  CHECK(s.weight_bytes_per_step == expected);
  bool has_hparam = false;
  for (const auto& [k, v] : s.hyperparameters) has_hparam |= (k == "expert_count" && v == "8");
  CHECK(has_hparam);
}
