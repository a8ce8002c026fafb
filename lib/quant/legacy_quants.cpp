// The 32-element legacy formats. Element j of a block lives in the low nibble
// of qs[j % 16] for j < 16 and in the high nibble for j ≥ 16.
//   Q4_0 (18 B) { fp16 d; u8 qs[16]; }                 x = d · (q − 8)
//   Q4_1 (20 B) { fp16 d; fp16 m; u8 qs[16]; }         x = d · q + m
//   Q5_0 (22 B) { fp16 d; u8 qh[4]; u8 qs[16]; }       x = d · (q − 16)
//   Q5_1 (24 B) { fp16 d; fp16 m; u8 qh[4]; u8 qs[16]; } x = d · q + m
// For Q5_*, qh is a little-endian u32 whose bit j is the fifth bit of element j.
// Reference quantizers (ggml's *_ref):
//   Q4_0/Q5_0: d = v / −8 (−16), where v is the first element of largest |v|;
//              q = min(15 (31), trunc(x/d + 8.5 (16.5))), x/d computed as x·(1/d).
//   Q4_1/Q5_1: d = (max − min) / 15 (31), m = min;
//              q = min(15 (31), trunc((x − min)·(1/d) + 0.5)).
#include <cfloat>
#include <cmath>

#include "lib/quant/block_codecs.h"
#include "lib/quant/codecs.h"

