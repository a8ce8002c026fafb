// Runs the built `lanec` binary (LANEC_BINARY) with arguments, or any shell
// command, and captures its exit code and output: end-to-end tests of the
// CLI and of the scripts' helpers.
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

// Runs a shell command, stdout and stderr together.
inline RunResult run_command(const std::string& shell_command) {
  const std::string command = shell_command + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

inline RunResult run_lanec(const std::string& args) { return run_command(std::string(LANEC_BINARY) + " " + args); }

}  // namespace lanec::test
