// Golden census files: the census of the tiny llama, qwen2 and qwen3 models
// under the h200 and rtx4090 sample knob files, compared byte for byte with
// tests/golden/census/<preset>__<knobs>.txt. A failure prints the first
// differing line. Regenerate after an intended change with
//   LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests "[plan][golden]"
// and review the diff: it shows exactly what the change did to the plans.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "lib/plan/planner.h"
#include "tests/plan/plan_fixtures.h"

namespace lanec {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_difference(const std::string& got, const std::string& want) {
  std::istringstream g(got), w(want);
  std::string gl, wl;
  for (int line = 1;; ++line) {
    bool gm = static_cast<bool>(std::getline(g, gl));
    bool wm = static_cast<bool>(std::getline(w, wl));
    if (!gm && !wm) return "";
    if (gl != wl || gm != wm)
      return "line " + std::to_string(line) + ":\n  got:  " + (gm ? gl : "<end>") +
             "\n  want: " + (wm ? wl : "<end>");
  }
}

TEST_CASE("census golden files for the tiny models under h200 and rtx4090", "[plan][golden]") {
  const bool update = std::getenv("LANEC_UPDATE_GOLDEN") != nullptr;
  for (const char* preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    auto model = test::tiny_model(preset);
    for (const char* chip : {"h200", "rtx4090"}) {
      Knobs knobs = load_knobs(std::string(LANEC_SOURCE_DIR) + "/samples/knobs/" + chip + ".yaml");
      PlanResult plan = plan_graph(model->graph, knobs, {});
      plan.schedule.model_name = model->gguf->get_string_or("general.name", "");
      std::string got = census_text(plan.schedule);
      std::string path = std::string(LANEC_SOURCE_DIR) + "/tests/golden/census/" + preset + "__" +
                         chip + ".txt";
      if (update) {
        std::ofstream(path, std::ios::binary) << got;
        continue;
      }
      std::string difference = first_difference(got, read_text(path));
      INFO(path << "\n(regenerate: LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests \"[plan][golden]\")");
      CHECK(difference == "");
    }
  }
}

}  // namespace
}  // namespace lanec
