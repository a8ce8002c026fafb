// Golden step graphs of the tiny synth presets, compared byte for byte.
// Regenerate after an intended change (then review the diff):
//   LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests "[golden]"
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "lib/graph/recognize/recognize.h"
#include "lib/graph/text.h"
#include "tests/recognize/tiny_models.h"
#include "tests/support/golden.h"

using namespace lanec;

namespace {

using lanec::test::first_difference;

std::string golden_path(const std::string& preset) {
  return std::string(LANEC_SOURCE_DIR) + "/tests/golden/graphs/" + preset + ".graph";
}

}  // namespace

TEST_CASE("golden step graphs of the tiny presets", "[ref][recognize][golden]") {
  const char* update = std::getenv("LANEC_UPDATE_GOLDEN");
  for (const char* preset : {"qwen3-tiny", "qwen2-tiny", "llama-tiny"}) {
    auto m = lanec::testing::make_tiny_model(preset);
    const std::string got = print_graph(recognize_model(*m->gguf));
    const std::string path = golden_path(preset);
    if (update && std::string(update) == "1") {
      std::ofstream(path, std::ios::binary | std::ios::trunc) << got;
      WARN("updated " << path);
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    INFO(path << " (regenerate: LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests \"[golden]\")");
    REQUIRE(in.good());
    std::ostringstream want;
    want << in.rdbuf();
    INFO(first_difference(want.str(), got));
    CHECK(want.str() == got);
  }
}
