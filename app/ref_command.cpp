// lanec ref MODEL (--tokens "ID ..." | -p TEXT) [-n N] [--logits FILE]: greedy
// decoding with the CPU reference executor (docs/reference.md). Prints the
// prompt and generated ids, and the generated text when the model has a
// vocabulary, on stdout; timing goes to the log (stderr).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <spdlog/spdlog.h>

#include "app/command.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/ref/executor.h"
#include "lib/ref/generate.h"
#include "lib/ref/npy.h"
#include "lib/ref/weights.h"
#include "lib/tokenizer/gguf_vocab.h"
#include "lib/tokenizer/tokenizer.h"

namespace lanec::app {
namespace {

struct RefArgs {
  std::string model;
  std::string prompt;
  std::string tokens;
  std::string graph_file;
  std::string logits_file;
  int64_t n_generate = 16;
  int64_t max_ctx = 0;
  unsigned threads = 0;
};

std::vector<int32_t> parse_token_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::string item;
  std::istringstream in(text);
  while (in >> item) {
    // Commas are accepted as separators too ("1,2,3" or "1, 2").
    std::istringstream parts(item);
    std::string part;
    while (std::getline(parts, part, ',')) {
      if (part.empty()) continue;
      size_t used = 0;
      long long value = 0;
      try {
        value = std::stoll(part, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != part.size() || value < 0 || value > INT32_MAX)
        throw Error("--tokens: expected non-negative token ids, got \"" + part + "\"");
      ids.push_back(static_cast<int32_t>(value));
    }
  }
  if (ids.empty()) throw Error("--tokens: expected at least one token id, got none");
  return ids;
}

std::string join_ids(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

void run_ref(const RefArgs& args) {
  if (args.prompt.empty() == args.tokens.empty())
    throw Error("ref: expected exactly one of -p TEXT or --tokens \"ID ...\"");
  if (args.n_generate < 1)
    throw Error("-n: expected at least 1 token to generate, got " + std::to_string(args.n_generate));

  GgufFile gguf = GgufFile::open(args.model);
  // The tokenizer is needed for -p; with --tokens it only renders the text,
  // and a model without a vocabulary prints ids alone.
  std::optional<Tokenizer> tokenizer;
  if (!args.prompt.empty() || gguf.has("tokenizer.ggml.model"))
    tokenizer.emplace(Tokenizer::from_vocab(load_vocab(gguf)));
  const std::vector<int32_t> prompt =
      args.prompt.empty() ? parse_token_ids(args.tokens) : tokenizer->encode(args.prompt);
  if (prompt.empty()) throw Error("-p: the prompt encodes to no tokens");
  // The cache needs only the positions this run executes, not the model's
  // whole context (40k+ rows of every layer's K and V).
  const int64_t positions = static_cast<int64_t>(prompt.size()) + args.n_generate - 1;
  RecognizeOptions options;
  options.max_ctx = args.max_ctx > 0 ? args.max_ctx : positions;
  const Graph graph = load_step_graph(gguf, args.graph_file, options);

  const auto t0 = std::chrono::steady_clock::now();
  WeightStore weights(gguf, args.threads);
  ReferenceOptions ref_options;
  ref_options.threads = args.threads;
  ReferenceExecutor executor(graph, weights, ref_options);
  const auto t1 = std::chrono::steady_clock::now();
  spdlog::info("loaded {} constants ({:.1f} MiB f32) in {:.2f} s", weights.cached_tensors(),
               static_cast<double>(weights.cached_bytes()) / (1024.0 * 1024.0),
               std::chrono::duration<double>(t1 - t0).count());

  std::optional<NpyF32Writer> npy;
  if (!args.logits_file.empty()) npy.emplace(args.logits_file, executor.n_vocab());
  int64_t max_positions = 0;
  if (auto n_ctx = graph.metadata().find("n_ctx"); n_ctx != graph.metadata().end())
    if (const int64_t* v = std::get_if<int64_t>(&n_ctx->second)) max_positions = *v;
  GreedyResult result = generate_greedy(
      executor, prompt, args.n_generate, max_positions,
      [&](int64_t, int32_t, const std::vector<float>& logits) {
        if (npy) npy->append_row(logits);
      });
  if (npy) npy->finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  spdlog::info("{} steps in {:.2f} s ({:.2f} steps/s)", result.steps, seconds,
               static_cast<double>(result.steps) / seconds);

  std::printf("prompt: %s\n", join_ids(prompt).c_str());
  std::printf("generated: %s\n", join_ids(result.generated).c_str());
  if (tokenizer) {
    const std::string text = tokenizer->decode(result.generated);
    std::printf("text: %s\n", text.c_str());
  }
}

const RegisterCommand registration(40, "ref", [](CLI::App& root) {
  auto args = std::make_shared<RefArgs>();
  CLI::App* cmd =
      root.add_subcommand("ref", "Greedy decoding with the CPU reference executor (f32)");
  cmd->add_option("model", args->model, "GGUF model file")->required()->check(CLI::ExistingFile);
  cmd->add_option("-p,--prompt", args->prompt, "Prompt text (tokenized with the GGUF's vocabulary)");
  cmd->add_option("--tokens", args->tokens, "Prompt as token ids, e.g. \"1 2 3\"");
  cmd->add_option("-n,--n-predict", args->n_generate, "Tokens to generate")->capture_default_str();
  cmd->add_option("--logits", args->logits_file,
                  "Write the logits of every executed step to this .npy file (f32 [steps, n_vocab])");
  cmd->add_option("--graph", args->graph_file,
                  "Read the step graph from this text file (verified) instead of recognizing it")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-ctx", args->max_ctx,
                  "KV cache rows (default: the positions this run needs)");
  cmd->add_option("-j,--threads", args->threads, "Threads (default: all cores)");
  cmd->callback([args] { run_ref(*args); });
});

}  // namespace
}  // namespace lanec::app
