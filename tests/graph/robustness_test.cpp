// Malformed graph text never crashes: every single-character deletion,
// duplication or replacement of the golden graphs either parses and verifies,
// or fails with a lanec::Error (never an internal error or a crash).
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "lib/graph/text.h"
#include "lib/graph/verify.h"
#include "tests/graph/sample_graphs.h"

using namespace lanec;

namespace {

// 0: parsed and verified, 1: user error.
int outcome(const std::string& text) {
  try {
    Graph g = parse_graph(text, "mutant");
    verify_graph(g);
    std::string printed = print_graph(g);
    if (parse_graph(printed) != g) return 2;  // a verified graph must round trip
    return 0;
  } catch (const Error&) {
    return 1;
  }
}

}  // namespace

TEST_CASE("mutated graph text fails cleanly", "[graph]") {
  const std::string text = print_graph(test::build_every_kind());
  const char replacements[] = {' ', ',', '=', '"', '[', ']', '0', '9', '-', '.', '@', 'x', '\n'};
  size_t accepted = 0, rejected = 0;
  // Every 7th position keeps the test fast while touching every line kind.
  for (size_t pos = 0; pos < text.size(); pos += 7) {
    std::string erased = text;
    erased.erase(pos, 1);
    int r = outcome(erased);
    REQUIRE(r != 2);
    (r == 0 ? accepted : rejected)++;
    std::string doubled = text;
    doubled.insert(pos, 1, text[pos]);
    r = outcome(doubled);
    REQUIRE(r != 2);
    (r == 0 ? accepted : rejected)++;
    for (char c : replacements) {
      std::string replaced = text;
      replaced[pos] = c;
      r = outcome(replaced);
      REQUIRE(r != 2);
      (r == 0 ? accepted : rejected)++;
    }
  }
  CHECK(rejected > accepted);  // most mutations break something
  CHECK(accepted > 0);         // e.g. digits inside float attributes stay valid
}

TEST_CASE("huge shapes are refused, not overflowed", "[graph]") {
  CHECK_THROWS_WITH(parse_graph("lanec-graph 1\nact x f32 [4294967296, 4294967296]\n"),
                    "<graph>:2:5: tensor x: expected at most 2^48 elements, got shape "
                    "[4294967296, 4294967296]");
}
