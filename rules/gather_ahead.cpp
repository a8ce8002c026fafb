// gather_ahead: the argmax gathers the next step's embedding row
// (conditions in rules/gather_ahead.h).
#include "rules/gather_ahead.h"

namespace lanec {

GatherAheadChoice choose_gather_ahead(const GatherAheadQuery& q) {
  auto decline = [](std::string why) { return GatherAheadChoice{false, std::move(why)}; };
  if (!q.embed_first) return decline("the step does not start with an embedding gather");
  if (q.argmax_launches != 1)
    return decline("the step has " + std::to_string(q.argmax_launches) + " argmax launches, not one");
  if (!q.same_token) return decline("the gather reads another token slot than the argmax writes");
  if (q.embed_normed) return decline("the gather norms its row (embed_norm): the argmax's gather only copies");
  return {true, std::nullopt};
}

// The planner calls choose_gather_ahead per step.
std::unique_ptr<FusionRule> make_gather_ahead_rule() {
  return std::make_unique<LaunchStageRule>(
      "gather_ahead", "the argmax gathers the next step's embedding row; the step drops its embedding launch");
}

}  // namespace lanec
