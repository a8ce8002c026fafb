// lanec plan MODEL --knobs K.yaml [--graph FILE] [--hold a,b] [--json]
//   [--census] [--dump-after STAGE] [--max-ctx N]
// Plans the model's decode step under a knob file and prints the summary:
// launches by kind, rules fired and declined (with reasons), buffers and
// their bytes, weight bytes read per step. `-o model.cu` writes the emitted
// CUDA program instead (docs/emitted-program.md); `--build` then runs nvcc on it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <spdlog/spdlog.h>

#include "app/command.h"
#include "app/validators.h"
#include "emit/build_program.h"
#include "emit/emit_program.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/knobs/knobs.h"
#include "lib/plan/planner.h"
#include "lib/plan/size.h"
#include "rules/registry.h"

namespace lanec::app {
namespace {

struct PlanArgs {
  std::string model;
  std::string knobs;
  std::string graph_file;
  std::string hold;
  std::string dump_after;
  int64_t max_ctx = 0;
  bool json = false;
  bool census_only = false;
  std::string output;  // -o: the emitted program
  bool build = false;  // --build: nvcc it
};

// -o / --build: the emitted program, and optionally its build.
void write_program(const PlanArgs& args, const PlanResult& result, const GgufFile& gguf) {
  EmitOptions emit;
  emit.knob_file = args.knobs;
  std::string name = program_path_for(args.output);
  const size_t slash = name.find_last_of('/');
  emit.output_name = slash == std::string::npos ? name : name.substr(slash + 1);
  const std::string text = emit_program(result.schedule, result.graph, model_identity(gguf), emit);
  std::FILE* f = std::fopen(args.output.c_str(), "wb");
  if (f == nullptr) throw Error(args.output + ": cannot write the program file");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw Error(args.output + ": writing the program file failed");
  std::fprintf(stderr, "wrote %s (%zu launches a step)\n", args.output.c_str(), result.schedule.launches.size());
  if (!args.build) return;
  build_program(args.output, result.schedule.knobs.chip.arch);
  std::fprintf(stderr, "built %s\n", program_path_for(args.output).c_str());
}

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// The plan is still correct on an architecture the planner has no figures
// for, but its GEMV splits may not fill the chip: say so once.
void warn_unknown_arch(const std::string& knob_file, const Knobs& knobs) {
  if (known_resident_warps_per_sm(knobs.arch_number())) return;
  spdlog::warn("{}: chip.arch {}: no resident-warps-per-SM figure for this architecture; GEMV splits are "
               "sized for {} warps an SM",
               knob_file, knobs.chip.arch, kAssumedResidentWarpsPerSm);
}

void run_plan(const PlanArgs& args) {
  Knobs knobs = load_knobs(args.knobs);
  warn_unknown_arch(args.knobs, knobs);
  PlanOptions options;
  options.held = parse_held_rules(args.hold);
  options.dump_after = args.dump_after;
  options.max_ctx = args.max_ctx;
  options.graph_file = args.graph_file;
  GgufFile gguf = GgufFile::open(args.model);
  const PlanResult result = plan_model(gguf, knobs, options);
  if (!args.output.empty()) {
    write_program(args, result, gguf);
    return;
  }
  if (!args.dump_after.empty()) {
    print(result.dump);
    return;
  }
  if (args.json) {
    print(census_json(result.schedule));
    return;
  }
  print(census_text(result.schedule));
  if (!args.census_only) print("\n" + schedule_text(result.schedule));
}

const RegisterCommand registration(40, "plan", [](CLI::App& root) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = root.add_subcommand("plan", "Plan a model's decode step under a knob file");
  cmd->add_option("model", args->model, "GGUF model file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--knobs", args->knobs, "Knob file (YAML: chip and precisions)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--graph", args->graph_file,
                  "Plan this step-graph text file instead of recognizing the model")
      ->check(CLI::ExistingFile);
  cmd->add_option("--hold", args->hold, "Rules to hold back, comma-separated (e.g. add_norm,glu_pair)");
  cmd->add_option("--dump-after", args->dump_after,
                  "Print the pipeline's state after this stage: recognize, rewrite, link, size, "
                  "sequences, schedule");
  cmd->add_option("--max-ctx", args->max_ctx, "Cap the KV cache rows (0: the model's context)")
      ->transform(at_least<int64_t>(0));
  cmd->add_flag("--json", args->json, "Print the census as JSON");
  cmd->add_flag("--census", args->census_only, "Print only the census (no launch and buffer list)");
  cmd->add_option("-o,--output", args->output, "Write the emitted CUDA program to this .cu file");
  cmd->add_flag("--build", args->build, "With -o: build the program with nvcc for the knob file's arch");
  cmd->callback([args] {
    if (args->build && args->output.empty()) throw Error("plan: --build needs -o FILE.cu");
    run_plan(*args);
  });
});

}  // namespace
}  // namespace lanec::app
