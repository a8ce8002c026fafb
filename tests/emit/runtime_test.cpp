// The emitted program's host runtime pieces that need no GPU: command-line
// parsing, the host sampler, the .npy logits writer, and the check of a GGUF
// against the planned tables (kernels/runtime/*.h).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/runtime/model_check.h"
#include "kernels/runtime/npy_writer.h"
#include "kernels/runtime/options.h"
#include "kernels/runtime/sampler.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "lib/synth/synth.h"

using namespace lanec::runtime;

namespace {

std::string parse(std::vector<std::string> args, ProgramOptions& o) {
  args.insert(args.begin(), "model");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_options(static_cast<int>(argv.size()), argv.data(), o);
}

std::string parse_error(std::vector<std::string> args) {
  ProgramOptions o;
  return parse(std::move(args), o);
}

}  // namespace

TEST_CASE("program options: flags and values", "[emit]") {
  ProgramOptions o;
  REQUIRE(parse({"m.gguf", "--prompt-tokens", "1 2,3", "-n", "7", "--temp", "0.5", "--top-k", "5", "--top-p",
                 "0.9", "--seed", "42", "--tokens", "--logits", "x.npy", "--bench", "--repeats", "3"},
                o) == "");
  CHECK(o.model_path == "m.gguf");
  CHECK(o.prompt_tokens == std::vector<int32_t>{1, 2, 3});
  CHECK(o.n_predict == 7);
  CHECK(o.temperature == 0.5f);
  CHECK(o.top_k == 5);
  CHECK(o.top_p == 0.9f);
  CHECK(o.seed == 42);
  CHECK(o.print_tokens);
  CHECK(o.logits_path == "x.npy");
  CHECK(o.bench);
  CHECK(o.bench_repeats == 3);
  ProgramOptions p;
  REQUIRE(parse({"-p", "Hello there", "m.gguf"}, p) == "");
  CHECK(p.prompt == "Hello there");
  CHECK(p.temperature == 0.0f);  // greedy by default
  CHECK_FALSE(p.profile);
  ProgramOptions q;
  REQUIRE(parse({"m.gguf", "--profile", "--repeats", "9"}, q) == "");
  CHECK(q.profile);
  CHECK_FALSE(q.bench);
  CHECK(q.bench_repeats == 9);
  CHECK(std::string(usage_text()).find("--profile") != std::string::npos);
}

TEST_CASE("program options: mistakes name the flag", "[emit]") {
  CHECK(parse_error({"m.gguf", "--bogus"}) == "unknown flag --bogus");
  CHECK(parse_error({}) .find("no model file given") != std::string::npos);
  CHECK(parse_error({"m.gguf", "-n", "0"}).find("-n: expected a token count >= 1, got \"0\"") != std::string::npos);
  CHECK(parse_error({"m.gguf", "--temp", "hot"}).find("--temp") != std::string::npos);
  CHECK(parse_error({"m.gguf", "--top-p", "0"}).find("--top-p") != std::string::npos);
  CHECK(parse_error({"m.gguf", "-p", "a", "--prompt-tokens", "1"}).find("either -p or --prompt-tokens") !=
        std::string::npos);
  CHECK(parse_error({"m.gguf", "--prompt-tokens", "1 x 3"}).find("\"x\" is not a token id") != std::string::npos);
  CHECK(parse_error({"m.gguf", "--prompt-tokens", " "}).find("no token ids") != std::string::npos);
  CHECK(parse_error({"m.gguf", "-n"}).find("flag -n needs a value") != std::string::npos);
  CHECK(parse_error({"a.gguf", "b.gguf"}).find("unexpected argument \"b.gguf\"") != std::string::npos);
}

TEST_CASE("host sampler: filters, temperature and seeds", "[emit]") {
  const std::vector<float> logits = {0.1f, 2.0f, 1.9f, -1.0f, 0.5f, 1.95f};
  SECTION("top-k 1 and a tiny top-p are greedy") {
    Sampler k1(1.0f, 1, 1.0f, 3);
    Sampler p0(1.0f, 0, 1e-6f, 3);
    for (int i = 0; i < 20; ++i) {
      CHECK(k1.sample(logits.data(), 6) == 1);
      CHECK(p0.sample(logits.data(), 6) == 1);
    }
  }
  SECTION("top-k 3 draws only the three best, and all of them") {
    Sampler s(1.0f, 3, 1.0f, 11);
    std::vector<int> seen(6, 0);
    for (int i = 0; i < 600; ++i) ++seen[static_cast<size_t>(s.sample(logits.data(), 6))];
    CHECK(seen[0] + seen[3] + seen[4] == 0);
    CHECK(seen[1] > 0);
    CHECK(seen[2] > 0);
    CHECK(seen[5] > 0);
  }
  SECTION("a seed fixes the stream; another seed changes it") {
    Sampler a(1.0f, 0, 1.0f, 5), b(1.0f, 0, 1.0f, 5), c(1.0f, 0, 1.0f, 6);
    std::vector<int> sa, sb, sc;
    for (int i = 0; i < 64; ++i) {
      sa.push_back(a.sample(logits.data(), 6));
      sb.push_back(b.sample(logits.data(), 6));
      sc.push_back(c.sample(logits.data(), 6));
    }
    CHECK(sa == sb);
    CHECK(sa != sc);
  }
  SECTION("a very low temperature is greedy") {
    Sampler s(1e-4f, 0, 1.0f, 9);
    for (int i = 0; i < 20; ++i) CHECK(s.sample(logits.data(), 6) == 1);
  }
}

