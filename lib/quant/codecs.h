// CPU quant codecs with ggml's exact block layouts (ggml-common.h,
// ggml-quants.c). Dequantization is bit-exact with ggml's reference code, and
// quantization with ggml's quantize_row_*_ref compiled without FMA contraction
// (tests/quant/ proves both against fixtures from the gguf package and ggml).
// One codec family a file: q8_0.cpp, legacy_quants.cpp (q4_0 q4_1 q5_0 q5_1),
// k_quants.cpp (q4_K q5_K q6_K), mxfp4.cpp, float_rows.cpp, half_float.cpp;
// each file's top describes its block layouts.
#pragma once

#include <cstdint>

#include "lib/gguf/ggml_types.h"

namespace lanec {

// Whether a codec exists: exactly the kGgmlTypes rows marked ggml_use::kRead
// (and kQuantize), as tests/quant checks.
bool can_dequantize(GgmlType type);
bool can_quantize(GgmlType type);

// n must be a multiple of the block size; src holds n/block_elems blocks.
// Throws lanec::Error for an unsupported type or a bad n.
void dequantize_row(GgmlType type, const uint8_t* src, float* dst, uint64_t n);
// Quantizes n floats with ggml's reference (non-imatrix) quantizer.
void quantize_row(GgmlType type, const float* src, uint8_t* dst, uint64_t n);

// Half-precision helpers shared by codecs, synth and the reference executor.
float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);        // round to nearest even
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);        // round to nearest even, as ggml does (NaN kept quiet)
// v as a value of `type` stores it (f16/bf16 rounded; any other type as is).
float round_to(GgmlType type, float v);

}  // namespace lanec
