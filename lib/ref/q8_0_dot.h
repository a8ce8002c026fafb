// Matmul rows straight from Q8_0 bytes, bit-identical to dequantizing the row
// (dequantize_row: w = float(q) * d) and taking the reference executor's dot
// product: 8 partial sums acc[j] over elements i ≡ j (mod 8) in order, each
// step a separate multiply and add (no fused multiply-add), combined as
// ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)) + 0 (the empty tail; Q8_0 rows are
// whole 32-element blocks). With AVX2 the 8 partial sums are the 8 lanes of
// one vector and 4 rows run side by side to hide the add latency; the order
// of every row's operations is unchanged, so the result is the same float.
#pragma once

#include <cstdint>

namespace lanec {

// True when this CPU runs the vector kernel (AVX2 + F16C); callers use the
// dequantize-then-dot path otherwise.
bool q8_0_dot_available();

// y[k] = dot(row r0 + k of W, x) for k in [0, count); W's rows are
// `row_bytes` apart starting at `data`, each `n` elements (a multiple of 32).
void q8_0_dot_rows(const uint8_t* data, uint64_t row_bytes, int64_t r0, int64_t count,
                   const float* x, int64_t n, float* y);

}  // namespace lanec