namespace lanec::quant {
namespace {

constexpr uint64_t kHalf = kQk32 / 2;

// The element of largest magnitude, keeping its sign (the first on ties).
float signed_absmax(const float* x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (uint64_t j = 0; j < kQk32; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

void min_max(const float* x, float* min, float* max) {
  *min = FLT_MAX;
  *max = -FLT_MAX;
  for (uint64_t j = 0; j < kQk32; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

// ggml casts through int8_t, truncating toward zero, then caps at `top`.
uint8_t truncate_code(float v, int top) {
  const int q = truncate_to_int8(v);
  return static_cast<uint8_t>(q < top ? q : top);
}

// Packs 32 codes: low nibbles into qs, bit 4 of each code into qh (if given).
void pack_codes(const uint8_t* codes, uint8_t* qs, uint8_t* qh) {
  uint32_t high = 0;
  for (uint64_t j = 0; j < kHalf; ++j) {
    qs[j] = static_cast<uint8_t>((codes[j] & 0x0F) | ((codes[j + kHalf] & 0x0F) << 4));
    high |= static_cast<uint32_t>((codes[j] >> 4) & 1u) << j;
    high |= static_cast<uint32_t>((codes[j + kHalf] >> 4) & 1u) << (j + kHalf);
  }
  if (qh != nullptr) {
    for (int k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(high >> (8 * k));
  }
}

}  // namespace

void dequantize_q4_0(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ4_0Bytes, dst += kQk32) {
    const float d = fp16_to_f32(load_u16(src));
    const uint8_t* qs = src + 2;
    for (uint64_t j = 0; j < kHalf; ++j) {
      dst[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
      dst[j + kHalf] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_q4_1(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ4_1Bytes, dst += kQk32) {
    const float d = fp16_to_f32(load_u16(src));
    const float m = fp16_to_f32(load_u16(src + 2));
    const uint8_t* qs = src + 4;
    for (uint64_t j = 0; j < kHalf; ++j) {
      dst[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
      dst[j + kHalf] = static_cast<float>(qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_q5_0(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ5_0Bytes, dst += kQk32) {
    const float d = fp16_to_f32(load_u16(src));
    const uint32_t qh = load_u32(src + 2);
    const uint8_t* qs = src + 6;
    for (uint64_t j = 0; j < kHalf; ++j) {
      const int lo = static_cast<int>((qs[j] & 0x0F) | (((qh >> j) & 1u) << 4));
      const int hi = static_cast<int>((qs[j] >> 4) | (((qh >> (j + kHalf)) & 1u) << 4));
      dst[j] = static_cast<float>(lo - 16) * d;
      dst[j + kHalf] = static_cast<float>(hi - 16) * d;
    }
  }
}

void dequantize_q5_1(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ5_1Bytes, dst += kQk32) {
    const float d = fp16_to_f32(load_u16(src));
    const float m = fp16_to_f32(load_u16(src + 2));
    const uint32_t qh = load_u32(src + 4);
    const uint8_t* qs = src + 8;
    for (uint64_t j = 0; j < kHalf; ++j) {
      const uint32_t lo = (qs[j] & 0x0Fu) | (((qh >> j) & 1u) << 4);
      const uint32_t hi = (qs[j] >> 4u) | (((qh >> (j + kHalf)) & 1u) << 4);
      dst[j] = static_cast<float>(lo) * d + m;
      dst[j + kHalf] = static_cast<float>(hi) * d + m;
    }
  }
}

namespace {

// Q4_0 and Q5_0 (Bits 4 and 5): { fp16 d; [u8 qh[4];] u8 qs[16]; }.
template <int Bits>
void quantize_symmetric(const float* src, uint8_t* dst, uint64_t blocks, uint64_t block_bytes) {
  static_assert(Bits == 4 || Bits == 5, "Q4_0 or Q5_0");
  constexpr int kTop = (1 << Bits) - 1;
  constexpr float kHalfRange = static_cast<float>(1 << (Bits - 1));
  constexpr uint64_t kQs = Bits == 5 ? 6 : 2;
  uint8_t codes[kQk32];
  for (uint64_t b = 0; b < blocks; ++b, src += kQk32, dst += block_bytes) {
    const float d = signed_absmax(src) / -kHalfRange;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (uint64_t j = 0; j < kQk32; ++j) codes[j] = truncate_code(src[j] * id + (kHalfRange + 0.5f), kTop);
    store_u16(dst, f32_to_fp16(d));
    pack_codes(codes, dst + kQs, Bits == 5 ? dst + 2 : nullptr);
  }
}

// Q4_1 and Q5_1 (Bits 4 and 5): { fp16 d; fp16 m; [u8 qh[4];] u8 qs[16]; }.
template <int Bits>
void quantize_affine(const float* src, uint8_t* dst, uint64_t blocks, uint64_t block_bytes) {
  static_assert(Bits == 4 || Bits == 5, "Q4_1 or Q5_1");
  constexpr int kTop = (1 << Bits) - 1;
  constexpr uint64_t kQs = Bits == 5 ? 8 : 4;
  uint8_t codes[kQk32];
  for (uint64_t b = 0; b < blocks; ++b, src += kQk32, dst += block_bytes) {
    float min = 0.0f;
    float max = 0.0f;
    min_max(src, &min, &max);
    const float d = (max - min) / static_cast<float>(kTop);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (uint64_t j = 0; j < kQk32; ++j) codes[j] = truncate_code((src[j] - min) * id + 0.5f, kTop);
    store_u16(dst, f32_to_fp16(d));
    store_u16(dst + 2, f32_to_fp16(min));
    pack_codes(codes, dst + kQs, Bits == 5 ? dst + 4 : nullptr);
  }
}

}  // namespace

void quantize_q4_0(const float* src, uint8_t* dst, uint64_t blocks) {
  quantize_symmetric<4>(src, dst, blocks, kQ4_0Bytes);
}
void quantize_q5_0(const float* src, uint8_t* dst, uint64_t blocks) {
  quantize_symmetric<5>(src, dst, blocks, kQ5_0Bytes);
}
void quantize_q4_1(const float* src, uint8_t* dst, uint64_t blocks) {
  quantize_affine<4>(src, dst, blocks, kQ4_1Bytes);
}
void quantize_q5_1(const float* src, uint8_t* dst, uint64_t blocks) {
  quantize_affine<5>(src, dst, blocks, kQ5_1Bytes);
}

}  // namespace lanec::quant
