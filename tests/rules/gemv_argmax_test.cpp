// gemv_argmax: which argmax launches take the finish form, from the launch
// that writes their logits (the conditions of rules/gemv_argmax.h).
#include <catch2/catch.hpp>

#include "rules/gemv_argmax.h"

namespace lanec {
namespace {

// A logits GEMV of one matrix over a vocabulary of n_vocab rows, run by the row loop.
GemvArgmaxQuery logits_gemv(int64_t n_vocab) {
  GemvArgmaxQuery q;
  q.producer_is_gemv = true;
  q.producer_kind = "gemv";
  q.row_loop = true;
  q.rows = n_vocab;
  q.n_vocab = n_vocab;
  return q;
}

TEST_CASE("gemv_argmax folds the argmax into a one-matrix logits GEMV", "[rules]") {
  const GemvArgmaxChoice c = choose_gemv_argmax(logits_gemv(151936));
  CHECK(c.fold);
  CHECK(c.declined == std::nullopt);
  CHECK(choose_gemv_argmax(logits_gemv(1)).fold);
}

TEST_CASE("gemv_argmax declines where no kernel folds the winner", "[rules]") {
  GemvArgmaxQuery q = logits_gemv(151936);
  q.producer_is_gemv = false;
  q.producer_kind = "add";
  CHECK(choose_gemv_argmax(q).declined == std::string("the launch writing its logits is not a GEMV (kind add)"));
  q = logits_gemv(151936);
  q.n_parts = 2;
  CHECK(choose_gemv_argmax(q).declined == std::string("the logits GEMV has several matrices or a SwiGLU epilogue"));
  q = logits_gemv(151936);
  q.n_parts = 2;
  q.swiglu = true;
  CHECK_FALSE(choose_gemv_argmax(q).fold);
  q = logits_gemv(151936);
  q.row_loop = false;
  q.staged = true;
  CHECK(choose_gemv_argmax(q).declined == std::string("the staged kernel runs the logits GEMV and has no argmax fold"));
  q = logits_gemv(151936);
  q.row_loop = false;
  CHECK(choose_gemv_argmax(q).declined ==
        std::string("the register GEMV runs the logits: its fold measured no faster (Qwen3-1.7B -0.2 %, 8B +-0)"));
  q = logits_gemv(151936);
  q.rows = 1000;
  CHECK(choose_gemv_argmax(q).declined == std::string("the GEMV writes 1000 rows, the argmax reads 151936"));
}

}  // namespace
}  // namespace lanec
