// lanec graph MODEL [--graph FILE] [--max-ctx N] [-o FILE]: prints the step
// graph of one decode step in its text form (docs/ir.md).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>

#include "app/command.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/graph/text.h"

namespace lanec::app {
namespace {

struct GraphArgs {
  std::string model;
  std::string graph_file;
  std::string output;
  int64_t max_ctx = 0;
};

void run_graph(const GraphArgs& args) {
  GgufFile gguf = GgufFile::open(args.model);
  RecognizeOptions options;
  options.max_ctx = args.max_ctx;
  const std::string text = print_graph(load_step_graph(gguf, args.graph_file, options));
  if (args.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw Error(args.output + ": cannot write the graph");
}

const RegisterCommand registration(30, "graph", [](CLI::App& root) {
  auto args = std::make_shared<GraphArgs>();
  CLI::App* cmd = root.add_subcommand("graph", "Print the step graph of a model's decode step");
  cmd->add_option("model", args->model, "GGUF model file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--graph", args->graph_file,
                  "Read the step graph from this text file (verified) instead of recognizing it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-ctx", args->max_ctx,
                  "Cap the KV cache rows below the model's context_length (0: no cap)");
  cmd->add_option("-o,--output", args->output, "Write the graph here instead of stdout");
  cmd->callback([args] { run_graph(*args); });
});

}  // namespace
}  // namespace lanec::app
