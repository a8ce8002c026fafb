// rows_a_warp: a GEMV launch gives each warp 2 consecutive rows, so every
// chunk of x loaded into registers feeds several rows.
//
// Math unchanged: y_r = W_r . x for each row; only the thread mapping
// changes. A launch stage rule: it picks the GEMV's rows_per_warp from the
// chip at the size stage. Fires when the launch has enough rows that the
// wider warps still give every SM at least kGemvWarpsPerSm warps (only Q8_0
// weights under dequant numerics: 1 row a warp measured fastest otherwise,
// two-word int8 included: 2 rows sped Qwen3-0.6B up 3 % but slowed 1.7B by
// 3 % and 8B by 14 %, docs/performance.md); declines with the row count and
// the SMs it would leave idle otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lib/gguf/ggml_types.h"
#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_rows_a_warp_rule();

}  // namespace lanec

namespace lanec {

// Warps each SM should keep busy for a GEMV to stream at full bandwidth.
constexpr int64_t kGemvWarpsPerSm = 8;

// The rows a warp for a GEMV launch of `rows` output rows (per part summed;
// the gate rows for a SwiGLU pair) over `format` weights with f32 (`dequant`
// true) or int8 activations, on a chip with `sms` SMs: 2, or 1 with the
// reason it declined.
struct RowsAWarpChoice {
  int rows_per_warp = 1;
  std::optional<std::string> declined;
};
RowsAWarpChoice choose_rows_a_warp(int64_t rows, GgmlType format, bool dequant, int sms);

}  // namespace lanec
