// row_write: fires on the K and V writes of one attention; declines when the
// rows differ in shape.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

TEST_CASE("row_write writes K and V rows in one launch", "[rules]") {
  auto run = test::run_rule(test::attention_graph({}), "row_write");
  CHECK(run->fired == 1);
  CHECK(run->text().find("kv_write [row_write] {\n"
                         "  #5 kv_write cache_k_l00 = k_rope_l00, pos\n"
                         "  #6 kv_write cache_v_l00 = v_l00, pos\n"
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
