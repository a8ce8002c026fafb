// What every launch-stage GEMV rule asks of a launch (row_loop,
// staged_weights, load_ahead): the chip's SMs and the GEMV's format, numerics and
// shape. Each rule's query adds what only it needs.
#pragma once

#include <cstdint>

#include "lib/gguf/ggml_types.h"

namespace lanec {

struct GemvQuery {
  int sms = 0;
  GgmlType format = GgmlType::F32;
  bool int8_activations = false;  // one- or two-word
  bool swiglu = false;
  int64_t rows = 0;               // over all parts
  int64_t k = 0;
};

}  // namespace lanec
