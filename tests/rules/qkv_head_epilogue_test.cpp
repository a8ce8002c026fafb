// qkv_head_epilogue: packs the Q, K and V results into one qkv buffer;
// declines when they read different inputs.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

TEST_CASE("qkv_head_epilogue packs Q, K and V into qkv_l00", "[rules]") {
  auto run = test::run_rule(test::attention_graph({}), "qkv_head_epilogue");
  CHECK(run->fired == 1);
  CHECK(run->text().rfind(
        "single [qkv_head_epilogue] pack=qkv_l00 {\n"
        "  #0 matmul q_l00 = x, wq\n"
        "}\n"
        "single [qkv_head_epilogue] pack=qkv_l00 {\n"
        "  #1 matmul k_l00 = x, wk\n"
        "}\n"
        "single [qkv_head_epilogue] pack=qkv_l00 {\n"
        "  #2 matmul v_l00 = x, wv\n"
        "}\n", 0) == 0);
  // After gemv_parts the three are one launch with the pack.
  auto both = test::run_rule(test::attention_graph({}), "gemv_parts", {"qkv_head_epilogue"});
  CHECK(both->text().rfind("gemv [qkv_head_epilogue, gemv_parts] pack=qkv_l00 {\n", 0) == 0);
}

TEST_CASE("qkv_head_epilogue declines projections of different inputs", "[rules]") {
  test::AttnBlock block;
  block.separate_v_input = true;
  auto run = test::run_rule(test::attention_graph(block), "qkv_head_epilogue");
  CHECK(run->fired == 0);
  CHECK(run->reason() == "Q, K and V read different inputs (x, x2)");
}

}  // namespace
}  // namespace lanec
