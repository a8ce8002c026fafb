// load_ahead: which GEMV launches load a lane's second chunk with its first
// activations, from the format, the parameters chosen before and the shape
// (the conditions of rules/load_ahead.h).
#include <catch2/catch.hpp>

#include "lib/plan/size.h"
#include "rules/load_ahead.h"
#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

// A register GEMV of rows x k at split_k on an H200, two-word int8 activations.
LoadAheadQuery gemv(int64_t rows, int64_t k, int split_k) {
  LoadAheadQuery q{test::h200_q8_gemv(rows, k)};
  q.two_word = true;
  q.split_k = split_k;
  return q;
}

TEST_CASE("a lane's chunks of a row shared by split_k warps", "[rules]") {
  CHECK(gemv_chunks_a_lane(GgmlType::Q8_0, 1024, 1) == 2);  // 64 chunks over 32 lanes
  CHECK(gemv_chunks_a_lane(GgmlType::Q8_0, 3072, 4) == 2);  // 192 over 128: half the slices take 2
  CHECK(gemv_chunks_a_lane(GgmlType::Q8_0, 2048, 4) == 1);
  CHECK(gemv_chunks_a_lane(GgmlType::Q8_0, 2048, 1) == 4);
  CHECK(gemv_chunks_a_lane(GgmlType::Q8_0, 4096, 8) == 1);
}

TEST_CASE("load_ahead fires on Qwen3-0.6B's Q/K/V and down GEMVs", "[rules]") {
  CHECK(choose_load_ahead(gemv(2048 + 1024 + 1024, 1024, 1)).ahead);
  CHECK(choose_load_ahead(gemv(1024, 3072, 4)).ahead);
  CHECK(choose_load_ahead(gemv(132 * 32, 1024, 1)).ahead);  // exactly the one wave the bound guarantees
}

TEST_CASE("load_ahead declines where it would not pay or cannot run", "[rules]") {
  CHECK(choose_load_ahead(gemv(3072 + 3072, 1024, 1)).declined ==  // 0.6B's gate/up: -1.9 % with it
        std::string("6144 warps: more than the one wave of 4224 the kernel's register bound guarantees"));
  CHECK(choose_load_ahead(gemv(132 * 32 + 1, 1024, 1)).declined ==
        std::string("4225 warps: more than the one wave of 4224 the kernel's register bound guarantees"));
  CHECK(choose_load_ahead(gemv(4096, 2048, 2)).declined ==  // Qwen3-1.7B's Q/K/V: 2 chunks, two waves
        std::string("8192 warps: more than the one wave of 4224 the kernel's register bound guarantees"));
  CHECK(choose_load_ahead(gemv(4096, 2048, 1)).declined == std::string("4 chunks a lane at split 1, not 2"));
  CHECK(choose_load_ahead(gemv(1024, 2048, 4)).declined == std::string("1 chunk a lane at split 4, not 2"));
  LoadAheadQuery q = gemv(4096, 1024, 1);
  q.int8_activations = false;
  CHECK(choose_load_ahead(q).declined == std::string("measured only for q8_0 weights with two-word int8 activations"));
  q = gemv(4096, 1024, 1);
  q.two_word = false;  // one-word int8: not measured
  CHECK_FALSE(choose_load_ahead(q).ahead);
  q = gemv(4096, 1024, 1);
  q.format = GgmlType::F16;
  CHECK_FALSE(choose_load_ahead(q).ahead);
  q = gemv(4096, 1024, 1);
  q.staged = true;
  CHECK(choose_load_ahead(q).declined == std::string("the staged kernel runs it"));
  q = gemv(4096, 1024, 1);
  q.row_loop = true;
  CHECK(choose_load_ahead(q).declined == std::string("the row loop runs it"));
  q = gemv(3072, 1024, 1);
  q.swiglu = true;
  CHECK(choose_load_ahead(q).declined == std::string("the SwiGLU pair's two rows a warp: not measured"));
  q = gemv(4096, 1024, 1);
  q.rows_per_warp = 2;
  CHECK(choose_load_ahead(q).declined == std::string("2 rows a warp: measured no faster in the ahead form"));
}

}  // namespace
}  // namespace lanec
