// `lanec graph`: reads a step graph in the text form (docs/ir.md), verifies
// it and prints it back in canonical form (or only checks it). The form a
// user edits by hand, so every error names the file, line and column or the
// op that is wrong.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "app/command.h"
#include "lib/common/error.h"
#include "lib/graph/text.h"
#include "lib/graph/verify.h"

namespace lanec::app {
namespace {

struct GraphOptions {
  std::string input;
  std::string output;
  bool check_only = false;
};

void run_graph(const GraphOptions& options) {
  Graph graph = read_graph_file(options.input);
  try {
    verify_graph(graph);
  } catch (const Error& e) {
    throw Error(options.input + ": " + e.what());
  }
  if (options.check_only) {
    std::printf("%s: ok (%zu tensors, %zu ops)\n", options.input.c_str(),
                graph.tensors().size(), graph.ops().size());
    return;
  }
  std::string text = print_graph(graph);
  if (options.output.empty() || options.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::ofstream out(options.output, std::ios::binary);
  out << text;
  if (!out.flush()) throw Error("cannot write " + options.output);
}

const RegisterCommand kRegister(20, "graph", [](CLI::App& root) {
  auto options = std::make_shared<GraphOptions>();
  CLI::App* cmd = root.add_subcommand(
      "graph", "Verify a step graph in text form and print it in canonical form");
  cmd->add_option("input", options->input, "Step graph text file (lanec-graph 1)")->required();
  cmd->add_option("-o,--output", options->output, "Write the canonical text here (default stdout)");
  cmd->add_flag("--check", options->check_only, "Only verify; print a one-line summary");
  cmd->callback([options] { run_graph(*options); });
});

}  // namespace
}  // namespace lanec::app
