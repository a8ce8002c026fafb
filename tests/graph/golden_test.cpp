// Golden text of the sample graphs: pins the printer's output and the sample
// graphs themselves. Regenerate (after a deliberate change) with
//   LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests "[graph]"
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "lib/graph/text.h"
#include "lib/graph/verify.h"
#include "tests/graph/sample_graphs.h"

using namespace lanec;

namespace {

void check_golden(const Graph& graph, const std::string& file) {
  std::string path = std::string(LANEC_SOURCE_DIR) + "/tests/graph/data/" + file;
  std::string text = print_graph(graph);
  if (std::getenv("LANEC_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream golden;
  golden << in.rdbuf();
  if (golden.str() != text) {
    std::istringstream a(golden.str()), b(text);
    std::string la, lb;
    int line = 0;
    while (true) {
      ++line;
      bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
      if (!ga && !gb) break;
      if (!ga || !gb || la != lb) {
        FAIL(file << ":" << line << " differs\n  golden:  " << (ga ? la : "<end>")
                  << "\n  printed: " << (gb ? lb : "<end>"));
      }
    }
  }
  // The golden file itself reads back to the same graph.
  Graph parsed = read_graph_file(path);
  CHECK(parsed == graph);
  CHECK_NOTHROW(verify_graph(parsed));
}

}  // namespace

TEST_CASE("golden: one-layer llama", "[graph]") {
  check_golden(test::build_llama_1layer(), "llama_1layer.graph");
}

TEST_CASE("golden: every-kind tour", "[graph]") {
  check_golden(test::build_every_kind(), "every_kind.graph");
}

TEST_CASE("read_graph_file errors name the path", "[graph]") {
  CHECK_THROWS_WITH(read_graph_file("/nonexistent/x.graph"),
                    Catch::StartsWith("cannot read graph file /nonexistent/x.graph: "));
  std::string gguf = std::string(LANEC_SOURCE_DIR) + "/tests/data/vocab/qwen3-vocab.gguf";
  CHECK_THROWS_WITH(read_graph_file(gguf),
                    gguf + ": expected a text step graph ('lanec-graph 1'), got a GGUF file");
}
