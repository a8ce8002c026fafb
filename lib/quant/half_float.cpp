// IEEE binary16 and bfloat16 conversions, bit-exact with ggml's CPU path.
//  - fp16 → f32 is exact (every half is a float).
//  - f32 → fp16 rounds to nearest even; overflow gives ±inf; NaN stays NaN
//    with the quiet bit set and the top payload bits kept, as x86's F16C
//    conversion does (ggml's path on x86). ggml's portable fallback returns a
//    bare 0x7E00 and numpy does not force the quiet bit: only NaN-ness is
//    common ground, so nothing should depend on a NaN's payload.
//  - bf16 is the top half of an f32. f32 → bf16 rounds to nearest even by
//    adding 0x7fff plus the lowest kept bit; a NaN is truncated and forced
//    quiet (bit 6 of the bf16), exactly ggml_compute_fp32_to_bf16.
#include <cstring>

#include "lib/quant/codecs.h"

namespace lanec {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return bits_float(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa · 2^-24, exact in f32.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
  return sign ? -magnitude : magnitude;
}

uint16_t f32_to_fp16(float f) {
  const uint32_t bits = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {  // NaN
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  }
  if (magnitude >= 0x38800000u) {  // at least 2^-14: a normal half (or overflow)
    const uint32_t rebased = magnitude - 0x38000000u;  // exponent bias 127 → 15
    uint32_t half = rebased >> 13;
    const uint32_t rest = rebased & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    if (half >= 0x7C00u) half = 0x7C00u;  // overflow and inf both end at inf
    return static_cast<uint16_t>(sign | half);
  }
  // Subnormal half (or zero): value in units of 2^-24 is mant · 2^(exp-126).
  const uint32_t exponent = magnitude >> 23;
  const uint32_t shift = 126u - exponent;  // ≥ 14 here
  if (shift > 24u) return sign;            // below half the smallest subnormal
  const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
  uint32_t half = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1u);
  const uint32_t tie = 1u << (shift - 1u);
  if (rest > tie || (rest == tie && (half & 1u))) ++half;  // may carry into the smallest normal
  return static_cast<uint16_t>(sign | half);
}

float bf16_to_f32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t bits = float_bits(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

float round_to(GgmlType type, float v) {
  switch (type) {
    case GgmlType::F16: return fp16_to_f32(f32_to_fp16(v));
    case GgmlType::BF16: return bf16_to_f32(f32_to_bf16(v));
    default: return v;
  }
}

}  // namespace lanec
