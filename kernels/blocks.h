// Quantized block layouts shared by the CUDA kernels and the plain C++
// references. Plain C++ (no CUDA types) so that host code can include it.
// Half-precision fields are stored as their raw 16 bits (uint16_t); the
// kernels and the references convert them with their own helpers.
// Layouts are the GGUF on-disk ones (facts of the file format), plus the two
// lanec layouts the GEMV kernels stream with 16-byte loads (see docs/kernels.md).
#pragma once

#include <cstdint>

#include "limits.h"  // LANEC_HOST_DEVICE

namespace lanec::kernels {

constexpr int kQ8Block = 32;     // elements of a Q8_0 / Q4_0 / int8-activation block
constexpr int kKSuperBlock = 256;  // elements of a Q4_K / Q6_K super-block

// GGUF Q8_0: 32 elements = d * qs[i].
struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kQ8Block];
};
static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 blocks are 34 bytes in GGUF files");

// GGUF Q4_0: element j < 16 is (qs[j] & 15) - 8, element j + 16 is (qs[j] >> 4) - 8, times d.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQ8Block / 2];
};
static_assert(sizeof(BlockQ4_0) == 18, "Q4_0 blocks are 18 bytes in GGUF files");

// GGUF Q4_K: 256 elements in 8 sub-blocks of 32, each with a 6-bit scale and a
// 6-bit min packed into scales[12]; element = d*sc*q - dmin*m.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kKSuperBlock / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "Q4_K blocks are 144 bytes in GGUF files");

// GGUF Q6_K: 256 elements, 6-bit values split into low 4 bits (ql) and high
// 2 bits (qh), 16 int8 sub-block scales; element = d * scales[s] * (q - 32).
struct BlockQ6_K {
  uint8_t ql[kKSuperBlock / 2];
  uint8_t qh[kKSuperBlock / 4];
  int8_t scales[kKSuperBlock / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "Q6_K blocks are 210 bytes in GGUF files");

// lanec "Q8_0 split" weight layout of a [rows, k] matrix in one buffer: all
// int8 values row-major first (rows*k bytes, so each row starts 16-byte
// aligned when k % 16 == 0), then the f16 scales row-major (rows * k/32).
// Same bytes as GGUF Q8_0, repacked once at load by launch_repack_q8_0.
inline uint64_t q8_0_split_scale_offset(uint64_t rows, uint64_t k) { return rows * k; }
inline uint64_t q8_0_split_bytes(uint64_t rows, uint64_t k) { return rows * k + rows * (k / kQ8Block) * 2; }

// Int8 activation layout (Q8_1-style, split into planes): a vector of n f32
// values becomes qs[n] int8 and d[n/32] f32 with d[b] = m/127 for the
// block's m = max|x| and qs[i] = round(x[i] r) with r = 127/m formed beside
// d (multiplies, so no divide waits on another in the launches that
// quantize). No block sum is stored: the only int8 GEMV weight format
// (Q8_0) has no offset term that would need it. The two-word form
// (activations: two-pass-int8) adds a plane lo[n] between qs and d:
// lo[i] = round((x[i] - qs[i] d[b]) (254 r)), clamped to +-127, so
// x[i] ~ d[b] (qs[i] + lo[i]/254). A block whose m is below kQ8MinMax or
// infinite has r = 0, so its words are 0; its d is 0 when m is that small
// and infinite for an infinite m, so the GEMV's sums show it.
constexpr float kQ8MinMax = 0x1p-96f;  // 127/m stays finite far above this

// A block's scale d = m/127 and reciprocal r = 127/m from its max m, formed
// side by side, as above; the kernels and the reference share this one
// definition, so their words match bit for bit.
LANEC_HOST_DEVICE inline void q8_scales(float amax, float& d, float& r) {
  d = amax < kQ8MinMax ? 0.0f : amax / 127.0f;
  r = amax >= kQ8MinMax ? 127.0f / amax : 0.0f;  // 127/inf is 0
}

}  // namespace lanec::kernels
