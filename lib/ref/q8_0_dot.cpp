#include "lib/ref/q8_0_dot.h"

#include <cstring>

#include "lib/quant/codecs.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LANEC_Q8_0_AVX2 1
#endif

namespace lanec {

#ifdef LANEC_Q8_0_AVX2
namespace {

constexpr int64_t kBlockElems = 32;
constexpr uint64_t kBlockBytes = 34;  // fp16 d + 32 int8

// d of a block as fp16_to_f32 gives it. F16C converts every finite half
// exactly; infinities and NaNs (exponent all ones) go through fp16_to_f32
// so that NaN payloads match bit for bit.
__attribute__((target("avx2,f16c"))) inline float block_scale(const uint8_t* block) {
  uint16_t h;
  std::memcpy(&h, block, sizeof h);
  if ((h & 0x7C00u) == 0x7C00u) return fp16_to_f32(h);
  return _cvtsh_ss(h);
}

// 8 values float(q[j]) * d, as dequantize_q8_0 computes them.
__attribute__((target("avx2,f16c"))) inline __m256 dequant8(const uint8_t* q, __m256 d) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q));
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), d);
}

// The executor's final combination of the 8 partial sums (+ the empty tail).
__attribute__((target("avx2,f16c"))) inline float combine(__m256 acc) {
  alignas(32) float a[8];
  _mm256_store_ps(a, acc);
  const float tail = 0.0f;
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) + tail;
}

template <int kRows>
__attribute__((target("avx2,f16c"))) void dot_rows(const uint8_t* data, uint64_t row_bytes,
                                                   const float* x, int64_t n, float* y) {
  __m256 acc[kRows];
  for (int k = 0; k < kRows; ++k) acc[k] = _mm256_setzero_ps();
  const int64_t blocks = n / kBlockElems;
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * kBlockElems;
    const __m256 x0 = _mm256_loadu_ps(xb), x1 = _mm256_loadu_ps(xb + 8);
    const __m256 x2 = _mm256_loadu_ps(xb + 16), x3 = _mm256_loadu_ps(xb + 24);
    for (int k = 0; k < kRows; ++k) {
      const uint8_t* block = data + static_cast<uint64_t>(k) * row_bytes +
                             static_cast<uint64_t>(b) * kBlockBytes;
      const __m256 d = _mm256_set1_ps(block_scale(block));
      const uint8_t* q = block + 2;
      // acc[j] += w[i + j] * x[i + j], one multiply then one add, i by 8.
      acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(dequant8(q, d), x0));
      acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(dequant8(q + 8, d), x1));
      acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(dequant8(q + 16, d), x2));
      acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(dequant8(q + 24, d), x3));
    }
  }
  for (int k = 0; k < kRows; ++k) y[k] = combine(acc[k]);
}

}  // namespace

bool q8_0_dot_available() {
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return available;
}

void q8_0_dot_rows(const uint8_t* data, uint64_t row_bytes, int64_t r0, int64_t count,
                   const float* x, int64_t n, float* y) {
  int64_t k = 0;
  for (; k + 4 <= count; k += 4)
    dot_rows<4>(data + static_cast<uint64_t>(r0 + k) * row_bytes, row_bytes, x, n, y + k);
  for (; k < count; ++k)
    dot_rows<1>(data + static_cast<uint64_t>(r0 + k) * row_bytes, row_bytes, x, n, y + k);
}

#else

bool q8_0_dot_available() { return false; }

void q8_0_dot_rows(const uint8_t*, uint64_t, int64_t, int64_t, const float*, int64_t, float*) {}

#endif

}  // namespace lanec
