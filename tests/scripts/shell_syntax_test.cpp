// The shell scripts that run on the GPU machine (scripts/, bench/) have no
// GPU-free run in CI; at least each one parses, so a typo does not cost a
// device run. `bash -n` reads a script without executing it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::vector<std::filesystem::path> shell_scripts() {
  std::vector<std::filesystem::path> found;
  for (const char* dir : {"scripts", "bench", ".ci"})
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(LANEC_SOURCE_DIR) / dir))
      if (entry.path().extension() == ".sh" || entry.path().filename() == "run") found.push_back(entry.path());
  return found;
}

}  // namespace

static bool parses(const std::filesystem::path& script) {
  return std::system(("bash -n '" + script.string() + "' 2>/dev/null").c_str()) == 0;
}

TEST_CASE("every shell script of scripts/, bench/ and .ci/ parses", "[scripts]") {
  // The check itself: a script with an unclosed `if` does not parse.
  const std::filesystem::path broken = std::filesystem::temp_directory_path() / "lanec_broken_script.sh";
  std::ofstream(broken) << "if true; then\n  echo never closed\n";
  CHECK_FALSE(parses(broken));
  std::filesystem::remove(broken);

  const std::vector<std::filesystem::path> scripts = shell_scripts();
  CHECK(scripts.size() >= 10);
  for (const auto& script : scripts) {
    INFO(script.string());
    CHECK(parses(script));
  }
}
