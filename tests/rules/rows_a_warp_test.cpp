// rows_a_warp: rows per warp from the format, numerics, rows and SM count
// (measured defaults of docs/kernels.md).
#include <catch2/catch.hpp>

#include "rules/rows_a_warp.h"

namespace lanec {
namespace {

TEST_CASE("rows_a_warp gives dequant q8_0 GEMVs 2 rows a warp when rows allow", "[rules]") {
  CHECK(choose_rows_a_warp(151936, GgmlType::Q8_0, true, 132).rows_per_warp == 2);
  CHECK(choose_rows_a_warp(4096, GgmlType::Q8_0, true, 132).rows_per_warp == 2);
  CHECK(choose_rows_a_warp(4096, GgmlType::Q8_0, true, 132).declined == std::nullopt);
  CHECK(choose_rows_a_warp(2 * 8 * 132, GgmlType::Q8_0, true, 132).rows_per_warp == 2);
  CHECK(choose_rows_a_warp(2 * 8 * 132 - 2, GgmlType::Q8_0, true, 132).rows_per_warp == 1);
}

TEST_CASE("rows_a_warp declines narrow GEMVs and the paths measured fastest at 1", "[rules]") {
  RowsAWarpChoice narrow = choose_rows_a_warp(512, GgmlType::Q8_0, true, 132);
  CHECK(narrow.rows_per_warp == 1);
  CHECK(narrow.declined == std::string("too few rows: at 2 rows a warp fewer than 8 warps would run on "
                                       "each of the 132 SMs"));
  CHECK(choose_rows_a_warp(151936, GgmlType::Q8_0, false, 132).declined ==
        std::string("measured fastest at 1 row a warp for q8_0 weights with int8 (one- or two-word) activations"));
  CHECK(choose_rows_a_warp(151936, GgmlType::F16, true, 132).declined ==
        std::string("measured fastest at 1 row a warp for f16 weights with f32 activations"));
}

}  // namespace
}  // namespace lanec
