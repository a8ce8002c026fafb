// Rules waiting for their architecture: registered, never matching, and
// answering "waiting for ..." when asked.
#include <catch2/catch.hpp>

#include "rules/registry.h"
#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

TEST_CASE("waiting rules never match and say what they wait for", "[rules]") {
  const std::map<std::string, std::string> waiting = {
      {"sandwich_norm", "gemma3"},        {"gather_scale", "gemma3"},
      {"conv_silu", "qwen3next"},         {"conv_silu_l2", "qwen3next"},
      {"conv_parts", "qwen3next"},        {"gates", "qwen3next"},
      {"gate_projections", "qwen3next"},  {"act_gate", "qwen3next"},
      {"attn_output_gate", "qwen3next"},  {"shared_expert", "qwen3next"},
      {"strided_values", "qwen3next"},    {"moe_rows", "qwen3moe"},
      {"moe_deferred_finalize", "qwen3moe"}, {"sequences", "batched decode"}};
  Graph g = test::attention_graph({});
  FusedGraph fused(g);
  Knobs knobs = test::rule_knobs();
  int counted = 0;
  for (const auto& rule : rule_registry()) {
    if (!rule->waiting_for()) continue;
    ++counted;
    INFO(rule->name());
    REQUIRE(waiting.count(rule->name()) == 1);
    CHECK(waiting.at(rule->name()) == rule->waiting_for());
    CHECK(rule->match(fused).empty());
    std::string expected = rule->name() == std::string("sequences")
                               ? "waiting for batched decode"
                               : std::string("waiting for architecture ") + rule->waiting_for();
    CHECK(*rule->guard(fused, RuleMatch{}, RuleContext{knobs}) == expected);
  }
  CHECK(counted == 14);
}

}  // namespace
}  // namespace lanec
