// Golden-file helpers shared by the golden tests (step graphs, censuses,
// emitted programs): read a file whole, and describe where two texts first
// differ so that a failure shows the line rather than two whole files.
// Regenerating: LANEC_UPDATE_GOLDEN=1 ./build/tests/lanec_tests "[golden]".
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace lanec::test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "" when equal; else the 1-based line and both versions of it.
inline std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return want == got ? "" : "texts differ only in the final newline";
    if (!ha || !hb || la != lb)
      return "first difference at line " + std::to_string(line) + ":\n  golden: " +
             (ha ? la : "<end of file>") + "\n  got:    " + (hb ? lb : "<end of file>");
  }
}

}  // namespace lanec::test
