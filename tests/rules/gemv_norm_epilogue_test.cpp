// gemv_norm_epilogue: fires on matmul + residual add, then takes the norm of
// the sum into the same launch (after add_norm, or on its own); declines when
// the product is read without the residual or the sum is too long for the
// norm tail.
#include <catch2/catch.hpp>

#include "tests/rules/rule_fixtures.h"

namespace lanec {
namespace {

Graph residual(bool product_is_output, bool norm_after, int64_t n = 64) {
  GraphBuilder g;
  TensorId x = g.state("x", GgmlType::F32, {64});
  TensorId r = g.state("r", GgmlType::F32, {n});
  TensorId y = g.apply(OpKind::matmul, "y", {n}, {x, g.constant("w", GgmlType::Q8_0, {n, 64})});
  TensorId h = g.apply_like(OpKind::add, "h", {r, y});
  g.output(h);
  if (norm_after)
    g.output(g.apply_like(OpKind::rms_norm, "n", {h, g.constant("nw", GgmlType::F32, {n})},
                          {{"eps", 1e-6}}));
  if (product_is_output) g.output(y);
  return g.finish();
}

const char* kFusedWithNorm =
    "gemv [add_norm, gemv_norm_epilogue] {\n"
    "  #0 matmul y = x, w\n"
    "  #1 add h = r, y\n"
    "  #2 rms_norm n = h, nw eps=1e-06\n"
    "}\n";

TEST_CASE("gemv_norm_epilogue adds the residual in the GEMV epilogue", "[rules]") {
  auto run = test::run_rule(residual(false, false), "gemv_norm_epilogue");
  CHECK(run->fired == 1);
  CHECK(run->text() ==
        "gemv [gemv_norm_epilogue] {\n"
        "  #0 matmul y = x, w\n"
        "  #1 add h = r, y\n"
        "}\n");
}

TEST_CASE("gemv_norm_epilogue takes the add_norm that follows into the launch", "[rules]") {
  auto run = test::run_rule(residual(false, true), "gemv_norm_epilogue", {"add_norm"});
  CHECK(run->fired == 1);
  CHECK(run->text() == kFusedWithNorm);
}

TEST_CASE("gemv_norm_epilogue with add_norm held: residual first, then the norm", "[rules]") {
  auto run = test::run_rule(residual(false, true), "gemv_norm_epilogue");
  CHECK(run->fired == 2);
  CHECK(run->text() ==
        "gemv [gemv_norm_epilogue] {\n"
        "  #0 matmul y = x, w\n"
        "  #1 add h = r, y\n"
        "  #2 rms_norm n = h, nw eps=1e-06\n"
        "}\n");
}

TEST_CASE("gemv_norm_epilogue declines a product read elsewhere and a sum too long for the tail",
          "[rules]") {
  auto read = test::run_rule(residual(true, false), "gemv_norm_epilogue");
  CHECK(read->reason() == "the product y is also read by the graph outputs");
  auto read_norm = test::run_rule(residual(true, true), "gemv_norm_epilogue", {"add_norm"});
  CHECK(read_norm->fired == 0);
  CHECK(read_norm->reason() == "the product y is also read by the graph outputs");
  auto odd = test::run_rule(residual(false, true, 48), "gemv_norm_epilogue", {"add_norm"});
  CHECK(odd->fired == 0);
  CHECK(odd->reason() ==
        "the norm tail keeps h in one block's shared memory: it takes a multiple of 32 up to 8192 "
        "elements, got 48");
}

}  // namespace
}  // namespace lanec
