// early_trigger: which small launches let the next launch start before
// their wait (the conditions of rules/early_trigger.h).
#include <catch2/catch.hpp>

#include "rules/early_trigger.h"

using namespace lanec;

namespace {

// A small launch of `kind` after a register GEMV of `prev_warps` warps on
// the H200 (132 SMs of 64 warps: 8,448 slots), with a next launch.
EarlyTriggerQuery after_gemv(const std::string& kind, int64_t prev_warps) {
  EarlyTriggerQuery q;
  q.kind = kind;
  q.has_next = true;
  q.prev_is_gemv = true;
  q.prev_name = "gemv_before";
  q.prev_warps = prev_warps;
  q.warp_slots = 132 * 64;
  return q;
}

}  // namespace

TEST_CASE("early_trigger matches norms, quantizes, int8 SwiGLUs and ropes only", "[rules]") {
  CHECK(early_trigger_candidate("rms_norm", false));
  CHECK(early_trigger_candidate("quantize", true));
  CHECK(early_trigger_candidate("swiglu", true));
  CHECK_FALSE(early_trigger_candidate("swiglu", false));  // the elementwise kernel has no early form
  CHECK(early_trigger_candidate("rope", false));
  for (const char* kind : {"gemv", "attention", "embed", "argmax", "kv_write", "add"})
    CHECK_FALSE(early_trigger_candidate(kind, false));
}

TEST_CASE("early_trigger fires after Qwen3-0.6B's GEMVs, declines after 1.7B's", "[rules]") {
  for (int64_t warps : {4096, 6144, 7392}) {  // 0.6B's down and O, its gate/up, exactly 7/8 of the slots
    CHECK(choose_early_trigger(after_gemv("rms_norm", warps)).early);
    CHECK(choose_early_trigger(after_gemv("swiglu", warps)).early);
  }
  for (int64_t warps : {7393, 8192, 12288}) {  // past 7/8; 1.7B's down, its gate/up
    const EarlyTriggerChoice c = choose_early_trigger(after_gemv("rms_norm", warps));
    CHECK_FALSE(c.early);
    REQUIRE(c.declined);
    CHECK(c.declined->find("gemv_before's " + std::to_string(warps) + " warps leave less than 1/8") != std::string::npos);
  }
}

TEST_CASE("early_trigger: a quantize fires after a GEMV of two waves or more, a norm does not", "[rules]") {
  for (int64_t warps : {16896, 24576}) {  // exactly two waves of the 8,448 slots; Qwen3-8B's gate/up
    CHECK(choose_early_trigger(after_gemv("swiglu", warps)).early);
    CHECK(choose_early_trigger(after_gemv("quantize", warps)).early);
    CHECK_FALSE(choose_early_trigger(after_gemv("rms_norm", warps)).early);
  }
  for (int64_t warps : {12288, 16895}) {  // Qwen3-1.7B's gate/up (1.45 waves); just below two
    const EarlyTriggerChoice c = choose_early_trigger(after_gemv("swiglu", warps));
    CHECK_FALSE(c.early);
    REQUIRE(c.declined);
    CHECK(c.declined->find("leave less than 1/8") != std::string::npos);
  }
  EarlyTriggerQuery q = after_gemv("swiglu", 24576);
  q.prev_is_gemv = false;  // the waves count only after a register GEMV
  CHECK_FALSE(choose_early_trigger(q).early);
}

TEST_CASE("early_trigger: a rope fires whatever launch comes before it", "[rules]") {
  CHECK(choose_early_trigger(after_gemv("rope", 8192)).early);
  EarlyTriggerQuery q = after_gemv("rope", 0);
  q.prev_is_gemv = false;
  CHECK(choose_early_trigger(q).early);
}

TEST_CASE("early_trigger: a rope after a long Q/K/V GEMV triggers early only at short positions", "[rules]") {
  // The Q/K/V GEMV's weight bytes at Qwen3's widths (Q8_0, 34 bytes a block
  // of 32): 0.6B 4,096 rows of 1,024, 1.7B 4,096 of 2,048, 4B 6,144 of 2,560,
  // 8B 6,144 of 4,096; on the H200's 132 SMs.
  const auto rope_rows = [](int64_t rows, int64_t k, int64_t sms = 132) {
    EarlyTriggerQuery q = after_gemv("rope", 8192);
    q.prev_weight_bytes = rows * k / 32 * 34;
    q.sms = sms;
    const EarlyTriggerChoice c = choose_early_trigger(q);
    CHECK(c.early);
    return c.rope_rows;
  };
  CHECK(rope_rows(4096, 1024) == 0);  // every position
  CHECK(rope_rows(4096, 2048) == 0);
  CHECK(rope_rows(6144, 2560) == kRopeShortTriggerRows);
  CHECK(rope_rows(6144, 4096) == kRopeShortTriggerRows);
  CHECK(rope_rows(4096, 2048, 66) == kRopeShortTriggerRows);  // the same GEMV on half the SMs

  // The bound is inclusive; a launch before that is no register GEMV (its
  // size not known to the rule) keeps the short bound.
  EarlyTriggerQuery q = after_gemv("rope", 8192);
  q.sms = 132;
  q.prev_weight_bytes = kRopeLongTriggerMaxBytesPerSm * 132;
  CHECK(choose_early_trigger(q).rope_rows == 0);
  q.prev_weight_bytes += 1;
  CHECK(choose_early_trigger(q).rope_rows == kRopeShortTriggerRows);
  q.prev_weight_bytes = 0;
  q.prev_is_gemv = false;
  CHECK(choose_early_trigger(q).rope_rows == kRopeShortTriggerRows);
  // Norms and quantizes have no position bound.
  EarlyTriggerQuery norm = after_gemv("rms_norm", 4096);
  norm.sms = 132;
  norm.prev_weight_bytes = int64_t{1} << 30;
  CHECK(choose_early_trigger(norm).rope_rows == 0);
}

TEST_CASE("early_trigger declines after a launch that is no register GEMV, at the step's end, and where the next "
          "launch would read early what the launch before writes",
          "[rules]") {
  EarlyTriggerQuery q = after_gemv("rms_norm", 4096);
  q.prev_is_gemv = false;  // the embedding, a staged GEMV
  EarlyTriggerChoice c = choose_early_trigger(q);
  CHECK_FALSE(c.early);
  CHECK(c.declined->find("not a register-kernel GEMV") != std::string::npos);

  q = after_gemv("rope", 4096);
  q.has_next = false;
  c = choose_early_trigger(q);
  CHECK_FALSE(c.early);
  CHECK(c.declined->find("the last launch") != std::string::npos);

  q = after_gemv("rope", 4096);
  q.arch_number = 89;  // no programmatic launch below sm_90
  c = choose_early_trigger(q);
  CHECK_FALSE(c.early);
  CHECK(c.declined->find("sm_89 has no programmatic dependent launch") != std::string::npos);

  q = after_gemv("rope", 4096);
  q.next_reads_early = "gemv_before writes its position pos";
  c = choose_early_trigger(q);
  CHECK_FALSE(c.early);
  CHECK(c.declined->find("(gemv_before writes its position pos)") != std::string::npos);
}
