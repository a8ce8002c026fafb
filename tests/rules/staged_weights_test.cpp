// staged_weights: which GEMV launches copy their weights into shared memory
// before the wait, from the chip, the format, the input and the shapes
// (the measured conditions of rules/staged_weights.h).
#include <catch2/catch.hpp>

#include "lib/plan/size.h"
#include "rules/staged_weights.h"
#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

// An output projection of rows x k after the attention on an H200, with the
// register GEMV's split the planner would give it.
StagedWeightsQuery output_projection(int64_t rows, int64_t k) {
  StagedWeightsQuery q{test::h200_q8_gemv(rows, k)};
  q.arch_number = 90;
  q.smem_kib_per_block = 227;
  q.reads_attention_output = true;
  q.register_split_k = choose_gemv_split_k(rows, 1, k, GgmlType::Q8_0, q.sms, resident_warps_per_sm(90));
  return q;
}

TEST_CASE("staged_weights fires on Qwen3-1.7B's output projection where load_ahead is held", "[rules]") {
  const StagedWeightsChoice c = choose_staged_weights(output_projection(2048, 2048));
  CHECK(c.staged);
  CHECK(c.declined == std::nullopt);
  CHECK(c.split_k == 2);
  CHECK(c.rows_per_warp == 2);
}

TEST_CASE("staged_weights declines where staging measured no faster", "[rules]") {
  // Qwen3-0.6B: the register GEMV's split 4 already has every chunk in flight before the wait.
  CHECK(choose_staged_weights(output_projection(1024, 2048)).declined ==
        std::string("the register GEMV already loads all its weights before the wait (128 chunks a row over 128 "
                    "lanes)"));
  // Qwen3-8B: 17 MiB, more than the attention before it hides.
  CHECK(choose_staged_weights(output_projection(4096, 4096)).declined ==
        std::string("17.0 MiB of weights, more than the 8.0 MiB the launch before can hide"));
  // Where load_ahead would take the register GEMV (Qwen3-1.7B's, all rules on).
  StagedWeightsQuery ahead = output_projection(2048, 2048);
  ahead.register_loads_ahead = true;
  CHECK_FALSE(choose_staged_weights(ahead).staged);
  CHECK(choose_staged_weights(ahead).declined ==
        std::string("the register GEMV loads its second chunk a lane with its first activations (load_ahead), "
                    "measured faster than staging"));
  // After a norm (Q/K/V, gate/up): measured slower.
  StagedWeightsQuery after_norm = output_projection(2048, 2048);
  after_norm.reads_attention_output = false;
  CHECK(choose_staged_weights(after_norm).declined ==
        std::string("its input is not an attention output: staged after a norm or quantize launch measured slower"));
}

TEST_CASE("staged_weights declines what the staged kernel cannot take", "[rules]") {
  StagedWeightsQuery q = output_projection(2048, 2048);
  q.arch_number = 89;
  CHECK(choose_staged_weights(q).declined ==
        std::string("bulk copies into shared memory need sm_90 or newer (the chip is sm_89)"));
  q = output_projection(2048, 2048);
  q.int8_activations = false;
  CHECK_FALSE(choose_staged_weights(q).staged);
  q = output_projection(2048, 2048);
  q.format = GgmlType::F16;
  CHECK_FALSE(choose_staged_weights(q).staged);
  q = output_projection(2048, 2048 + 32);
  CHECK(choose_staged_weights(q).declined ==
        std::string("k = 2080 is not a multiple of 256 (a row's scales fill whole 16-byte copies)"));
  // A chip with few SMs cannot hold every block at once.
  q = output_projection(2048, 2048);
  q.sms = 16;
  q.register_split_k = 1;
  CHECK(choose_staged_weights(q).declined == std::string("256 blocks would not all be resident at once (80 fit the 16 SMs)"));
}

}  // namespace
}  // namespace lanec
