// The rewrite stage (rewrite.h).
#include "lib/plan/rewrite.h"

#include <algorithm>
#include <set>

#include "lib/common/error.h"
#include "rules/registry.h"

namespace lanec {
namespace {

int run_rule(FusedGraph& fused, const FusionRule& rule, const Knobs& knobs, RuleTally& tally) {
  RuleContext context{knobs};
  int fired = 0;
  // Each round fires at least once or ends the loop; a graph of N ops can
  // lose at most N nodes, which bounds the rounds.
  for (size_t round = 0; round <= fused.graph().ops().size(); ++round) {
    std::set<int> touched;
    bool any = false;
    for (const RuleMatch& site : rule.match(fused)) {
      bool stale = false;
      for (int id : site.nodes) stale = stale || !fused.position(id) || touched.count(id);
      if (stale) continue;  // matched again next round against the new graph
      std::vector<size_t> ops;
      for (int id : site.nodes) {
        const FusedNode& n = fused.node(id);
        ops.insert(ops.end(), n.ops.begin(), n.ops.end());
      }
      std::string key = site_key(ops);
      if (std::optional<std::string> reason = rule.guard(fused, site, context)) {
        tally.declined(rule.name(), key, *reason);
        continue;
      }
      rule.rewrite(fused, site);
      verify_fused_graph(fused, rule.name());
      tally.fired(rule.name(), key, ops);
      touched.insert(site.nodes.begin(), site.nodes.end());
      any = true;
      ++fired;
    }
    if (!any) break;
  }
  return fired;
}

}  // namespace

void apply_rules(FusedGraph& fused, const Knobs& knobs, const std::vector<std::string>& held,
                 RuleTally& tally) {
  for (const auto& rule : rule_registry()) {
    if (rule->stage() != RuleStage::graph || rule->waiting_for()) continue;
    if (std::find(held.begin(), held.end(), rule->name()) != held.end()) continue;
    run_rule(fused, *rule, knobs, tally);
  }
}

int apply_rule(FusedGraph& fused, const std::string& name, const Knobs& knobs, RuleTally& tally) {
  const FusionRule* rule = find_rule(name);
  if (!rule) throw Error("unknown rule '" + name + "'");
  return run_rule(fused, *rule, knobs, tally);
}

}  // namespace lanec
