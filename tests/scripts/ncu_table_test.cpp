// bench/ncu_table.py condenses an Nsight Compute report on the GPU machine;
// CI has no GPU, so it reads a report ncu wrote there (two kernels of a
// Qwen3-8B layer, tests/data/ncu/) and must give their rows.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/run_lanec.h"

namespace {

lanec::test::RunResult ncu_table(const std::string& report) {
  return lanec::test::run_command("python3 '" + std::string(LANEC_SOURCE_DIR) + "/bench/ncu_table.py' '" + report +
                                  "' 'a test'");
}

}  // namespace

TEST_CASE("ncu_table.py gives one row a kernel of a real ncu report", "[scripts]") {
  const lanec::test::RunResult r = ncu_table(std::string(LANEC_TEST_DATA) + "/ncu/two_kernels.txt");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Launch index, kernel with its template arguments, grid / block, µs,
  // DRAM %, achieved occupancy %, registers, cycles between instructions.
  CHECK(r.output.find("| 1 | rms_norm_kernel<0, 1, 4> | 4x1x1 / 1024x1x1 | 4.74 | 0.2 | 45.3 | 27 | 21.7 |") !=
        std::string::npos);
  CHECK(r.output.find("| 2 | gemv_kernel<4, 2, 1, 1> | 6144x1x1 / 32x4x1 | 33.79 | 67.3 | 53.6 | 47 | 21.1 |") !=
        std::string::npos);
  // The largest stall, from ncu's rule text spread over three lines.
  CHECK(r.output.find("waiting for a scoreboard dependency on a L1TEX operation (14.4 cycles, 68.0 %)") !=
        std::string::npos);
  CHECK(r.output.find("| 3 |") == std::string::npos);
}

TEST_CASE("ncu_table.py refuses a report with no profiled kernel", "[scripts]") {
  // ncu's own error output (no kernel matched), as the script would keep it.
  const lanec::test::RunResult r = ncu_table(std::string(LANEC_TEST_DATA) + "/ncu/no_kernels.txt");
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("no profiled kernel") != std::string::npos);
  CHECK(r.output.find("| # |") == std::string::npos);
}
