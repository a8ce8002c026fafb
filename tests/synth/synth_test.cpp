#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <vector>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/quant/codecs.h"
#include "lib/synth/random_rows.h"
#include "lib/synth/synth.h"

using namespace lanec;

namespace {

std::vector<uint8_t> synth_bytes(const std::string& preset, GgmlType type, uint64_t seed = 7) {
  SynthOptions options;
  options.shape = find_preset(preset);
  options.type = type;
  options.seed = seed;
  return build_synthetic_model(options).to_bytes();
}

std::vector<float> dequantized(const GgufTensorInfo& t) {
  std::vector<float> values(t.n_elements);
  dequantize_row(t.type, t.data, values.data(), t.n_elements);
  return values;
}

}  // namespace

TEST_CASE("synth writes a qwen3-tiny model with complete metadata", "[synth]") {
  const auto bytes = synth_bytes("qwen3-tiny", GgmlType::Q8_0);
  const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "qwen3-tiny");
  CHECK(f.get_string("general.architecture") == "qwen3");
  CHECK(f.get_uint("qwen3.embedding_length") == 64);
  CHECK(f.get_uint("qwen3.block_count") == 2);
  CHECK(f.get_uint("qwen3.attention.head_count") == 4);
  CHECK(f.get_uint("qwen3.attention.head_count_kv") == 2);
  CHECK(f.get_uint("qwen3.attention.key_length") == 32);  // differs from 64 / 4
  CHECK(f.get_string("tokenizer.ggml.model") == "gpt2");
  CHECK(f.get_array("tokenizer.ggml.tokens").items.size() == 512);

  const auto& q = f.tensor("blk.1.attn_q.weight");
  CHECK(q.type == GgmlType::Q8_0);
  CHECK(q.ne == std::vector<uint64_t>{64, 128});
  CHECK(f.tensor("blk.0.attn_q_norm.weight").ne == std::vector<uint64_t>{32});
  CHECK(f.tensor("blk.0.attn_norm.weight").type == GgmlType::F32);
  CHECK(f.find_tensor("output.weight") == nullptr);  // tied head
}

TEST_CASE("synth shapes follow each architecture", "[synth]") {
  SECTION("qwen2 has QKV biases, an untied head and no QK norm") {
    const auto bytes = synth_bytes("qwen2-tiny", GgmlType::F32);
    const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "qwen2-tiny");
    CHECK(f.find_tensor("blk.0.attn_q.bias") != nullptr);
    CHECK(f.find_tensor("blk.0.attn_q_norm.weight") == nullptr);
    CHECK(f.find_tensor("output.weight") != nullptr);
  }
  SECTION("qwen3moe has routed experts") {
    const auto bytes = synth_bytes("qwen3moe-tiny", GgmlType::Q8_0);
    const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "moe");
    CHECK(f.tensor("blk.0.ffn_gate_exps.weight").ne == std::vector<uint64_t>{64, 32, 8});
    CHECK(f.tensor("blk.0.ffn_down_exps.weight").ne == std::vector<uint64_t>{32, 64, 8});
    CHECK(f.get_uint("qwen3moe.expert_used_count") == 2);
  }
}

TEST_CASE("synth is deterministic in the seed and independent of threads", "[synth]") {
  const auto a = synth_bytes("llama-tiny", GgmlType::Q4_0, 3);
  const auto b = synth_bytes("llama-tiny", GgmlType::Q4_0, 3);
  const auto c = synth_bytes("llama-tiny", GgmlType::Q4_0, 4);
  CHECK(a == b);
  CHECK(a != c);

  SynthOptions options;
  options.shape = find_preset("llama-tiny");
  options.type = GgmlType::Q4_0;
  options.seed = 3;
  const std::string one = "synth_threads_1.gguf", two = "synth_threads_2.gguf";
  options.threads = 1;
  write_synthetic_model(options, one);
  options.threads = 2;
  write_synthetic_model(options, two);
  const GgufFile f1 = GgufFile::open(one), f2 = GgufFile::open(two);
  REQUIRE(f1.file_size() == f2.file_size());
  REQUIRE(f1.file_size() == a.size());
  for (size_t i = 0; i < f1.tensors().size(); ++i) {
    const auto& t1 = f1.tensors()[i];
    const auto& t2 = f2.tensors()[i];
    CHECK(std::equal(t1.data, t1.data + t1.n_bytes, t2.data));
  }
  std::remove(one.c_str());
  std::remove(two.c_str());
}

