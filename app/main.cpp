// lanec: the command-line front end. Thin: parses flags, calls lib/, prints.
// Errors are caught here once: a user error becomes "lanec: error: ..." and
// exit code 1; an internal error (a lanec bug) exit code 70.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/command.h"
#include "lib/common/error.h"

namespace lanec::app {

std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

}  // namespace lanec::app

namespace {

void set_verbosity(int verbosity) {
  spdlog::set_level(verbosity >= 2 ? spdlog::level::trace
                    : verbosity == 1 ? spdlog::level::debug
                                     : spdlog::level::info);
}

void setup_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("lanec");
  logger->set_pattern("%^[%l]%$ %v");
  spdlog::set_default_logger(logger);
  set_verbosity(verbosity);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App root{"lanec: compiles a GGUF language model into one CUDA program"};
  root.set_version_flag("--version", std::string("lanec ") + LANEC_VERSION);
  setup_logging(0);
  root.add_flag_function(
      "-v,--verbose", [](int64_t count) { set_verbosity(static_cast<int>(count)); },
      "More log output (-vv for trace)");
  root.require_subcommand(1);
  root.fallthrough();

  auto& registry = lanec::app::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.order != b.order ? a.order < b.order : a.name < b.name; });
  for (const auto& command : registry) command.add(root);

  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return root.exit(e);
  } catch (const lanec::Error& e) {
    std::fprintf(stderr, "lanec: error: %s\n", e.what());
    return 1;
  } catch (const lanec::InternalError& e) {
    std::fprintf(stderr, "lanec: %s\n", e.what());
    return 70;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "lanec: error: out of memory\n");
    return 1;
  }
  return 0;
}
