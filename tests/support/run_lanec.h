// Runs the built `lanec` binary (LANEC_BINARY) with arguments through the
// shell and captures its exit code and output: end-to-end tests of the CLI.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace lanec::test {

struct RunResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};

inline RunResult run_lanec(const std::string& args) {
  const std::string command = std::string(LANEC_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace lanec::test
