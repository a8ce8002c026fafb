// Plain C++ conversions and dequantizers used by the kernel references:
// f16 / bf16 bit patterns to f32 (and f32 to f16, round to nearest even),
// and whole-row dequantization of every weight format the kernels read.
// Written from the format definitions (kernels/blocks.h), independent of the
// device code, so a sweep compares two separate implementations.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../blocks.h"

namespace lanec::kernels::ref {

inline float bits_to_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t f32_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 31u, man = h & 1023u;
  float mag;
  if (exp == 0) {
    mag = std::ldexp(static_cast<float>(man), -24);  // subnormal
  } else if (exp == 31) {
    mag = man ? NAN : INFINITY;
  } else {
    mag = std::ldexp(static_cast<float>(man | 1024u), static_cast<int>(exp) - 25);
  }
  return sign ? -mag : mag;
}

// Round to nearest even; overflow to infinity. Used for test data and f16 caches.
inline uint16_t f32_to_f16(float f) {
  const uint32_t sign = (f32_to_bits(f) >> 16) & 0x8000u;
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < std::ldexp(1.0f, -14)) {  // subnormal: units of 2^-24
    const float units = std::nearbyint(a * std::ldexp(1.0f, 24));
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(units));
  }
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const float scaled = std::nearbyint(std::ldexp(a, 11 - e));  // 11 significant bits, in [1024, 2048]
  uint32_t man = static_cast<uint32_t>(scaled);
  int exp = e - 1 + 15;
  if (man == 2048u) {
    man = 1024u;
    ++exp;
  }
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | (man & 1023u));
}

inline float bf16_to_f32(uint16_t b) { return bits_to_f32(static_cast<uint32_t>(b) << 16); }

inline uint16_t rd16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

inline void dequant_q8_0_row(const uint8_t* row, int n, float* out) {
  for (int b = 0; b < n / kQ8Block; ++b) {
    const uint8_t* blk = row + b * 34;
    const float d = f16_to_f32(rd16(blk));
    for (int j = 0; j < kQ8Block; ++j) out[b * 32 + j] = d * static_cast<float>(static_cast<int8_t>(blk[2 + j]));
  }
}

inline void dequant_q4_0_row(const uint8_t* row, int n, float* out) {
  for (int b = 0; b < n / kQ8Block; ++b) {
    const uint8_t* blk = row + b * 18;
    const float d = f16_to_f32(rd16(blk));
    for (int j = 0; j < 16; ++j) {
      out[b * 32 + j] = d * static_cast<float>((blk[2 + j] & 15) - 8);
      out[b * 32 + j + 16] = d * static_cast<float>((blk[2 + j] >> 4) - 8);
    }
  }
}

inline void dequant_q4_k_row(const uint8_t* row, int n, float* out) {
  for (int b = 0; b < n / kKSuperBlock; ++b) {
    const uint8_t* blk = row + b * 144;
    const float d = f16_to_f32(rd16(blk)), dmin = f16_to_f32(rd16(blk + 2));
    const uint8_t* sc = blk + 4;
    // 8 sub-blocks: 6-bit scale/min; sub-blocks 4..7 borrow the top 2 bits of bytes 0..7.
    int scale[8], minv[8];
    for (int j = 0; j < 4; ++j) {
      scale[j] = sc[j] & 63;
      minv[j] = sc[j + 4] & 63;
      scale[j + 4] = (sc[j + 8] & 15) | ((sc[j] >> 6) << 4);
      minv[j + 4] = (sc[j + 8] >> 4) | ((sc[j + 4] >> 6) << 4);
    }
    float* y = out + b * kKSuperBlock;
    for (int g = 0; g < 4; ++g) {  // 64 elements from 32 bytes: low nibbles then high nibbles
      const uint8_t* q = blk + 16 + 32 * g;
      for (int l = 0; l < 32; ++l) {
        y[64 * g + l] = d * static_cast<float>(scale[2 * g]) * static_cast<float>(q[l] & 15) -
                        dmin * static_cast<float>(minv[2 * g]);
        y[64 * g + 32 + l] = d * static_cast<float>(scale[2 * g + 1]) * static_cast<float>(q[l] >> 4) -
                             dmin * static_cast<float>(minv[2 * g + 1]);
      }
    }
  }
}

inline void dequant_q6_k_row(const uint8_t* row, int n, float* out) {
  for (int b = 0; b < n / kKSuperBlock; ++b) {
    const uint8_t* blk = row + b * 210;
    const float d = f16_to_f32(rd16(blk + 208));
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = blk + 64 * half;
      const uint8_t* qh = blk + 128 + 32 * half;
      const int8_t* sc = reinterpret_cast<const int8_t*>(blk + 192) + 8 * half;
      float* y = out + b * kKSuperBlock + 128 * half;
      for (int l = 0; l < 32; ++l) {
        const int q0 = ((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q1 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        const int s = l / 16;
        y[l] = d * static_cast<float>(sc[s]) * static_cast<float>(q0);
        y[l + 32] = d * static_cast<float>(sc[s + 2]) * static_cast<float>(q1);
        y[l + 64] = d * static_cast<float>(sc[s + 4]) * static_cast<float>(q2);
        y[l + 96] = d * static_cast<float>(sc[s + 6]) * static_cast<float>(q3);
      }
    }
  }
}

// The block max of block b of x.
inline float q8_block_max(const float* x, int b) {
  float amax = 0.0f;
  for (int j = 0; j < kQ8Block; ++j) amax = std::fmax(amax, std::fabs(x[b * kQ8Block + j]));
  return amax;
}

// Int8 activation quantization (blocks.h layout), the same arithmetic as the kernel.
inline void quantize_q8(const float* x, int n, int8_t* qs, float* d) {
  for (int b = 0; b < n / kQ8Block; ++b) {
    float r = 0.0f;
    q8_scales(q8_block_max(x, b), d[b], r);
    for (int j = 0; j < kQ8Block; ++j)
      qs[b * kQ8Block + j] = static_cast<int8_t>(r > 0.0f ? std::round(x[b * kQ8Block + j] * r) : 0.0f);
  }
}

// The low words of the two-word form (quantize.cuh quantize_low_word) for
// the high words and scales quantize_q8 gave (r formed again from the block).
inline void quantize_q8_low(const float* x, int n, const int8_t* qs, const float* d, int8_t* lo) {
  for (int b = 0; b < n / kQ8Block; ++b) {
    float d_again = 0.0f, r = 0.0f;
    q8_scales(q8_block_max(x, b), d_again, r);
    for (int j = 0; j < kQ8Block; ++j) {
      const int i = b * kQ8Block + j;
      if (!(r > 0.0f)) {
        lo[i] = 0;
        continue;
      }
      const float l = std::round(std::fma(-static_cast<float>(qs[i]), d[b], x[i]) * (254.0f * r));
      lo[i] = static_cast<int8_t>(std::fmin(127.0f, std::fmax(-127.0f, l)));
    }
  }
}

}  // namespace lanec::kernels::ref
