// Subcommands register themselves here, one file each (app/<name>_command.cpp),
// so the CLI grows without a central list to edit. main() adds them in
// `order`, which is the order `lanec --help` shows.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace lanec::app {

struct CommandSpec {
  int order;
  std::string name;
  // Adds the subcommand and its flags to the root app and sets its callback.
  std::function<void(CLI::App& root)> add;
};

std::vector<CommandSpec>& command_registry();

struct RegisterCommand {
  RegisterCommand(int order, std::string name, std::function<void(CLI::App&)> add) {
    command_registry().push_back({order, std::move(name), std::move(add)});
  }
};

// True when stderr is a terminal (progress bars are drawn only then).
bool stderr_is_terminal();

}  // namespace lanec::app
