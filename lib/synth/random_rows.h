// Random tensor rows for `lanec synth`. Every row has its own generator,
// seeded from (seed, tensor, row), so a file is identical whatever the
// thread count, and quant blocks are drawn directly (no quantizer on the
// hot path) for the formats synth writes at real sizes.
#pragma once

#include <cstdint>

#include "lib/gguf/ggml_types.h"

namespace lanec {

// xoshiro256** — small, fast, good enough for weights.
class RowRng {
 public:
  RowRng(uint64_t seed, uint64_t stream, uint64_t row);
  uint64_t next();
  float uniform();  // [0, 1)
  float symmetric(float half_width) { return (2.0f * uniform() - 1.0f) * half_width; }

 private:
  uint64_t s_[4];
};

// How values are drawn: a centre and a spread (uniform, std = sigma).
struct ValueDraw {
  float center = 0.0f;
  float sigma = 1.0f;
};

// The kGgmlTypes rows marked ggml_use::kSynth.
bool synth_can_write(GgmlType type);

// Writes one row of n elements of `type` into dst (row bytes of that type).
void fill_random_row(GgmlType type, const ValueDraw& draw, RowRng& rng, uint8_t* dst, uint64_t n);

}  // namespace lanec
