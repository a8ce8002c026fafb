// Codecs against fixtures from implementations that are not ours (see
// scripts/make_quant_fixtures.py): dequantization must match the PyPI gguf
// package bit for bit; quantization must match gguf (f16 bf16 q8_0 q4_0 q4_1
// q5_0 q5_1 mxfp4) and ggml's own reference C quantizers (q4_K q5_K q6_K) bit
// for bit.
#include "lib/quant/codecs.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "tests/quant/fixture_io.h"

namespace lanec {
namespace {

using quant_test::read_f32_fixture;
using quant_test::read_fixture;

struct Format {
  const char* name;
  GgmlType type;
  uint64_t block_elems;
  uint64_t block_bytes;
};

constexpr Format kFormats[] = {
    {"f16", GgmlType::F16, 1, 2},        {"bf16", GgmlType::BF16, 1, 2},
    {"q8_0", GgmlType::Q8_0, 32, 34},    {"q4_0", GgmlType::Q4_0, 32, 18},
    {"q4_1", GgmlType::Q4_1, 32, 20},    {"q5_0", GgmlType::Q5_0, 32, 22},
    {"q5_1", GgmlType::Q5_1, 32, 24},    {"q4_K", GgmlType::Q4_K, 256, 144},
    {"q5_K", GgmlType::Q5_K, 256, 176},  {"q6_K", GgmlType::Q6_K, 256, 210},
    {"mxfp4", GgmlType::MXFP4, 32, 17},
};

TEST_CASE("dequantize_row matches gguf-py bit for bit", "[quant]") {
  for (const Format& f : kFormats) {
    SECTION(f.name) {
      const std::vector<uint8_t> blocks = read_fixture(std::string(f.name) + ".dequant_in.bin");
      const std::vector<float> want = read_f32_fixture(std::string(f.name) + ".dequant_out.f32");
      REQUIRE(blocks.size() % f.block_bytes == 0);
      REQUIRE(want.size() == blocks.size() / f.block_bytes * f.block_elems);
      std::vector<float> got(want.size(), -1.0f);
      dequantize_row(f.type, blocks.data(), got.data(), got.size());
      quant_test::require_bitwise_equal(got, want);
    }
  }
}

TEST_CASE("quantize_row matches the reference quantizers bit for bit", "[quant]") {
  for (const Format& f : kFormats) {
    SECTION(f.name) {
      const std::vector<float> input = read_f32_fixture(std::string(f.name) + ".quant_in.f32");
      const std::vector<uint8_t> want = read_fixture(std::string(f.name) + ".quant_out.bin");
      REQUIRE(input.size() % f.block_elems == 0);
      REQUIRE(want.size() == input.size() / f.block_elems * f.block_bytes);
      std::vector<uint8_t> got(want.size(), 0xAB);
      quantize_row(f.type, input.data(), got.data(), input.size());
      quant_test::require_bytes_equal(got, want, f.block_bytes);
    }
  }
}

TEST_CASE("k-quant blocks made by ggml dequantize as gguf-py does", "[quant]") {
  // Realistic blocks (the random-byte fixtures above cover every bit pattern).
  for (const Format& f : kFormats) {
    if (f.block_elems != 256) continue;
    SECTION(f.name) {
      const std::vector<uint8_t> blocks = read_fixture(std::string(f.name) + ".quant_out.bin");
      const std::vector<float> want =
          read_f32_fixture(std::string(f.name) + ".quant_out.dequant.f32");
      std::vector<float> got(blocks.size() / f.block_bytes * f.block_elems);
      dequantize_row(f.type, blocks.data(), got.data(), got.size());
      quant_test::require_bitwise_equal(got, want);
    }
  }
}

TEST_CASE("f32 rows pass through unchanged", "[quant]") {
  const std::vector<float> x = {1.5f, -0.0f, 3e-42f, -7.25f};
  std::vector<uint8_t> bytes(x.size() * 4);
  quantize_row(GgmlType::F32, x.data(), bytes.data(), x.size());
  std::vector<float> back(x.size());
  dequantize_row(GgmlType::F32, bytes.data(), back.data(), back.size());
  quant_test::require_bitwise_equal(back, x);
}

TEST_CASE("codec capability lists", "[quant]") {
  for (const Format& f : kFormats) {
    CHECK(can_dequantize(f.type));
    CHECK(can_quantize(f.type));
  }
  CHECK(can_dequantize(GgmlType::F32));
  CHECK_FALSE(can_dequantize(GgmlType::Q2_K));
  CHECK_FALSE(can_quantize(GgmlType::IQ2_XXS));
  CHECK_FALSE(can_dequantize(GgmlType::I32));
}

TEST_CASE("a row that is not whole blocks is a user error", "[quant]") {
  std::vector<uint8_t> bytes(4096, 0);
  std::vector<float> floats(4096, 0.0f);
  for (const Format& f : kFormats) {
    if (f.block_elems == 1) continue;
    INFO(f.name);
    const uint64_t bad_n = f.block_elems + 1;
    CHECK_THROWS_AS(dequantize_row(f.type, bytes.data(), floats.data(), bad_n), Error);
    CHECK_THROWS_AS(quantize_row(f.type, floats.data(), bytes.data(), bad_n), Error);
    CHECK_THROWS_WITH(dequantize_row(f.type, bytes.data(), floats.data(), f.block_elems / 2),
                      Catch::Contains("not a whole number of blocks") &&
                          Catch::Contains(std::to_string(f.block_elems)));
  }
  CHECK_THROWS_WITH(dequantize_row(GgmlType::Q3_K, bytes.data(), floats.data(), 256),
                    Catch::Contains("unsupported tensor type") &&
                        Catch::Contains("supported: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_K "
                                        "q5_K q6_K mxfp4"));
  CHECK_THROWS_AS(quantize_row(GgmlType::IQ4_NL, floats.data(), bytes.data(), 32), Error);
  // An empty row is a whole number (zero) of blocks.
  CHECK_NOTHROW(dequantize_row(GgmlType::Q8_0, bytes.data(), floats.data(), 0));
}

TEST_CASE("dequantizing a 151936x1024 q8_0 matrix row by row is fast", "[quant]") {
  constexpr uint64_t kCols = 1024;
  constexpr uint64_t kRows = 151936;
  constexpr uint64_t kRowBytes = kCols / 32 * 34;
  constexpr uint64_t kDistinctRows = 512;  // cycled, to keep the test's memory small
  std::vector<float> source(kCols * kDistinctRows);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<float>((i * 7919) % 255) - 127.0f;
  std::vector<uint8_t> matrix(kRowBytes * kDistinctRows);
  for (uint64_t r = 0; r < kDistinctRows; ++r) {
    quantize_row(GgmlType::Q8_0, source.data() + r * kCols, matrix.data() + r * kRowBytes, kCols);
  }
  std::vector<float> row(kCols);
  double checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t r = 0; r < kRows; ++r) {
    dequantize_row(GgmlType::Q8_0, matrix.data() + (r % kDistinctRows) * kRowBytes, row.data(), kCols);
    checksum += row[r % kCols];
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("q8_0 dequantize of 151936x1024: " << seconds << " s (checksum " << checksum << ")");
#ifdef NDEBUG
  CHECK(seconds < 1.0);
#endif
}

}  // namespace
}  // namespace lanec

TEST_CASE("the formats the GGUF layer calls loadable are exactly those the codecs read", "[quant]") {
  // kGgmlTypes declares what lanec reads and quantizes (the fuzzer builds
  // lib/gguf without lib/quant); the codec table binds the functions.
  for (const lanec::GgmlTypeTraits& traits : lanec::kGgmlTypes) {
    CAPTURE(traits.name);
    CHECK(lanec::ggml_type_is_supported(traits.type) == lanec::can_dequantize(traits.type));
    CHECK(lanec::ggml_type_has_use(traits.type, lanec::ggml_use::kQuantize) ==
          lanec::can_quantize(traits.type));
  }
}
