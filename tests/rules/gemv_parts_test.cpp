// gemv_parts: GEMVs of one input become one launch with parts; declines
// mixed formats and more than four parts.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph fan_out(const std::vector<GgmlType>& formats) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  for (size_t i = 0; i < formats.size(); ++i) {
    std::string n = std::to_string(i);
    g.output(g.apply(OpKind::matmul, "y" + n, {32}, {x, g.constant("w" + n, formats[i], {32, 64})}));
  }
  return g.finish();
}

TEST_CASE("gemv_parts merges GEMVs reading one input", "[rules]") {
  auto run = test::run_rule(fan_out({GgmlType::Q8_0, GgmlType::Q8_0, GgmlType::Q8_0}), "gemv_parts");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "gemv [gemv_parts] {\n"
        "  #0 matmul y0 = x, w0\n"
        "  #1 matmul y1 = x, w1\n"
        "  #2 matmul y2 = x, w2\n"
        "}\n");
}

TEST_CASE("gemv_parts declines mixed formats and more than four parts", "[rules]") {
  auto mixed = test::run_rule(fan_out({GgmlType::Q8_0, GgmlType::F16}), "gemv_parts");
  CHECK(mixed->fired == 0);
  CHECK(mixed->reason() == "weight formats differ (q8_0, f16); one launch streams one format");
  auto five = test::run_rule(fan_out(std::vector<GgmlType>(5, GgmlType::Q8_0)), "gemv_parts");
  CHECK(five->fired == 0);
  CHECK(five->reason() == "5 GEMVs read the input; one launch takes at most 4 parts");
}

}  // namespace
}  // namespace lanec
