// The rewrite stage: applies every graph-stage rule of the registry, in
// registry order, to the fused graph, skipping held rules and rules waiting
// for their architecture. Each rule runs to a fixed point: match all sites,
// guard each (record the decline reason or rewrite), re-match while anything
// fired. The fused graph is verified after every rule.
#pragma once

#include <string>
#include <vector>

#include "lib/knobs/knobs.h"
#include "lib/plan/fused_graph.h"
#include "lib/plan/rule_tally.h"

namespace lanec {

void apply_rules(FusedGraph& fused, const Knobs& knobs, const std::vector<std::string>& held,
                 RuleTally& tally);

// Applies one rule by name (for rule tests): returns how many sites fired.
int apply_rule(FusedGraph& fused, const std::string& rule, const Knobs& knobs, RuleTally& tally);

}  // namespace lanec
