// rope_parts: one launch for the RoPE of Q and of K (with their head norms
// when head_norm_rope ran first); declines differing rotation attributes.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

TEST_CASE("rope_parts rotates Q and K in one launch", "[rules]") {
  auto run = test::run_rule(test::attention_graph({}), "rope_parts");
  CHECK(run->fired == 1);
  CHECK(run->text().find("rope [rope_parts] {\n"
                         "  #3 rope q_rope_l00 = q_l00, pos freq_base=10000.0 mode=\"neox\" n_rot=32\n"
                         "  #4 rope k_rope_l00 = k_l00, pos freq_base=10000.0 mode=\"neox\" n_rot=32\n"
                         "}\n") != std::string::npos);
}

TEST_CASE("rope_parts keeps the head norms of head_norm_rope", "[rules]") {
  test::AttnBlock block;
  block.head_norms = true;
  auto run = test::run_rule(test::attention_graph(block), "rope_parts", {"head_norm_rope"});
  CHECK(run->fired == 1);
  CHECK(run->text().find("rope [head_norm_rope, rope_parts] {\n  #3 head_rms_norm") != std::string::npos);
}

TEST_CASE("rope_parts declines differing rotation attributes", "[rules]") {
  test::AttnBlock block;
  block.k_freq_base = 500000.0;
  auto run = test::run_rule(test::attention_graph(block), "rope_parts");
  CHECK(run->fired == 0);
  CHECK(run->reason() == "Q and K rotation attributes differ");
}

}  // namespace
}  // namespace lanec
