// rows_a_warp: rows per warp from the row count and the SM count.
#include <catch2/catch.hpp>

#include "rules/rows_a_warp.h"

namespace lanec {
namespace {

TEST_CASE("rows_a_warp gives wide GEMVs 2 or 4 rows a warp", "[rules]") {
  CHECK(choose_rows_a_warp(128256, 132).rows_per_warp == 4);  // an 8B model's logits
  CHECK(choose_rows_a_warp(4096, 132).rows_per_warp == 2);    // 4096 / 2 >= 132 * 8
  CHECK(choose_rows_a_warp(4096, 132).declined == std::nullopt);
  CHECK(choose_rows_a_warp(8 * 132 * 4, 132).rows_per_warp == 4);
  CHECK(choose_rows_a_warp(8 * 132 * 4 - 1, 132).rows_per_warp == 2);
}

TEST_CASE("rows_a_warp declines GEMVs too narrow to fill the chip", "[rules]") {
  RowsAWarpChoice c = choose_rows_a_warp(512, 132);
  CHECK(c.rows_per_warp == 1);
  CHECK(c.declined == std::string("too few rows: at 2 rows a warp fewer than 8 warps would run on "
                                  "each of the 132 SMs"));
}

}  // namespace
}  // namespace lanec
