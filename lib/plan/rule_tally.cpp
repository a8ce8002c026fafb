// RuleTally (rule_tally.h).
#include "lib/plan/rule_tally.h"

#include <algorithm>

#include "rules/registry.h"

namespace lanec {

std::string site_key(std::vector<size_t> ops) {
  std::sort(ops.begin(), ops.end());
  std::string key;
  for (size_t op : ops) key += (key.empty() ? "" : ",") + std::to_string(op);
  return key;
}

void RuleTally::declined(const std::string& rule, const std::string& site, const std::string& reason) {
  auto& slot = outcomes_[rule][site];
  slot = reason;
}

void RuleTally::fired(const std::string& rule, const std::string& site, std::vector<size_t> ops) {
  outcomes_[rule][site] = std::nullopt;
  std::sort(ops.begin(), ops.end());
  firings_.push_back({rule, std::move(ops)});
}

std::vector<RuleCount> RuleTally::counts(const std::vector<std::string>& held) const {
  std::vector<RuleCount> out;
  for (const auto& rule : rule_registry()) {
    RuleCount c;
    c.rule = rule->name();
    if (std::find(held.begin(), held.end(), c.rule) != held.end()) c.status = "held";
    else if (rule->waiting_for()) c.status = waiting_reason(rule->waiting_for());
    else c.status = "active";
    auto it = outcomes_.find(c.rule);
    if (it != outcomes_.end()) {
      for (const auto& [site, outcome] : it->second) {
        ++c.matched;
        if (outcome) ++c.declined[*outcome];
        else ++c.fired;
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace lanec
