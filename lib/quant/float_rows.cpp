// Plain float rows: F32 (4 bytes), F16 and BF16 (2 bytes, little-endian), one
// element a "block". Conversions are those of half_float.cpp.
#include <cstring>

#include "lib/quant/block_codecs.h"
#include "lib/quant/codecs.h"

namespace lanec::quant {

void dequantize_f32(const uint8_t* src, float* dst, uint64_t n) {
  std::memcpy(dst, src, n * sizeof(float));
}

void dequantize_f16(const uint8_t* src, float* dst, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(load_u16(src + 2 * i));
}

void dequantize_bf16(const uint8_t* src, float* dst, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(src + 2 * i));
}

void quantize_f32(const float* src, uint8_t* dst, uint64_t n) {
  std::memcpy(dst, src, n * sizeof(float));
}

void quantize_f16(const float* src, uint8_t* dst, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) store_u16(dst + 2 * i, f32_to_fp16(src[i]));
}

void quantize_bf16(const float* src, uint8_t* dst, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) store_u16(dst + 2 * i, f32_to_bf16(src[i]));
}

}  // namespace lanec::quant
