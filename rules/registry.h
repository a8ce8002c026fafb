// The ordered registry of all fusion rules. The order is the order in which
// the rewrite stage applies them (and in which the census lists them); it is
// part of lanec's contract: a rule's name means the same in every census.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.h"

namespace lanec {

const std::vector<std::unique_ptr<FusionRule>>& rule_registry();
// All rule names, registry order.
const std::vector<std::string>& rule_names();
// nullptr when unknown.
const FusionRule* find_rule(std::string_view name);
// "a,b" -> the named rules in registry order (duplicates removed). An unknown
// name is a lanec::Error "unknown rule 'x' in --hold; valid rules: ...".
std::vector<std::string> parse_held_rules(const std::string& comma_separated);

}  // namespace lanec
