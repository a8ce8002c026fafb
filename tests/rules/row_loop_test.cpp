// row_loop: which GEMV launches run as a one-wave grid of warps looping
// over rows, from the format, the parameters chosen before and the shape
// (the measured conditions of rules/row_loop.h).
#include <catch2/catch.hpp>

#include "rules/row_loop.h"
#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

// A logits GEMV of rows x k on an H200 (132 SMs of 64 warps), int8 activations.
RowLoopQuery logits(int64_t rows, int64_t k) {
  RowLoopQuery q{test::h200_q8_gemv(rows, k)};
  q.warps_per_sm = 64;
  return q;
}

TEST_CASE("row_loop fires on Qwen3-0.6B's logits GEMV with its chunks a lane", "[rules]") {
  const RowLoopChoice c = choose_row_loop(logits(151936, 1024));
  CHECK(c.row_loop);
  CHECK(c.chunks_per_lane == 2);
  CHECK(c.declined == std::nullopt);
  CHECK(choose_row_loop(logits(151936, 512)).chunks_per_lane == 1);
  CHECK(choose_row_loop(logits(151936, 256)).chunks_per_lane == 1);  // a partial chunk row: lanes 16..31 idle
  CHECK(choose_row_loop(logits(4 * 132 * 64, 1024)).row_loop);       // exactly four waves
}

TEST_CASE("row_loop declines where it measured no faster or cannot run", "[rules]") {
  CHECK(choose_row_loop(logits(151936, 2048)).declined ==
        std::string("4 chunks a lane: at more than 2 two rows' chunks in registers cost warps"));
  CHECK(choose_row_loop(logits(4 * 132 * 64 - 1, 1024)).declined ==
        std::string("33791 rows: fewer than 4 waves of the 8448 warps the SMs hold"));
  RowLoopQuery q = logits(151936, 1024);
  q.int8_activations = false;
  CHECK(choose_row_loop(q).declined == std::string("measured only for q8_0 weights with int8 activations"));
  q = logits(151936, 1024);
  q.format = GgmlType::F16;
  CHECK_FALSE(choose_row_loop(q).row_loop);
  q = logits(151936, 1024);
  q.n_parts = 2;
  CHECK(choose_row_loop(q).declined == std::string("the row loop takes one matrix, no SwiGLU epilogue"));
  q = logits(151936, 1024);
  q.split_k = 2;
  CHECK(choose_row_loop(q).declined ==
        std::string("its rows are split over 2 warps or 1 a warp; the row loop takes whole rows one at a time"));
  q = logits(151936, 1024);
  q.staged = true;
  CHECK(choose_row_loop(q).declined == std::string("the staged kernel runs it"));
}

}  // namespace
}  // namespace lanec
