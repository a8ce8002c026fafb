// moe_rows: registered, waiting for qwen3moe (see rules/moe_rows.h for its intent).
#include "rules/moe_rows.h"

namespace lanec {

std::unique_ptr<FusionRule> make_moe_rows_rule() {
  return std::make_unique<WaitingRule>("moe_rows", "the selected experts' gate/up rows as one GEMV over expert rows", "qwen3moe");
}

}  // namespace lanec
