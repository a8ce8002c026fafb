// `lanec graph INPUT`: prints a step graph in its text form (docs/ir.md).
//  - INPUT a GGUF model: the recognizer's graph of one decode step
//    (docs/reference.md), or, with --graph FILE, that file's graph (verified;
//    the model supplies the weights).
//  - INPUT a step-graph text file: verified and printed back in canonical
//    form (or only checked, --check). This is the form a user edits by hand,
//    so every error names the file, line and column or the op that is wrong.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "app/command.h"
#include "app/validators.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/graph/text.h"
#include "lib/graph/verify.h"

namespace lanec::app {
namespace {

struct GraphOptions {
  std::string input;
  std::string graph_file;
  std::string output;
  int64_t max_ctx = 0;
  bool check_only = false;
};

bool is_gguf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::string(magic, 4) == "GGUF";
}

Graph load_input(const GraphOptions& options) {
  if (is_gguf_file(options.input)) {
    GgufFile gguf = GgufFile::open(options.input);
    RecognizeOptions recognize;
    recognize.max_ctx = options.max_ctx;
    return load_step_graph(gguf, options.graph_file, recognize);
  }
  if (!options.graph_file.empty())
    throw Error("--graph: expected INPUT to be a GGUF model, got the text file " + options.input);
  Graph graph = read_graph_file(options.input);
  try {
    verify_graph(graph);
  } catch (const Error& e) {
    throw Error(options.input + ": " + e.what());
  }
  return graph;
}

void run_graph(const GraphOptions& options) {
  const Graph graph = load_input(options);
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
      "graph", "Print the step graph of a GGUF model, or verify and canonicalize a graph text file");
  cmd->add_option("input", options->input, "GGUF model, or step graph text file (lanec-graph 1)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--graph", options->graph_file,
                  "With a GGUF INPUT: take the graph from this text file (verified) instead of "
                  "recognizing it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-ctx", options->max_ctx,
                  "With a GGUF INPUT: cap the KV cache rows below context_length (0: no cap)")
      ->transform(at_least<int64_t>(0));
  cmd->add_option("-o,--output", options->output, "Write the canonical text here (default stdout)");
  cmd->add_flag("--check", options->check_only, "Only verify; print a one-line summary");
  cmd->callback([options] { run_graph(*options); });
});

}  // namespace
}  // namespace lanec::app
