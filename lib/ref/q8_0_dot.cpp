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

// acc[j] += w[i + j] * x[i + j] for one 32-element block, one multiply then
// one add per step, i by 8.
__attribute__((target("avx2,f16c"))) inline __m256 block_dot(__m256 acc, const uint8_t* block,
                                                              __m256 x0, __m256 x1, __m256 x2,
                                                              __m256 x3) {
  const __m256 d = _mm256_set1_ps(block_scale(block));
  const uint8_t* q = block + 2;
  acc = _mm256_add_ps(acc, _mm256_mul_ps(dequant8(q, d), x0));
  acc = _mm256_add_ps(acc, _mm256_mul_ps(dequant8(q + 8, d), x1));
  acc = _mm256_add_ps(acc, _mm256_mul_ps(dequant8(q + 16, d), x2));
  return _mm256_add_ps(acc, _mm256_mul_ps(dequant8(q + 24, d), x3));
}

// Four rows side by side (independent add chains), accumulators in registers.
__attribute__((target("avx2,f16c"))) void dot_4_rows(const uint8_t* data, uint64_t row_bytes,
                                                     const float* x, int64_t n, float* y) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const uint8_t* r0 = data;
  const uint8_t* r1 = r0 + row_bytes;
  const uint8_t* r2 = r1 + row_bytes;
  const uint8_t* r3 = r2 + row_bytes;
  for (int64_t i = 0; i < n; i += kBlockElems) {
    const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
    const __m256 x2 = _mm256_loadu_ps(x + i + 16), x3 = _mm256_loadu_ps(x + i + 24);
    // The next group of 4 rows follows r3 in memory: fetch it while this one
    // computes (the rows are too short for the hardware prefetcher to ramp up).
    // A prefetch past the last row is harmless: prefetches never fault.
    _mm_prefetch(reinterpret_cast<const char*>(r0 + 4 * row_bytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(r1 + 4 * row_bytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(r2 + 4 * row_bytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(r3 + 4 * row_bytes), _MM_HINT_T0);
    a0 = block_dot(a0, r0, x0, x1, x2, x3);
    a1 = block_dot(a1, r1, x0, x1, x2, x3);
    a2 = block_dot(a2, r2, x0, x1, x2, x3);
    a3 = block_dot(a3, r3, x0, x1, x2, x3);
    r0 += kBlockBytes, r1 += kBlockBytes, r2 += kBlockBytes, r3 += kBlockBytes;
  }
  y[0] = combine(a0), y[1] = combine(a1), y[2] = combine(a2), y[3] = combine(a3);
}

__attribute__((target("avx2,f16c"))) float dot_1_row(const uint8_t* row, const float* x,
                                                     int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += kBlockElems, row += kBlockBytes)
    acc = block_dot(acc, row, _mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i + 8),
                    _mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(x + i + 24));
  return combine(acc);
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
    dot_4_rows(data + static_cast<uint64_t>(r0 + k) * row_bytes, row_bytes, x, n, y + k);
  for (; k < count; ++k) y[k] = dot_1_row(data + static_cast<uint64_t>(r0 + k) * row_bytes, x, n);
}

#else

bool q8_0_dot_available() { return false; }

void q8_0_dot_rows(const uint8_t*, uint64_t, int64_t, int64_t, const float*, int64_t, float*) {}

#endif

}  // namespace lanec
