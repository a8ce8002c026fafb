// fp16 / bf16 helpers: exact values at the edges (zero signs, subnormals,
// overflow, ties to even, NaN), exhaustive round trips of every 16-bit
// pattern, and a strided sweep of f32 inputs against the compiler's _Float16.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "lib/quant/codecs.h"

namespace lanec {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

bool is_fp16_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }

TEST_CASE("fp16_to_f32 decodes edge values exactly", "[quant]") {
  CHECK(to_bits(fp16_to_f32(0x0000)) == 0x00000000u);
  CHECK(to_bits(fp16_to_f32(0x8000)) == 0x80000000u);
  CHECK(fp16_to_f32(0x3C00) == 1.0f);
  CHECK(fp16_to_f32(0xC000) == -2.0f);
  CHECK(fp16_to_f32(0x7BFF) == 65504.0f);
  CHECK(fp16_to_f32(0x0001) == std::ldexp(1.0f, -24));
  CHECK(fp16_to_f32(0x8001) == -std::ldexp(1.0f, -24));
  CHECK(fp16_to_f32(0x03FF) == std::ldexp(1023.0f, -24));
  CHECK(fp16_to_f32(0x0400) == std::ldexp(1.0f, -14));
  CHECK(fp16_to_f32(0x7C00) == std::numeric_limits<float>::infinity());
  CHECK(fp16_to_f32(0xFC00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(fp16_to_f32(0x7E00)));
  CHECK(std::isnan(fp16_to_f32(0x7C01)));
}

TEST_CASE("f32_to_fp16 rounds to nearest even", "[quant]") {
  CHECK(f32_to_fp16(0.0f) == 0x0000);
  CHECK(f32_to_fp16(-0.0f) == 0x8000);
  CHECK(f32_to_fp16(1.0f) == 0x3C00);
  CHECK(f32_to_fp16(65504.0f) == 0x7BFF);
  CHECK(f32_to_fp16(65519.99f) == 0x7BFF);   // below the midpoint to 2^16
  CHECK(f32_to_fp16(65520.0f) == 0x7C00);    // the midpoint: ties to even, the even side is inf
  CHECK(f32_to_fp16(1e9f) == 0x7C00);
  CHECK(f32_to_fp16(-1e9f) == 0xFC00);
  CHECK(f32_to_fp16(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(f32_to_fp16(-std::numeric_limits<float>::infinity()) == 0xFC00);
  // Ties between normals: 1 + 2^-11 sits halfway between 0x3C00 and 0x3C01.
  CHECK(f32_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  CHECK(f32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  CHECK(f32_to_fp16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)) == 0x3C01);
  // Subnormal halves and ties at their bottom.
  CHECK(f32_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(f32_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);  // tie between 0 and 1 → 0
  CHECK(f32_to_fp16(-std::ldexp(1.0f, -25)) == 0x8000);
  CHECK(f32_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(f32_to_fp16(std::ldexp(3.0f, -25)) == 0x0002);  // tie between 1 and 2 → 2
  CHECK(f32_to_fp16(std::ldexp(5.0f, -25)) == 0x0002);  // tie between 2 and 3 → 2
  CHECK(f32_to_fp16(std::ldexp(2047.0f, -25)) == 0x0400);  // largest subnormal + half ulp → smallest normal
  CHECK(f32_to_fp16(1e-30f) == 0x0000);
  CHECK(f32_to_fp16(from_bits(0x00000001)) == 0x0000);  // f32 subnormal
  // NaN stays NaN, quiet, sign kept.
  CHECK(is_fp16_nan(f32_to_fp16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(is_fp16_nan(f32_to_fp16(from_bits(0x7F800001))));  // signalling, payload only in low bits
  CHECK((f32_to_fp16(from_bits(0xFFC00000)) & 0x8000) == 0x8000);
}

TEST_CASE("every fp16 survives a round trip through f32", "[quant]") {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const uint16_t back = f32_to_fp16(fp16_to_f32(half));
    if (is_fp16_nan(half)) {
      REQUIRE(is_fp16_nan(back));
    } else if (back != half) {
      FAIL("fp16 0x" << std::hex << h << " came back as 0x" << back);
    }
  }
}

#if defined(__FLT16_MAX__)
TEST_CASE("f32_to_fp16 agrees with the compiler's _Float16 conversion", "[quant]") {
  // A prime stride visits every exponent and many mantissa patterns.
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 257) {
    const float f = from_bits(static_cast<uint32_t>(u));
    if (std::isnan(f)) continue;
    const auto reference = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &reference, sizeof want);
    const uint16_t got = f32_to_fp16(f);
    if (got != want) FAIL("f32 0x" << std::hex << u << ": got 0x" << got << " want 0x" << want);
  }
}
#endif

TEST_CASE("bf16 conversions follow ggml", "[quant]") {
  CHECK(f32_to_bf16(1.0f) == 0x3F80);
  CHECK(f32_to_bf16(-0.0f) == 0x8000);
  CHECK(f32_to_bf16(from_bits(0x3F808000)) == 0x3F80);  // tie → even (down)
  CHECK(f32_to_bf16(from_bits(0x3F818000)) == 0x3F82);  // tie → even (up)
  CHECK(f32_to_bf16(from_bits(0x3F808001)) == 0x3F81);
  CHECK(f32_to_bf16(from_bits(0x3F807FFF)) == 0x3F80);
  CHECK(f32_to_bf16(std::numeric_limits<float>::infinity()) == 0x7F80);
  CHECK(f32_to_bf16(-std::numeric_limits<float>::infinity()) == 0xFF80);
  CHECK(f32_to_bf16(std::numeric_limits<float>::max()) == 0x7F80);  // rounds up to inf
  CHECK(f32_to_bf16(from_bits(0x00000001)) == 0x0000);            // subnormals round like any value
  CHECK(f32_to_bf16(from_bits(0x00018000)) == 0x0002);
  // NaN: truncated and forced quiet, never rounded into inf.
  CHECK(f32_to_bf16(from_bits(0x7F800001)) == 0x7FC0);
  CHECK(f32_to_bf16(from_bits(0x7F80FFFF)) == 0x7FC0);
  CHECK(f32_to_bf16(from_bits(0xFFC12345)) == 0xFFC1);
  CHECK(to_bits(bf16_to_f32(0x3F80)) == 0x3F800000u);
  CHECK(to_bits(bf16_to_f32(0x8001)) == 0x80010000u);
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const bool nan = (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0;
    const uint16_t back = f32_to_bf16(bf16_to_f32(b));
    if (nan) {
      REQUIRE(back == (b | 0x40));
    } else if (back != b) {
      FAIL("bf16 0x" << std::hex << h << " came back as 0x" << back);
    }
  }
}

}  // namespace
}  // namespace lanec
