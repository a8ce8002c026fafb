// MXFP4 (OCP microscaling FP4): 32 elements in 17 bytes.
//   block { u8 e; u8 qs[16]; }      x[j] = kv[code_j] · scale(e)
// Codes are E2M1 nibbles stored like Q4_0 (element j in the low nibble of
// qs[j], element j+16 in the high nibble). ggml keeps the E2M1 values doubled,
// kv = {0, 1, 2, 3, 4, 6, 8, 12, 0, −1, −2, −3, −4, −6, −8, −12}, and halves the
// E8M0 scale to compensate: scale(e) = 2^(e − 128), built directly as float
// bits ((e − 1) << 23 for e ≥ 2; 0x00200000 << e, a subnormal, for e < 2). That
// is ggml_e8m0_to_fp32_half; e = 255 is an ordinary finite 2^127 here, not NaN.
// Reference quantizer: e = floor(log2(max|x|)) − 2 + 127 (0 for an all-zero
// block), each element takes the first code of least |kv·scale − x|.
#include <cmath>
#include <cstring>

#include "lib/quant/block_codecs.h"

namespace lanec::quant {
namespace {

constexpr int8_t kDoubledE2M1[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

float e8m0_to_f32_half(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint8_t nearest_code(float x, float scale) {
  uint8_t best = 0;
  float best_err = std::fabs(static_cast<float>(kDoubledE2M1[0]) * scale - x);
  for (uint8_t i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kDoubledE2M1[i]) * scale - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void dequantize_mxfp4(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kMxfp4Bytes, dst += kQk32) {
    const float d = e8m0_to_f32_half(src[0]);
    const uint8_t* qs = src + 1;
    for (uint64_t j = 0; j < kQk32 / 2; ++j) {
      dst[j] = static_cast<float>(kDoubledE2M1[qs[j] & 0x0F]) * d;
      dst[j + kQk32 / 2] = static_cast<float>(kDoubledE2M1[qs[j] >> 4]) * d;
    }
  }
}

void quantize_mxfp4(const float* src, uint8_t* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQk32, dst += kMxfp4Bytes) {
    float amax = 0.0f;
    for (uint64_t j = 0; j < kQk32; ++j) {
      const float a = std::fabs(src[j]);
      if (a > amax) amax = a;
    }
    // ggml's cast is undefined below 2^-125 (negative) and for inf/NaN; clamp
    // into [0, 255] instead (a NaN block gets e = 0).
    const float exponent = amax > 0.0f ? std::floor(std::log2(amax)) - 2.0f + 127.0f : 0.0f;
    const auto e = static_cast<uint8_t>(exponent > 0.0f ? std::fmin(exponent, 255.0f) : 0.0f);
    const float d = e8m0_to_f32_half(e);
    dst[0] = e;
    for (uint64_t j = 0; j < kQk32 / 2; ++j) {
      dst[1 + j] = static_cast<uint8_t>(nearest_code(src[j], d) |
                                        (nearest_code(src[j + kQk32 / 2], d) << 4));
    }
  }
}

}  // namespace lanec::quant
