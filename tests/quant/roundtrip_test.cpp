// quantize → dequantize error bounds for every quantizer, and structural
// properties of ggml's k-quant reference quantizers. Bit-exactness against the
// reference fixtures is in codecs_test.cpp; these checks hold on any data and
// say what went wrong in words (bounds set about 1.5x above the errors the
// reference algorithms give on this data).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "lib/quant/codecs.h"

namespace lanec {
namespace {

struct Bound {
  const char* name;
  GgmlType type;
  uint64_t block_elems;
  uint64_t block_bytes;
  double max_relative_rmse;  // per block: rms(x − x̂) / rms(x)
};

constexpr Bound kBounds[] = {
    {"q8_0", GgmlType::Q8_0, 32, 34, 0.015},     {"q4_0", GgmlType::Q4_0, 32, 18, 0.2},
    {"q4_1", GgmlType::Q4_1, 32, 20, 0.17},     {"q5_0", GgmlType::Q5_0, 32, 22, 0.1},
    {"q5_1", GgmlType::Q5_1, 32, 24, 0.09},     {"q4_K", GgmlType::Q4_K, 256, 144, 0.11},
    {"q5_K", GgmlType::Q5_K, 256, 176, 0.06},   {"q6_K", GgmlType::Q6_K, 256, 210, 0.03},
    {"mxfp4", GgmlType::MXFP4, 32, 17, 0.25},
};

std::vector<float> gaussian_blocks(uint64_t n, uint64_t block, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> log_scale(-3.0f, 3.0f);
  std::vector<float> x(n);
  for (uint64_t b = 0; b < n / block; ++b) {
    const float scale = std::pow(10.0f, log_scale(rng));
    const float shift = (b % 3 == 0) ? 0.5f * scale : 0.0f;  // some blocks off-centre
    for (uint64_t j = 0; j < block; ++j) x[b * block + j] = normal(rng) * scale + shift;
  }
  return x;
}

double worst_relative_rmse(const Bound& f, const std::vector<float>& x) {
  std::vector<uint8_t> q(x.size() / f.block_elems * f.block_bytes);
  std::vector<float> back(x.size());
  quantize_row(f.type, x.data(), q.data(), x.size());
  dequantize_row(f.type, q.data(), back.data(), back.size());
  double worst = 0;
  for (uint64_t b = 0; b < x.size() / f.block_elems; ++b) {
    double err2 = 0, sig2 = 0;
    for (uint64_t j = b * f.block_elems; j < (b + 1) * f.block_elems; ++j) {
      err2 += (double(x[j]) - back[j]) * (double(x[j]) - back[j]);
      sig2 += double(x[j]) * x[j];
    }
    worst = std::max(worst, std::sqrt(err2 / sig2));
  }
  return worst;
}

TEST_CASE("quantize then dequantize stays within each format's error bound", "[quant]") {
  for (const Bound& f : kBounds) {
    SECTION(f.name) {
      const std::vector<float> x = gaussian_blocks(256 * 64, f.block_elems, 7);
      const double worst = worst_relative_rmse(f, x);
      INFO(f.name << " worst relative rmse " << worst);
      CHECK(worst <= f.max_relative_rmse);
    }
  }
}

// Scale and min of sub-block s of a Q4_K/Q5_K block (6-bit packing).
void k4_scale_min(const uint8_t* block, int s, int* sc, int* m) {
  const uint8_t* p = block + 4;
  if (s < 4) {
    *sc = p[s] & 63;
    *m = p[s + 4] & 63;
  } else {
    *sc = (p[s + 4] & 15) | ((p[s - 4] >> 6) << 4);
    *m = (p[s + 4] >> 4) | ((p[s] >> 6) << 4);
  }
}

TEST_CASE("k-quant blocks have the shape ggml's reference quantizer gives", "[quant]") {
  const std::vector<float> x = gaussian_blocks(256 * 8, 256, 11);
  SECTION("q4_K and q5_K: the largest sub-block scale and min quantize to 63") {
    for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q5_K}) {
      const uint64_t bytes = type == GgmlType::Q4_K ? 144 : 176;
      std::vector<uint8_t> q(8 * bytes);
      quantize_row(type, x.data(), q.data(), x.size());
      for (int b = 0; b < 8; ++b) {
        int max_sc = 0, max_m = 0;
        for (int s = 0; s < 8; ++s) {
          int sc = 0, m = 0;
          k4_scale_min(q.data() + b * bytes, s, &sc, &m);
          max_sc = std::max(max_sc, sc);
          max_m = std::max(max_m, m);
        }
        CHECK(max_sc == 63);
        CHECK(max_m == 63);
      }
    }
  }
  SECTION("q4_K and q5_K: an all-positive block needs no mins") {
    std::vector<float> positive(256);
    for (size_t i = 0; i < positive.size(); ++i) positive[i] = 1.0f + std::fabs(x[i]);
    for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q5_K}) {
      std::vector<uint8_t> q(176);
      quantize_row(type, positive.data(), q.data(), 256);
      CHECK(fp16_to_f32(static_cast<uint16_t>(q[2] | (q[3] << 8))) == 0.0f);
      for (int s = 0; s < 8; ++s) {
        int sc = 0, m = 0;
        k4_scale_min(q.data(), s, &sc, &m);
        CHECK(m == 0);
        CHECK(sc > 0);
      }
    }
  }
  SECTION("q6_K: the sub-block of largest scale gets the int8 scale -128") {
    std::vector<uint8_t> q(8 * 210);
    quantize_row(GgmlType::Q6_K, x.data(), q.data(), x.size());
    for (int b = 0; b < 8; ++b) {
      int most_negative = 0;
      for (int s = 0; s < 16; ++s) {
        most_negative = std::min(most_negative, int(static_cast<int8_t>(q[b * 210 + 192 + s])));
      }
      CHECK(most_negative == -128);
    }
  }
  SECTION("all-zero blocks quantize to all-zero bytes and back to zeros") {
    const std::vector<float> zeros(256, 0.0f);
    for (GgmlType type : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_0,
                          GgmlType::Q4_1, GgmlType::Q5_1, GgmlType::MXFP4}) {
      std::vector<uint8_t> q(256 * 2, 0xCD);
      quantize_row(type, zeros.data(), q.data(), 256);
      std::vector<float> back(256, 1.0f);
      dequantize_row(type, q.data(), back.data(), 256);
      for (float v : back) CHECK(v == 0.0f);
    }
    std::vector<uint8_t> q6(210, 0xCD);
    quantize_row(GgmlType::Q6_K, zeros.data(), q6.data(), 256);
    for (uint8_t byte : q6) CHECK(byte == 0);
  }
}

}  // namespace
}  // namespace lanec

namespace lanec {
namespace {

TEST_CASE("non-finite inputs quantize without undefined behaviour", "[quant]") {
  // ggml leaves these cases undefined; lanec only promises no crash and the
  // same bytes every time, and that finite blocks next to them are untouched.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(512, 0.5f);
  x[3] = inf;
  x[40] = nan;
  x[300] = -inf;
  for (const Bound& f : kBounds) {
    INFO(f.name);
    std::vector<uint8_t> first(512 / f.block_elems * f.block_bytes);
    std::vector<uint8_t> second(first.size());
    quantize_row(f.type, x.data(), first.data(), x.size());
    quantize_row(f.type, x.data(), second.data(), x.size());
    CHECK(first == second);
    std::vector<float> back(x.size());
    dequantize_row(f.type, first.data(), back.data(), back.size());
    // The last block (elements 256.. for 32-blocks, none for k-quants) is finite.
    if (f.block_elems == 32) {
      for (size_t i = 480; i < 512; ++i) CHECK(back[i] == Approx(0.5f).epsilon(0.15));
    }
  }
}

}  // namespace
}  // namespace lanec
