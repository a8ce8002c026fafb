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
#include "tests/support/golden.h"

namespace lanec {
namespace {

using test::first_difference;
using test::read_text;

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
      std::string difference = first_difference(read_text(path), got);
      INFO(path << "\n(regenerate: LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests \"[plan][golden]\")");
      CHECK(difference == "");
    }
  }
}

}  // namespace
}  // namespace lanec
