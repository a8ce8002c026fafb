// gemv_argmax: the greedy argmax folded into the logits GEMV. Each block of
// the GEMV (kernels/gemv.cuh, the Argmax forms of launch_gemv and
// launch_gemv_row_loop) folds its rows' winner into one 64-bit key with an
// atomic maximum (kernels/argmax.cuh argmax_key: the value's bits made
// monotonic, then the complement of the index), and the argmax launch only
// finishes: one thread decodes the key, advances token, position and ring,
// and sets the key back to zero. The logits are still written (sampling,
// --logits and --profile read them) but not read again, and the argmax's
// own pass over them, its block reductions and its counter go.
//
// Math unchanged: the same token, by the same rule (the largest logit, the
// lowest index on ties, NaN never wins, all NaN gives token 0). A
// launch-stage rule: the planner asks choose_gemv_argmax per argmax launch at
// the size stage, once the GEMV that writes its logits has its kernel (split,
// staged kernel, row loop). Fires where that GEMV is one matrix whose rows
// are the vocabulary, with no SwiGLU, run by the row loop (rule row_loop).
// Measured on an H200 (docs/performance.md, h200-2026-12-02i): Qwen3-0.6B,
// whose logits GEMV is the row loop, +0.2 % a token in each of three calls; the
// register kernel's form (1.7B and 8B) -0.1 to -0.2 % and +-0, its tens of
// thousands of blocks each waiting at the fold's barrier, so it declines
// there (the kernel library keeps the form; the kernel sweep tests it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gemv_argmax_rule();

// The argmax launch and the launch that writes its logits, as the rule sees them.
struct GemvArgmaxQuery {
  bool producer_is_gemv = false;  // the logits come from a GEMV launch
  std::string producer_kind;      // its launch kind name (for the reason)
  int n_parts = 1;
  bool swiglu = false;
  bool staged = false;
  bool row_loop = false;  // the row loop runs it (rule row_loop)
  int64_t rows = 0;     // the GEMV's output rows
  int64_t n_vocab = 0;  // the argmax's logits
};

// Whether to fold, else the reason it declined.
struct GemvArgmaxChoice {
  bool fold = false;
  std::optional<std::string> declined;
};
GemvArgmaxChoice choose_gemv_argmax(const GemvArgmaxQuery& q);

}  // namespace lanec
