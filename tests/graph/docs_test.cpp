// docs/ir.md is the specification the reference executor and the fusion
// rules are written from: every op kind must be documented there.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "lib/graph/graph.h"

using namespace lanec;

TEST_CASE("docs/ir.md documents every op kind", "[graph]") {
  std::ifstream in(std::string(LANEC_SOURCE_DIR) + "/docs/ir.md");
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  for (OpKind kind : all_op_kinds()) {
    std::string name = op_kind_name(kind);
    INFO(name);
    bool heading = doc.find("**" + name + "**") != std::string::npos;
    bool table_row = doc.find("| `" + name + "` |") != std::string::npos;
    CHECK((heading || table_row));
  }
}
