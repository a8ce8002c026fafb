// row_write: the K and V writes of one attention join the rope launch that
// makes the K row (after head_norm_rope, before rope_parts), fall back to one
// kv_write launch when no rope makes it, and decline rows of different shapes.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

TEST_CASE("row_write stores K and V rows from the rope launch that makes K", "[rules][rope-write]") {
  auto run = test::run_rule(test::attention_graph({}), "row_write");
  CHECK(run->fired == 1);
  CHECK(run->text().find("rope [row_write] {\n"
                         "  #4 rope k_rope_l00 = k_l00, pos freq_base=10000.0 mode=\"neox\" n_rot=32\n"
                         "  #5 kv_write cache_k_l00 = k_rope_l00, pos\n"
                         "  #6 kv_write cache_v_l00 = v_l00, pos\n"
                         "}\n") != std::string::npos);
}

TEST_CASE("row_write joins the head-normed K rope, and rope_parts adds Q after", "[rules][rope-write]") {
  test::AttnBlock block;
  block.head_norms = true;
  auto run = test::run_rule(test::attention_graph(block), "rope_parts", {"head_norm_rope", "row_write"});
  CHECK(run->fired == 1);
  const std::string text = run->text();
  INFO(text);
  CHECK(text.find("rope [head_norm_rope, row_write, rope_parts] {\n") != std::string::npos);
  CHECK(text.find("  #7 kv_write cache_k_l00 = k_rope_l00, pos\n"
                  "  #8 kv_write cache_v_l00 = v_l00, pos\n"
                  "}\n") != std::string::npos);
  CHECK(text.find("kv_write [") == std::string::npos);
}

TEST_CASE("row_write falls back to one kv_write launch when no rope makes the K row", "[rules][rope-write]") {
  test::AttnBlock block;
  block.rope_k = false;
  auto run = test::run_rule(test::attention_graph(block), "row_write");
  CHECK(run->fired == 1);
  CHECK(run->text().find("kv_write [row_write] {\n"
                         "  #4 kv_write cache_k_l00 = k_l00, pos\n"
                         "  #5 kv_write cache_v_l00 = v_l00, pos\n"
                         "}\n") != std::string::npos);
}

TEST_CASE("row_write declines K and V rows of different shapes", "[rules]") {
  test::AttnBlock block;
  block.v_dim = 64;
  auto run = test::run_rule(test::attention_graph(block), "row_write");
  CHECK(run->fired == 0);
  CHECK(run->reason() == "K rows [2, 32] and V rows [2, 64] differ in shape");
}

}  // namespace
}  // namespace lanec
