// gather_ahead: the greedy argmax gathers the embedding row of the token it
// picks, for the next step, so the step no longer starts with its own
// embedding launch. The thread that decides the token holds it in a
// register; the embedding launch had to wait for the argmax to complete,
// then load the token slot, then the row: one dependent launch and one L2
// round trip a token that this takes off the decode chain.
//
// Math unchanged: the same row of the same table lands in the same buffer
// before the first layer reads it. Where the host picks the token (the
// prompt's tokens, sampling), the emitted program runs the embedding launch
// itself after queueing the token, outside the step's graph
// (kernels/runtime/program.cuh), and that launch overwrites the argmax's
// gather. The schedule keeps the embedding launch, marked host_token_only
// (the CPU schedule executor, the oracle, still runs it every step), and the
// argmax carries its parameters (ArgmaxLaunch::next_row).
//
// A launch-stage rule: the planner asks choose_gather_ahead once the argmax
// has its form (rule gemv_argmax). Fires where the step's first launch is a
// plain embedding gather (no norm: embed_norm's sum would need its own
// block-wide reduction after the pick) of the token slot the argmax writes.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_gather_ahead_rule();

// The step's embedding launch and its argmax, as the rule sees them.
struct GatherAheadQuery {
  bool embed_first = false;   // the step's first launch is an embedding gather
  bool embed_normed = false;  // that gather also norms the row (embed_norm)
  int argmax_launches = 0;    // argmax launches in the step
  bool same_token = false;    // the gather reads the token slot the argmax writes
};

// Whether the argmax gathers the next row, else the reason it declined.
struct GatherAheadChoice {
  bool fold = false;
  std::optional<std::string> declined;
};
GatherAheadChoice choose_gather_ahead(const GatherAheadQuery& q);

}  // namespace lanec
