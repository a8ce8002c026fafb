// Q8_0: 32 elements in 34 bytes.
//   block { fp16 d; int8 qs[32]; }      x[j] = d · qs[j]
// Reference quantizer: d = max|x| / 127, qs[j] = round-half-away(x[j] / d)
// computed as x[j] · (1/d) (0 when d is 0), exactly ggml's quantize_row_q8_0_ref.
#include <cmath>

#include "lib/quant/block_codecs.h"
#include "lib/quant/codecs.h"

namespace lanec::quant {

void dequantize_q8_0(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ8_0Bytes, dst += kQk32) {
    const float d = fp16_to_f32(load_u16(src));
    const int8_t* qs = reinterpret_cast<const int8_t*>(src + 2);
    for (uint64_t j = 0; j < kQk32; ++j) dst[j] = static_cast<float>(qs[j]) * d;
  }
}

void quantize_q8_0(const float* src, uint8_t* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQk32, dst += kQ8_0Bytes) {
    float amax = 0.0f;
    for (uint64_t j = 0; j < kQk32; ++j) {
      const float a = std::fabs(src[j]);
      amax = amax > a ? amax : a;  // ggml's MAX(amax, |v|), operand order kept
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(dst, f32_to_fp16(d));
    for (uint64_t j = 0; j < kQk32; ++j) {
      const int8_t q = truncate_to_int8(std::round(src[j] * id));
      dst[2 + j] = static_cast<uint8_t>(q);
    }
  }
}

}  // namespace lanec::quant
