// Internal to lib/quant: block geometry of each ggml format and the per-family
// row codecs that codecs.cpp dispatches to. The byte counts are spelled out
// field by field (the codecs index into those fields) and checked at compile
// time against kGgmlTypes, the one table of formats. Every row function takes
// a whole number of blocks.
#pragma once

#include <cstdint>
#include <cstring>

#include "lib/gguf/ggml_types.h"

namespace lanec::quant {

constexpr uint64_t kQk32 = 32;    // elements per block of the legacy formats and MXFP4
constexpr uint64_t kQkK = 256;    // elements per super-block of the k-quants

constexpr uint64_t kQ4_0Bytes = 2 + 16;
constexpr uint64_t kQ4_1Bytes = 2 + 2 + 16;
constexpr uint64_t kQ5_0Bytes = 2 + 4 + 16;
constexpr uint64_t kQ5_1Bytes = 2 + 2 + 4 + 16;
constexpr uint64_t kQ8_0Bytes = 2 + 32;
constexpr uint64_t kQ4_KBytes = 2 + 2 + 12 + 128;
constexpr uint64_t kQ5_KBytes = 2 + 2 + 12 + 32 + 128;
constexpr uint64_t kQ6_KBytes = 128 + 64 + 16 + 2;
constexpr uint64_t kMxfp4Bytes = 1 + 16;

// True when the table gives `type` blocks of `elems` elements in `bytes` bytes.
constexpr bool table_agrees(GgmlType type, uint64_t elems, uint64_t bytes) {
  const GgmlTypeTraits* traits = ggml_find_traits(type);
  return traits != nullptr && traits->block_elems == elems && traits->block_bytes == bytes;
}
static_assert(table_agrees(GgmlType::Q4_0, kQk32, kQ4_0Bytes), "q4_0 differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::Q4_1, kQk32, kQ4_1Bytes), "q4_1 differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::Q5_0, kQk32, kQ5_0Bytes), "q5_0 differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::Q5_1, kQk32, kQ5_1Bytes), "q5_1 differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::Q8_0, kQk32, kQ8_0Bytes), "q8_0 differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::Q4_K, kQkK, kQ4_KBytes), "q4_K differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::Q5_K, kQkK, kQ5_KBytes), "q5_K differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::Q6_K, kQkK, kQ6_KBytes), "q6_K differs from kGgmlTypes");
static_assert(table_agrees(GgmlType::MXFP4, kQk32, kMxfp4Bytes), "mxfp4 differs from kGgmlTypes");

// Little-endian loads and stores of the fp16 scales inside blocks (blocks are
// byte-packed, so no alignment may be assumed).
inline uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xFF);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// Round to nearest, ties to even, for |x| < 2^22: ggml's nearest_int. Adding
// 1.5·2^23 pushes the integer part into the low mantissa bits.
inline int nearest_int(float x) {
  float shifted = x + 12582912.f;
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007fffff) - 0x00400000;
}

// ggml's (int8_t)(float) cast: truncation toward zero keeping the low byte of
// the 32-bit result, as x86 computes it. Out-of-range or NaN inputs (undefined
// behaviour in C and C++) give 0 here, the low byte of x86's 0x80000000.
inline int8_t truncate_to_int8(float x) {
  if (!(x > -2147483648.0f && x < 2147483648.0f)) return 0;
  return static_cast<int8_t>(static_cast<int32_t>(x) & 0xFF);
}

// `blocks` counts whole blocks of the named format.
void dequantize_f32(const uint8_t* src, float* dst, uint64_t n);
void dequantize_f16(const uint8_t* src, float* dst, uint64_t n);
void dequantize_bf16(const uint8_t* src, float* dst, uint64_t n);
void quantize_f32(const float* src, uint8_t* dst, uint64_t n);
void quantize_f16(const float* src, uint8_t* dst, uint64_t n);
void quantize_bf16(const float* src, uint8_t* dst, uint64_t n);

void dequantize_q8_0(const uint8_t* src, float* dst, uint64_t blocks);
void quantize_q8_0(const float* src, uint8_t* dst, uint64_t blocks);

void dequantize_q4_0(const uint8_t* src, float* dst, uint64_t blocks);
void dequantize_q4_1(const uint8_t* src, float* dst, uint64_t blocks);
void dequantize_q5_0(const uint8_t* src, float* dst, uint64_t blocks);
void dequantize_q5_1(const uint8_t* src, float* dst, uint64_t blocks);
void quantize_q4_0(const float* src, uint8_t* dst, uint64_t blocks);
void quantize_q4_1(const float* src, uint8_t* dst, uint64_t blocks);
void quantize_q5_0(const float* src, uint8_t* dst, uint64_t blocks);
void quantize_q5_1(const float* src, uint8_t* dst, uint64_t blocks);

void dequantize_q4_k(const uint8_t* src, float* dst, uint64_t blocks);
void dequantize_q5_k(const uint8_t* src, float* dst, uint64_t blocks);
void dequantize_q6_k(const uint8_t* src, float* dst, uint64_t blocks);
void quantize_q4_k(const float* src, uint8_t* dst, uint64_t blocks);
void quantize_q5_k(const float* src, uint8_t* dst, uint64_t blocks);
void quantize_q6_k(const float* src, uint8_t* dst, uint64_t blocks);

void dequantize_mxfp4(const uint8_t* src, float* dst, uint64_t blocks);
void quantize_mxfp4(const float* src, uint8_t* dst, uint64_t blocks);

}  // namespace lanec::quant