TEST_CASE("npy logits file: header and data as numpy reads them", "[emit]") {
  NpyLogits npy(3);
  const float r0[3] = {1.0f, -2.0f, 3.5f}, r1[3] = {0.0f, 4.25f, -1.0f};
  npy.append(r0);
  npy.append(r1);
  CHECK(npy.rows() == 2);
  const std::string path = "/tmp/lanec_emit_npy_test.npy";
  REQUIRE(npy.write(path));
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  REQUIRE(bytes.size() > 10);
  CHECK(bytes.substr(0, 6) == "\x93NUMPY");
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  CHECK((10 + header_len) % 64 == 0);
  const std::string header = bytes.substr(10, header_len);
  CHECK(header.find("'descr': '<f4'") != std::string::npos);
  CHECK(header.find("'shape': (2, 3)") != std::string::npos);
  CHECK(header.back() == '\n');
  REQUIRE(bytes.size() == 10 + header_len + 6 * sizeof(float));
  float data[6];
  std::memcpy(data, bytes.data() + 10 + header_len, sizeof data);
  CHECK(data[1] == -2.0f);
  CHECK(data[4] == 4.25f);
}

TEST_CASE("a GGUF is checked against the planned tensors and metadata", "[emit]") {
  auto model = [](const std::string& preset, lanec::GgmlType type) {
    lanec::SynthOptions o;
    o.shape = lanec::find_preset(preset);
    o.shape.head_dim = 32;
    o.type = type;
    return lanec::build_synthetic_model(o).to_bytes();
  };
  const PlannedWeight weights[] = {
      {"token_embd.weight", 8, 2, {64, 512}, 34816u, 0u},
      {"blk.0.attn_q_norm.weight", 0, 1, {32}, 128u, 34816u},
  };
  const PlannedKey metadata[] = {{"general.architecture", "\"qwen3\""}, {"qwen3.embedding_length", "64"}};
  ProgramSpec spec{};
  spec.weights = weights;
  spec.n_weights = 2;
  spec.metadata = metadata;
  spec.n_metadata = 2;

  const auto same = model("qwen3-tiny", lanec::GgmlType::Q8_0);
  const auto same_file = lanec::GgufFile::parse(same.data(), same.size(), "same.gguf");
  CHECK(model_differences(same_file, spec).empty());

  const auto f16 = model("qwen3-tiny", lanec::GgmlType::F16);
  const auto f16_file = lanec::GgufFile::parse(f16.data(), f16.size(), "f16.gguf");
  const auto d1 = model_differences(f16_file, spec);
  REQUIRE(d1.size() == 1);
  CHECK(d1[0] == "tensor token_embd.weight: planned q8_0, file has f16");

  const auto llama = model("llama-tiny", lanec::GgmlType::Q8_0);
  const auto llama_file = lanec::GgufFile::parse(llama.data(), llama.size(), "llama.gguf");
  const auto d2 = model_differences(llama_file, spec);
  REQUIRE(d2.size() == 3);
  CHECK(d2[0] == "metadata general.architecture: planned \"qwen3\", file has \"llama\"");
  CHECK(d2[1] == "metadata qwen3.embedding_length: missing (planned 64)");
  CHECK(d2[2] == "tensor blk.0.attn_q_norm.weight: missing");

  const PlannedWeight wrong_shape[] = {{"token_embd.weight", 8, 2, {64, 256}, 17408u, 0u}};
  spec.weights = wrong_shape;
  spec.n_weights = 1;
  const auto d3 = model_differences(same_file, spec);
  REQUIRE(d3.size() == 1);
  CHECK(d3[0] == "tensor token_embd.weight: planned shape (ne) [64, 256], file has [64, 512]");
}
