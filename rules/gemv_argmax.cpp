// gemv_argmax: the greedy argmax folded into the logits GEMV (conditions in
// rules/gemv_argmax.h).
#include "rules/gemv_argmax.h"

namespace lanec {

GemvArgmaxChoice choose_gemv_argmax(const GemvArgmaxQuery& q) {
  auto decline = [](std::string why) { return GemvArgmaxChoice{false, std::move(why)}; };
  if (!q.producer_is_gemv) return decline("the launch writing its logits is not a GEMV (kind " + q.producer_kind + ")");
  if (q.swiglu || q.n_parts != 1) return decline("the logits GEMV has several matrices or a SwiGLU epilogue");
  if (q.staged) return decline("the staged kernel runs the logits GEMV and has no argmax fold");
  if (!q.row_loop)
    return decline("the register GEMV runs the logits: its fold measured no faster (Qwen3-1.7B -0.2 %, 8B +-0)");
  if (q.rows != q.n_vocab)
    return decline("the GEMV writes " + std::to_string(q.rows) + " rows, the argmax reads " +
                   std::to_string(q.n_vocab));
  return {true, std::nullopt};
}

// The planner calls choose_gemv_argmax per argmax launch.
std::unique_ptr<FusionRule> make_gemv_argmax_rule() {
  return std::make_unique<LaunchStageRule>("gemv_argmax",
                                           "the greedy argmax folded into the logits GEMV, one key a step");
}

}  // namespace lanec
