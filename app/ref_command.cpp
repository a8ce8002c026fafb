// lanec ref MODEL (--tokens "ID ..." | -p TEXT) [-n N] [--logits FILE]
//   [--knobs FILE [--hold a,b]]: greedy decoding with the CPU reference
// executor on the unfused graph in f32, or with --knobs on the schedule
// planned under that knob file, run by the CPU schedule executor with the
// planned numerics (docs/reference.md). Prints the
// prompt and generated ids, and the generated text when the model has a
// vocabulary, on stdout; timing goes to the log (stderr).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <spdlog/spdlog.h>

#include "app/command.h"
#include "app/token_ids.h"
#include "app/validators.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/knobs/knobs.h"
#include "lib/plan/cpu_schedule.h"
#include "lib/plan/planner.h"
#include "lib/ref/executor.h"
#include "lib/ref/generate.h"
#include "lib/ref/npy.h"
#include "lib/ref/weights.h"
#include "lib/tokenizer/gguf_vocab.h"
#include "lib/tokenizer/tokenizer.h"
#include "rules/registry.h"

namespace lanec::app {
namespace {

struct RefArgs {
  std::string model;
  std::string prompt;
  std::string tokens;
  std::string graph_file;
  std::string logits_file;
  std::string knobs;  // --knobs: run the planned schedule (CpuScheduleExecutor)
  std::string hold;
  int64_t n_generate = 16;
  int64_t max_ctx = 0;
  unsigned threads = 0;
};

std::string join_ids(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

// The prompt's ids: --tokens as given, or -p encoded with the vocabulary.
std::vector<int32_t> prompt_ids(const RefArgs& args, const std::optional<Tokenizer>& tokenizer) {
  if (args.prompt.empty()) {
    std::vector<int32_t> ids = parse_token_ids(args.tokens, "--tokens");
    if (ids.empty()) throw Error("--tokens: expected at least one token id, got none");
    return ids;
  }
  const std::vector<int32_t> prompt = tokenizer->encode(args.prompt);
  if (prompt.empty()) throw Error("-p: the prompt encodes to no tokens");
  return prompt;
}

int64_t context_of(const Graph& graph) {
  if (auto n_ctx = graph.metadata().find("n_ctx"); n_ctx != graph.metadata().end())
    if (const int64_t* v = std::get_if<int64_t>(&n_ctx->second)) return *v;
  return 0;
}

// What the step loop runs: an executor behind StepFunctions, its logits
// width and the positions its cache holds. `keep` owns the executor and
// whatever it references (graph, plan).
struct Stepper {
  StepFunctions steps;
  int64_t n_vocab = 0;
  int64_t max_positions = 0;
  std::shared_ptr<void> keep;
};

// The unfused step graph on the reference executor (f32).
Stepper unfused_stepper(const Graph& graph, WeightStore& weights, unsigned threads) {
  ReferenceOptions options;
  options.threads = threads;
  auto executor = std::make_shared<ReferenceExecutor>(graph, weights, options);
  Stepper s;
  s.steps = step_functions_of(*executor);
  s.n_vocab = executor->n_vocab();
  s.max_positions = context_of(graph);
  s.keep = executor;
  return s;
}

// --knobs: the graph planned under the knob file, run by the CPU schedule
// executor with the planned numerics (int8 activation forms, cache precision).
Stepper planned_stepper(const Graph& graph, const Knobs& knobs, const std::vector<std::string>& held,
                        WeightStore& weights, unsigned threads) {
  struct Planned {
    PlanResult plan;
    std::unique_ptr<CpuScheduleExecutor> executor;
  };
  auto planned = std::make_shared<Planned>();
  PlanOptions options;
  options.held = held;
  planned->plan = plan_graph(graph, knobs, options);
  const Schedule& schedule = planned->plan.schedule;
  planned->executor = std::make_unique<CpuScheduleExecutor>(schedule, weights, threads);
  spdlog::info("planned under {}: {} launches a step", knobs_summary(knobs), schedule.launches.size());
  Stepper s;
  s.steps = step_functions_of(*planned->executor);
  s.n_vocab = schedule.buffer(schedule.logits_output()).elements;  // the executor checked it exists
  s.max_positions = context_of(graph);
  s.keep = planned;
  return s;
}

// The step loop shared by both modes: greedy decoding, the logits file, timing.
GreedyResult run_steps(const Stepper& stepper, const std::vector<int32_t>& prompt, const RefArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<NpyF32Writer> npy;
  if (!args.logits_file.empty()) npy.emplace(args.logits_file, stepper.n_vocab);
  GreedyResult result = generate_greedy(
      stepper.steps, prompt, args.n_generate, stepper.max_positions,
      [&](int64_t, int32_t, const std::vector<float>& logits) {
        if (npy) npy->append_row(logits);
      });
  if (npy) npy->finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("{} steps in {:.2f} s ({:.2f} steps/s)", result.steps, seconds,
               static_cast<double>(result.steps) / seconds);
  return result;
}

void print_result(const std::vector<int32_t>& prompt, const GreedyResult& result,
                  const std::optional<Tokenizer>& tokenizer) {
  std::printf("prompt: %s\n", join_ids(prompt).c_str());
  std::printf("generated: %s\n", join_ids(result.generated).c_str());
  if (tokenizer) {
    const std::string text = tokenizer->decode(result.generated);
    std::printf("text: %s\n", text.c_str());
  }
}

void run_ref(const RefArgs& args) {
  if (args.prompt.empty() == args.tokens.empty())
    throw Error("ref: expected exactly one of -p TEXT or --tokens \"ID ...\"");
  if (args.n_generate < 1)
    throw Error("-n: expected at least 1 token to generate, got " + std::to_string(args.n_generate));
  if (!args.hold.empty() && args.knobs.empty()) throw Error("ref: --hold needs --knobs FILE");
  // Knob file and held rules are checked before the model loads, as `lanec plan` does.
  std::optional<Knobs> knobs;
  if (!args.knobs.empty()) knobs = load_knobs(args.knobs);
  const std::vector<std::string> held = parse_held_rules(args.hold);

  GgufFile gguf = GgufFile::open(args.model);
  // The tokenizer is needed for -p; with --tokens it only renders the text,
  // and a model without a vocabulary prints ids alone.
  std::optional<Tokenizer> tokenizer;
  if (!args.prompt.empty() || gguf.has("tokenizer.ggml.model"))
    tokenizer.emplace(Tokenizer::from_vocab(load_vocab(gguf)));
  const std::vector<int32_t> prompt = prompt_ids(args, tokenizer);
  // The cache needs only the positions this run executes, not the model's
  // whole context (40k+ rows of every layer's K and V).
  const int64_t positions = static_cast<int64_t>(prompt.size()) + args.n_generate - 1;
  RecognizeOptions options;
  options.max_ctx = args.max_ctx > 0 ? args.max_ctx : positions;
  const Graph graph = load_step_graph(gguf, args.graph_file, options);

  const auto t0 = std::chrono::steady_clock::now();
  WeightStore weights(gguf, args.threads);
  const Stepper stepper = knobs ? planned_stepper(graph, *knobs, held, weights, args.threads)
                                : unfused_stepper(graph, weights, args.threads);
  spdlog::info("executor ready in {:.2f} s",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const GreedyResult result = run_steps(stepper, prompt, args);
  // The unfused executor reads matmul and embedding weights by rows from the
  // GGUF; the schedule executor dequantizes every weight on first use.
  spdlog::info("{} constants held as f32 ({:.1f} MiB)", weights.cached_tensors(),
               static_cast<double>(weights.cached_bytes()) / (1024.0 * 1024.0));
  print_result(prompt, result, tokenizer);
}

const RegisterCommand registration(40, "ref", [](CLI::App& root) {
  auto args = std::make_shared<RefArgs>();
  CLI::App* cmd =
      root.add_subcommand("ref", "Greedy decoding with the CPU reference executor (f32)");
  cmd->add_option("model", args->model, "GGUF model file")->required()->check(CLI::ExistingFile);
  cmd->add_option("-p,--prompt", args->prompt, "Prompt text (tokenized with the GGUF's vocabulary)");
  cmd->add_option("--tokens", args->tokens, "Prompt as token ids, e.g. \"1 2 3\"");
  cmd->add_option("-n,--n-predict", args->n_generate, "Tokens to generate")
      ->capture_default_str()
      ->transform(at_least<int64_t>(1));
  cmd->add_option("--logits", args->logits_file,
                  "Write the logits of every executed step to this .npy file (f32 [steps, n_vocab])");
  cmd->add_option("--graph", args->graph_file,
                  "Read the step graph from this text file (verified) instead of recognizing it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-ctx", args->max_ctx,
                  "KV cache rows (default: the positions this run needs)")
      ->transform(at_least<int64_t>(0));
  cmd->add_option("--knobs", args->knobs,
                  "Plan under this knob file and run the planned schedule on the CPU with its "
                  "numerics (int8 activations, cache precision) instead of the unfused graph in f32")
      ->check(CLI::ExistingFile);
  cmd->add_option("--hold", args->hold, "With --knobs: rules to hold back, comma-separated");
  cmd->add_option("-j,--threads", args->threads, "Threads (default: all cores)")
      ->transform(at_least<unsigned>(0));
  cmd->callback([args] { run_ref(*args); });
});

}  // namespace
}  // namespace lanec::app
