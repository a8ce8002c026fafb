// gemv_prologue on hand-made launch lists: what it folds, what it declines.
#include <catch2/catch.hpp>

#include "lib/plan/rule_tally.h"
#include "rules/gemv_prologue.h"

namespace lanec {
namespace {

Launch norm_launch(const std::string& residual) {
  Launch l;
  l.kind = LaunchKind::rms_norm;
  l.name = "rms_norm_n";
  l.ops = {3, 4};
  l.rules = {"add_norm"};
  RmsNormLaunch p;
  p.x = "x";
  p.residual = residual;
  p.h_out = residual.empty() ? "" : "h";
  p.weight = "w_norm";
  p.out_q8 = "n.q8";
  p.eps = 1e-6;
  p.n = 4096;
  l.params = p;
  return l;
}

Launch gemv_launch(const std::string& x_q8) {
  Launch l;
  l.kind = LaunchKind::gemv;
  l.name = "gemv_g";
  l.ops = {5};
  GemvLaunch p;
  p.parts = {GemvPart{"w", "y", "", "", 64}};
  p.format = GgmlType::Q8_0;
  p.numerics = GemvNumerics::int8;
  p.x_q8 = x_q8;
  p.k = 4096;
  l.params = p;
  return l;
}

GemvPrologueContext context(int64_t smem) {
  GemvPrologueContext c;
  c.sms = 8;
  c.smem_bytes_per_block = smem;
  c.storage_of = [](const std::string& n) { return n; };
  c.is_graph_output = [](const std::string& n) { return n == "out"; };
  return c;
}

std::string only_decline(const RuleTally& tally) {
  for (const RuleCount& r : tally.counts({}))
    if (r.rule == "gemv_prologue" && r.declined.size() == 1) return r.declined.begin()->first;
  return "";
}

TEST_CASE("gemv_prologue folds an add_norm into the GEMV that reads its int8 form", "[rules]") {
  std::vector<Launch> launches = {norm_launch("r"), gemv_launch("n.q8")};
  RuleTally tally;
  apply_gemv_prologue(launches, context(227 * 1024), tally);
  REQUIRE(launches.size() == 1);
  const auto& g = std::get<GemvLaunch>(launches[0].params);
  CHECK(g.prologue);
  CHECK(g.x == "x");
  CHECK(g.x_q8.empty());
  CHECK(g.x_residual == "r");
  CHECK(g.h_out == "h");
  CHECK(g.norm_weight == "w_norm");
  CHECK(g.eps == 1e-6);
  CHECK(g.grid_sms == 8);
  CHECK(launches[0].ops == std::vector<size_t>{3, 4, 5});
  CHECK(launches[0].rules == std::vector<std::string>{"add_norm", "gemv_prologue"});
  CHECK(launches[0].writes() == std::vector<std::string>{"h", "y"});
  REQUIRE(tally.firings().size() == 1);
  CHECK(tally.firings()[0].ops == std::vector<size_t>{3, 4, 5});
}

TEST_CASE("gemv_prologue folds a quantize launch, then the norm before it", "[rules]") {
  Launch norm = norm_launch("");
  auto& n = std::get<RmsNormLaunch>(norm.params);
  n.out = "n";
  n.out_q8.clear();
  Launch quant;
  quant.kind = LaunchKind::quantize;
  quant.name = "quantize_n";
  quant.params = QuantizeLaunch{"n", "n.q8", 4096};
  std::vector<Launch> launches = {norm, quant, gemv_launch("n.q8")};
  RuleTally tally;
  apply_gemv_prologue(launches, context(227 * 1024), tally);
  REQUIRE(launches.size() == 1);
  const auto& g = std::get<GemvLaunch>(launches[0].params);
  CHECK(g.x == "x");
  CHECK(g.norm_weight == "w_norm");
  CHECK(g.x_residual.empty());
  CHECK(tally.firings().size() == 2);
}

TEST_CASE("gemv_prologue declines what it cannot fold", "[rules]") {
  RuleTally tally;
  SECTION("the formed input does not fit a block's shared memory") {
    std::vector<Launch> launches = {norm_launch("r"), gemv_launch("n.q8")};
    // 4096 f32 + 4096 int8 + 128 scales + the kernel's 1024 bytes.
    CHECK(gemv_prologue_smem_bytes(4096, GemvNumerics::int8) == 4 * 4096 + 4096 + 512);
    apply_gemv_prologue(launches, context(16 * 1024), tally);
    CHECK(launches.size() == 2);
    CHECK(only_decline(tally) == "the formed input needs 22016 bytes of shared memory, a block has 16384");
  }
  SECTION("another launch reads the norm's output") {
    std::vector<Launch> launches = {norm_launch("r"), gemv_launch("n.q8"), gemv_launch("n.q8")};
    launches[2].name = "gemv_other";
    apply_gemv_prologue(launches, context(227 * 1024), tally);
    CHECK(launches.size() == 3);
    CHECK(only_decline(tally) == "the input n.q8 is also read by 1 launch");
  }
  SECTION("a launch between them writes what the norm reads") {
    Launch between = gemv_launch("other.q8");
    between.name = "gemv_between";
    std::get<GemvLaunch>(between.params).parts[0].y = "r";
    std::vector<Launch> launches = {norm_launch("r"), between, gemv_launch("n.q8")};
    apply_gemv_prologue(launches, context(227 * 1024), tally);
    CHECK(launches.size() == 3);
    CHECK(only_decline(tally) == "launch gemv_between between them writes r");
  }
  SECTION("the sum would overwrite its own input") {
    Launch norm = norm_launch("r");
    std::get<RmsNormLaunch>(norm.params).h_out = "x";
    std::vector<Launch> launches = {norm, gemv_launch("n.q8")};
    apply_gemv_prologue(launches, context(227 * 1024), tally);
    CHECK(launches.size() == 2);
    CHECK(only_decline(tally) == "the sum x overwrites a vector it is formed from");
  }
}

}  // namespace
}  // namespace lanec
