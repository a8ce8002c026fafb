// RuleTally: what each rule did at each site, collected during planning and
// turned into the census's per-rule counts. A site is keyed by the ops it
// covers, so a site seen again in a later round is counted once, with its
// last outcome (declined in round 1 and fired in round 2 counts as fired).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/plan/schedule.h"

namespace lanec {

class RuleTally {
 public:
  void declined(const std::string& rule, const std::string& site, const std::string& reason);
  void fired(const std::string& rule, const std::string& site, std::vector<size_t> ops);

  // One RuleCount per registry rule, registry order; `held` in registry order.
  std::vector<RuleCount> counts(const std::vector<std::string>& held) const;
  // Firings in the order they happened.
  const std::vector<Firing>& firings() const { return firings_; }

 private:
  // rule -> site -> reason (nullopt = fired)
  std::map<std::string, std::map<std::string, std::optional<std::string>>> outcomes_;
  std::vector<Firing> firings_;
};

// "3,4,7": the site key of a set of ops.
std::string site_key(std::vector<size_t> ops);

}  // namespace lanec
