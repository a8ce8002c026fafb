// CPU tests of the plain C++ kernel references (kernels/reference/): the
// oracle the GPU sweep (tests/kernels/kernel_sweep.cu) trusts must itself be
// right. Q4_K / Q6_K expectations were produced by an independent decoder
// (the `gguf` Python package's dequantize) for the same bytes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/reference/ops.h"
#include "lib/plan/cpu_schedule.h"

namespace ref = lanec::kernels::ref;

namespace {

// The deterministic test block: byte i = (37 i + 11) mod 256, scales patched.
std::vector<uint8_t> patterned_block(size_t bytes) {
  std::vector<uint8_t> b(bytes);
  for (size_t i = 0; i < bytes; ++i) b[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  return b;
}

void put_f16(uint8_t* p, float v) {
  const uint16_t h = ref::f32_to_f16(v);
  p[0] = static_cast<uint8_t>(h & 0xff);
  p[1] = static_cast<uint8_t>(h >> 8);
}

}  // namespace

TEST_CASE("f16 conversion matches IEEE binary16 bit patterns", "[kernels]") {
  CHECK(ref::f32_to_f16(1.0f) == 0x3C00);
  CHECK(ref::f32_to_f16(-2.0f) == 0xC000);
  CHECK(ref::f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(ref::f32_to_f16(1e6f) == 0x7C00);
  CHECK(ref::f32_to_f16(0.1f) == 0x2E66);
  CHECK(ref::f32_to_f16(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(ref::f32_to_f16(1e-8f) == 0x0000);
  CHECK(ref::f16_to_f32(0x3555) == Approx(0.333251953125f).epsilon(0));
  CHECK(ref::bf16_to_f32(0x3F80) == 1.0f);
  // Every finite half survives f16 -> f32 -> f16 exactly.
  int mismatches = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;  // inf / NaN
    if (ref::f32_to_f16(ref::f16_to_f32(static_cast<uint16_t>(h))) != h) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("Q8_0 and Q4_0 rows dequantize as d times the stored integers", "[kernels]") {
  std::vector<uint8_t> q8(34);
  put_f16(q8.data(), 0.5f);
  for (int j = 0; j < 32; ++j) q8[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j * 8 - 128));
  std::vector<float> out(32);
  ref::dequant_q8_0_row(q8.data(), 32, out.data());
  CHECK(out[0] == -64.0f);
  CHECK(out[31] == 0.5f * static_cast<float>(31 * 8 - 128));

  std::vector<uint8_t> q4(18);
  put_f16(q4.data(), 2.0f);
  for (int j = 0; j < 16; ++j) q4[2 + j] = static_cast<uint8_t>(0x10 * (j % 16) + 15);
  ref::dequant_q4_0_row(q4.data(), 32, out.data());
  CHECK(out[0] == 14.0f);            // low nibble 15 -> (15-8)*2
  CHECK(out[16] == -16.0f);          // high nibble 0 -> (0-8)*2
  CHECK(out[16 + 9] == 2.0f);        // high nibble 9 -> (9-8)*2
}

TEST_CASE("Q4_K and Q6_K dequantize like an independent decoder", "[kernels]") {
  std::vector<float> out(256);
  auto q4k = patterned_block(144);
  put_f16(q4k.data(), 0.0625f);
  put_f16(q4k.data() + 2, 0.03125f);
  ref::dequant_q4_k_row(q4k.data(), 256, out.data());
  const std::vector<std::pair<int, float>> q4k_expected = {
      {0, 19.71875f},  {1, -1.59375f}, {31, 10.03125f}, {32, 0.5f},     {63, 2.5f},
      {64, 26.28125f}, {100, 5.9375f}, {127, 5.0625f},  {128, 26.4375f}, {150, 21.5625f},
      {191, 2.8125f},  {200, 8.65625f}, {255, 3.03125f}};
  for (auto [i, v] : q4k_expected) CHECK(out[static_cast<size_t>(i)] == v);

  auto q6k = patterned_block(210);
  put_f16(q6k.data() + 208, 0.0078125f);
  ref::dequant_q6_k_row(q6k.data(), 256, out.data());
  const std::vector<std::pair<int, float>> q6k_expected = {
      {0, -11.1796875f}, {1, 13.25f},   {31, -0.75f},      {32, 1.8046875f}, {63, -4.53125f},
      {64, -23.75f},     {100, 19.7109375f}, {127, 11.71875f}, {128, -2.7421875f}, {150, -1.3125f},
      {191, -7.65625f},  {200, 8.5078125f},  {255, -0.46875f}};
  for (auto [i, v] : q6k_expected) CHECK(out[static_cast<size_t>(i)] == v);
}

TEST_CASE("int8 activation quantization scales each block by max|x|/127", "[kernels]") {
  std::vector<float> x(64, 0.0f);
  for (int j = 0; j < 32; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j - 16) * 0.5f;  // max |x| = 8
  std::vector<int8_t> qs(64);
  std::vector<float> d(2);
  ref::quantize_q8(x.data(), 64, qs.data(), d.data());
  CHECK(d[0] == 8.0f / 127.0f);
  CHECK(qs[0] == -127);
  CHECK(qs[16] == 0);
  CHECK(qs[31] == static_cast<int8_t>(std::round(7.5f * (127.0f / 8.0f))));  // 119
  CHECK(d[1] == 0.0f);  // an all-zero block has scale 0 and zero values
  CHECK(qs[40] == 0);
}

TEST_CASE("int8 activation blocks with a tiny or infinite max get zero words", "[kernels]") {
  std::vector<float> x(96, 0.0f);
  x[0] = 1e-30f;  // max below kQ8MinMax: a zero block
  x[1] = -5e-31f;
  x[32] = 2e-29f;  // just above: quantized as usual
  x[33] = -5e-30f;  // a quarter of the max, exactly
  x[64] = std::numeric_limits<float>::infinity();
  x[65] = 1.0f;
  std::vector<int8_t> qs(96), lo(96);
  std::vector<float> d(3);
  ref::quantize_q8(x.data(), 96, qs.data(), d.data());
  ref::quantize_q8_low(x.data(), 96, qs.data(), d.data(), lo.data());
  CHECK(d[0] == 0.0f);
  CHECK(qs[0] == 0);
  CHECK(lo[0] == 0);
  CHECK(d[1] == 2e-29f / 127.0f);
  CHECK(qs[32] == 127);
  CHECK(qs[33] == -32);  // round(-31.75)
  CHECK(std::isinf(d[2]));  // the GEMV's sums carry the infinity
  CHECK(qs[65] == 0);
  CHECK(lo[65] == 0);
}

TEST_CASE("the two-word form's low word is the remainder in 1/254 steps, as the schedule executor has it",
          "[kernels]") {
  std::vector<float> x(96);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(1.3f * static_cast<float>(i)) * static_cast<float>(1 + i % 5);
  x[64] = 0.0f;
  std::vector<int8_t> qs(96), lo(96), qs2(96), lo2(96);
  std::vector<float> d(3), d2(3);
  ref::quantize_q8(x.data(), 96, qs.data(), d.data());
  ref::quantize_q8_low(x.data(), 96, qs.data(), d.data(), lo.data());
  lanec::quantize_q8_blocks(x.data(), 96, qs2.data(), d2.data(), lo2.data());  // lib/plan/cpu_schedule.h
  CHECK(qs == qs2);
  CHECK(d == d2);
  CHECK(lo == lo2);
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i);
    const float step = d[i / 32] / 254.0f;
    CHECK(std::fabs(d[i / 32] * static_cast<float>(qs[i]) + step * static_cast<float>(lo[i]) - x[i]) <=
          0.5f * step + 1e-6f);
  }
}

TEST_CASE("rms_norm and the two GEMV references agree with hand values", "[kernels]") {
  const auto y = ref::rms_norm({3.0f, -3.0f, 3.0f, -3.0f}, {1.0f, 2.0f, 1.0f, 1.0f}, 0.0f);
  CHECK(y[0] == Approx(1.0f));
  CHECK(y[1] == Approx(-2.0f));

  // 2 x 32 int8 matrix times an int8 vector: the int8 reference is the exact
  // dot of the dequantized operands.
  const int k = 32;
  std::vector<int8_t> wq(2 * k), xq(k);
  for (int i = 0; i < 2 * k; ++i) wq[static_cast<size_t>(i)] = static_cast<int8_t>(i % 7 - 3);
  for (int i = 0; i < k; ++i) xq[static_cast<size_t>(i)] = static_cast<int8_t>(i % 5 - 2);
  const std::vector<float> wd = {0.25f, 0.5f}, xd = {2.0f};
  std::vector<float> w(2 * k), x(k);
  for (int i = 0; i < 2 * k; ++i) w[static_cast<size_t>(i)] = wq[static_cast<size_t>(i)] * wd[static_cast<size_t>(i / k)];
  for (int i = 0; i < k; ++i) x[static_cast<size_t>(i)] = xq[static_cast<size_t>(i)] * xd[0];
  const auto a = ref::gemv_int8(wq, wd, xq, xd, 2, k);
  const auto b = ref::gemv(w, x, 2, k);
  CHECK(a[0] == b[0]);
  CHECK(a[1] == b[1]);
}

TEST_CASE("rope reference rotates the documented pairs", "[kernels]") {
  // One head of 4: rope_dims 4, base 1 so every pair turns by pos radians.
  std::vector<float> norm_mode = {1.0f, 0.0f, 0.0f, 1.0f};
  ref::rope(norm_mode, 1, 4, 4, false, 1.0f, 1, nullptr, 0.0f);
  CHECK(norm_mode[0] == Approx(std::cos(1.0)));  // pair (0, 1)
  CHECK(norm_mode[1] == Approx(std::sin(1.0)));
  CHECK(norm_mode[2] == Approx(-std::sin(1.0)));  // pair (2, 3)
  CHECK(norm_mode[3] == Approx(std::cos(1.0)));

  std::vector<float> neox_mode = {1.0f, 0.0f, 0.0f, 1.0f};
  ref::rope(neox_mode, 1, 4, 4, true, 1.0f, 1, nullptr, 0.0f);
  CHECK(neox_mode[0] == Approx(std::cos(1.0)));  // pair (0, 2)
  CHECK(neox_mode[2] == Approx(std::sin(1.0)));
  CHECK(neox_mode[1] == Approx(-std::sin(1.0)));  // pair (1, 3)
  CHECK(neox_mode[3] == Approx(std::cos(1.0)));

  // Position 0 is the identity; partial rotary leaves the tail alone.
  std::vector<float> v = {0.5f, -1.0f, 2.0f, 3.0f};
  ref::rope(v, 1, 4, 2, true, 10000.0f, 0, nullptr, 0.0f);
  CHECK(v == std::vector<float>{0.5f, -1.0f, 2.0f, 3.0f});
}

TEST_CASE("attention reference: one key returns its value, equal keys average", "[kernels]") {
  // 2 query heads sharing 1 kv head, head_dim 2, cache of 3 positions.
  const std::vector<float> q = {1.0f, 0.0f, 0.0f, 1.0f};
  const std::vector<float> k_cache = {0.0f, 0.0f, 0.0f, 0.0f, 9.0f, 9.0f};
  const std::vector<float> v_cache = {1.0f, 2.0f, 3.0f, 6.0f, 100.0f, 100.0f};
  const auto one = ref::attention(q, k_cache, v_cache, 2, 1, 2, 3, 1, 1.0f);
  CHECK(one == std::vector<float>{1.0f, 2.0f, 1.0f, 2.0f});
  const auto two = ref::attention(q, k_cache, v_cache, 2, 1, 2, 3, 2, 1.0f);
  CHECK(two[0] == Approx(2.0f));
  CHECK(two[1] == Approx(4.0f));
}

TEST_CASE("argmax reference picks the lowest index among ties", "[kernels]") {
  CHECK(ref::argmax({1.0f, 5.0f, 2.0f, 5.0f}) == 1);
  CHECK(ref::argmax({-1.0f}) == 0);
}