TEST_CASE("synth weight scales are those of a trained-looking model", "[synth]") {
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0,
                        GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    CAPTURE(ggml_type_name(type));
    const auto bytes = synth_bytes("qwen3-tiny", type);
    const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "m");
    // Matrices: mean ~0, std ~1/sqrt(fan_in) so a matmul keeps the scale.
    const auto w = dequantized(f.tensor("blk.0.ffn_down.weight"));
    double sum = 0, sq = 0;
    for (float v : w) {
      REQUIRE(std::isfinite(v));
      sum += v;
      sq += double(v) * v;
    }
    const double n = static_cast<double>(w.size());
    const double mean = sum / n, std = std::sqrt(sq / n - mean * mean);
    CHECK(std::abs(mean) < 0.02);
    CHECK(std == Approx(1.0 / std::sqrt(128.0)).epsilon(0.25));
    // Norm weights near 1.
    for (float v : dequantized(f.tensor("blk.0.attn_norm.weight"))) CHECK(std::abs(v - 1.0f) < 0.1f);
  }
}

TEST_CASE("synth copies a real vocabulary", "[synth]") {
  SynthOptions options;
  options.shape = find_preset("qwen3-tiny");
  options.type = GgmlType::Q8_0;
  options.layers = 1;
  options.vocab_path = std::string(LANEC_TEST_DATA) + "/vocab/qwen3-vocab.gguf";
  const auto bytes = build_synthetic_model(options).to_bytes();
  const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "with-vocab");
  CHECK(f.get_string("tokenizer.ggml.pre") == "qwen2");
  const uint64_t n_vocab = f.get_array("tokenizer.ggml.tokens").items.size();
  CHECK(n_vocab == 151936);
  CHECK(f.tensor("token_embd.weight").ne == std::vector<uint64_t>{64, n_vocab});
  CHECK(f.get_uint("qwen3.block_count") == 1);
  CHECK(f.find_tensor("blk.1.attn_q.weight") == nullptr);
}

TEST_CASE("synth rejects unknown presets and unwritable formats", "[synth]") {
  CHECK_THROWS_WITH(find_preset("qwen9-huge"), Catch::Contains("valid presets: qwen3-tiny"));
  SynthOptions options;
  options.shape = find_preset("qwen3-tiny");
  options.type = GgmlType::IQ2_XXS;
  CHECK_THROWS_WITH(build_synthetic_model(options),
                    Catch::Contains("cannot write tensors of type iq2_xxs") &&
                        Catch::Contains("use one of f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, "
                                        "q5_1, q4_k, q5_k, q6_k, mxfp4"));
}

TEST_CASE("synth writes every format the type table marks, with llama's file type", "[synth]") {
  // general.file_type values of llama.cpp's enum llama_ftype.
  const std::pair<GgmlType, uint64_t> file_types[] = {
      {GgmlType::F32, 0},   {GgmlType::F16, 1},   {GgmlType::Q4_0, 2},  {GgmlType::Q4_1, 3},
      {GgmlType::Q8_0, 7},  {GgmlType::Q5_0, 8},  {GgmlType::Q5_1, 9},  {GgmlType::Q4_K, 15},
      {GgmlType::Q5_K, 17}, {GgmlType::Q6_K, 18}, {GgmlType::BF16, 32}, {GgmlType::MXFP4, 38},
  };
  size_t writable = 0;
  for (const GgmlTypeTraits& row : kGgmlTypes) {
    CAPTURE(row.name);
    CHECK(synth_can_write(row.type) == ((row.uses & ggml_use::kSynth) != 0));
    if (!synth_can_write(row.type)) continue;
    ++writable;
    SynthOptions options;
    options.shape = find_preset("qwen3-tiny");
    options.type = row.type;
    options.shape.n_ff = 256;  // ffn_down rows hold whole k-quant super-blocks
    options.layers = 1;
    const auto bytes = build_synthetic_model(options).to_bytes();
    const GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), row.name);
    const GgufTensorInfo& down = f.tensor("blk.0.ffn_down.weight");
    CHECK(down.type == row.type);
    for (float v : dequantized(down)) REQUIRE(std::isfinite(v));
    const auto* expected = std::find_if(std::begin(file_types), std::end(file_types),
                                        [&](const auto& e) { return e.first == row.type; });
    REQUIRE(expected != std::end(file_types));
    CHECK(f.get_uint("general.file_type") == expected->second);
  }
  CHECK(writable == std::size(file_types));
}
