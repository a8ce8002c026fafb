// lanec synth PRESET -o FILE: writes a model with random weights at a real shape.
#include <CLI/CLI.hpp>
#include <chrono>
#include <spdlog/spdlog.h>

#include "app/command.h"
#include "app/progress.h"
#include "app/validators.h"
#include "lib/common/error.h"
#include "lib/gguf/ggml_types.h"
#include "lib/synth/synth.h"

namespace lanec::app {
namespace {

struct SynthArgs {
  std::string preset;
  std::string output;
  std::string type = "q8_0";
  uint32_t layers = 0;
  uint64_t seed = 1;
  std::string vocab;
  unsigned threads = 0;
};

void run_synth(const SynthArgs& args) {
  SynthOptions options;
  options.shape = find_preset(args.preset);
  const auto type = ggml_type_from_name(args.type);
  if (!type) throw Error("unknown --type '" + args.type + "'");
  options.type = *type;
  options.seed = args.seed;
  if (args.layers) options.layers = args.layers;
  if (!args.vocab.empty()) options.vocab_path = args.vocab;
  options.threads = args.threads;

  const auto start = std::chrono::steady_clock::now();
  ProgressBar bar("synth " + args.preset, stderr_is_terminal());
  write_synthetic_model(options, args.output,
                        [&](uint64_t done, uint64_t total) { bar.update(done, total); });
  bar.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("wrote {} ({}, {}, seed {}) in {:.2f} s", args.output, args.preset, args.type,
               args.seed, seconds);
}

const RegisterCommand registration(20, "synth", [](CLI::App& root) {
  auto args = std::make_shared<SynthArgs>();
  CLI::App* cmd = root.add_subcommand("synth", "Write a GGUF model with random weights at a real shape");
  cmd->add_option("preset", args->preset, "Model shape: " + preset_names())->required();
  cmd->add_option("-o,--output", args->output, "Output GGUF file")->required();
  cmd->add_option("--type", args->type,
                  "Weight format of the matrices: " +
                      ggml_type_names_with(ggml_use::kSynth, " ", GgmlSpelling::lower_case))
      ->capture_default_str();
  cmd->add_option("--layers", args->layers, "Number of layers (default: the preset's)")
      ->transform(at_least<uint32_t>(1));
  cmd->add_option("--seed", args->seed, "Random seed")
      ->capture_default_str()
      ->transform(at_least<uint64_t>(0));
  cmd->add_option("--vocab", args->vocab, "Copy the tokenizer metadata of this GGUF file")
      ->check(CLI::ExistingFile);
  cmd->add_option("-j,--threads", args->threads, "Writer threads (default: all cores)")
      ->transform(at_least<unsigned>(0));
  cmd->callback([args] { run_synth(*args); });
});

}  // namespace
}  // namespace lanec::app
