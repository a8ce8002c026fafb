// Command line of an emitted program (plain C++17, no dependencies):
//   ./model MODEL.gguf [-p TEXT | --prompt-tokens "ID ..."] [-n N] [--temp T]
//           [--top-k K] [--top-p P] [--seed S] [--tokens] [--logits FILE]
//           [--ignore-eos] [--bench] [--profile] [--repeats R] [--quiet] [--help]
// parse_options never exits: it returns an error text the caller prints with
// the usage and exit code 2 (docs/emitted-program.md lists the flags).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace lanec::runtime {

struct ProgramOptions {
  std::string model_path;
  std::string prompt;                 // -p: text, tokenized with the GGUF's vocabulary
  bool has_prompt = false;
  std::vector<int32_t> prompt_tokens; // --prompt-tokens: ids given directly
  bool has_prompt_tokens = false;
  int n_predict = 128;                // -n: tokens to generate
  float temperature = 0.0f;           // --temp: 0 = greedy (device argmax)
  int top_k = 40;                     // --top-k: 0 = all tokens
  float top_p = 0.95f;                // --top-p: 1 = off
  uint64_t seed = 0;                  // --seed
  bool print_tokens = false;          // --tokens
  std::string logits_path;            // --logits FILE
  bool ignore_eos = false;            // --ignore-eos
  bool bench = false;                 // --bench
  bool profile = false;               // --profile: time each launch of one step
  int bench_repeats = 5;              // --repeats (--bench and --profile)
  bool quiet = false;                 // --quiet: no progress, no timings
  bool help = false;
};

inline const char* usage_text() {
  return "usage: MODEL_PROGRAM MODEL.gguf [options]\n"
         "  -p, --prompt TEXT        prompt text (tokenized with the GGUF's vocabulary)\n"
         "  --prompt-tokens \"ID ...\" prompt as token ids (instead of -p)\n"
         "  -n, --n-predict N        tokens to generate (default 128)\n"
         "  --temp T                 sampling temperature; 0 = greedy on the device (default 0)\n"
         "  --top-k K                sample among the K most likely tokens; 0 = all (default 40)\n"
         "  --top-p P                nucleus sampling threshold; 1 = off (default 0.95)\n"
         "  --seed S                 sampling seed (default 0)\n"
         "  --tokens                 print the prompt and generated token ids\n"
         "  --logits FILE            write every step's logits as .npy float32 [n_steps, n_vocab]\n"
         "  --ignore-eos             keep generating past the end-of-sequence token\n"
         "  --bench                  print prefill and decode speed (llama-bench style table)\n"
         "  --profile                time each launch of one step (after the prompt) and print them by\n"
         "                           time with the bytes each moves and GB/s, against the graph replay\n"
         "  --repeats R              timed repeats for --bench and --profile (default 5)\n"
         "  --quiet                  no progress or timing lines on stderr\n"
         "  -h, --help               this text\n";
}

namespace options_detail {

inline bool parse_int(const std::string& s, long long lo, long long hi, long long& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

inline bool parse_float(const std::string& s, float lo, float hi, float& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(s.c_str(), &end);
  if (errno != 0 || end == nullptr || *end != '\0' || !(v >= lo && v <= hi)) return false;
  out = v;
  return true;
}

}  // namespace options_detail

// Returns "" on success, else what is wrong (naming the flag and the value).
inline std::string parse_options(int argc, char** argv, ProgramOptions& o) {
  using namespace options_detail;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& v) -> std::string {
      if (i + 1 >= args.size()) return "flag " + a + " needs a value";
      v = args[++i];
      return "";
    };
    std::string v, err;
    long long n = 0;
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "-p" || a == "--prompt") {
      if (!(err = value(v)).empty()) return err;
      o.prompt = v;
      o.has_prompt = true;
    } else if (a == "--prompt-tokens") {
      if (!(err = value(v)).empty()) return err;
      o.has_prompt_tokens = true;
      size_t p = 0;
      while (p < v.size()) {
        const size_t start = v.find_first_not_of(" \t,", p);
        if (start == std::string::npos) break;
        const size_t end = v.find_first_of(" \t,", start);
        const std::string tok = v.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!parse_int(tok, 0, INT32_MAX, n)) return "--prompt-tokens: \"" + tok + "\" is not a token id (expected a non-negative integer)";
        o.prompt_tokens.push_back(static_cast<int32_t>(n));
        p = end == std::string::npos ? v.size() : end;
      }
    } else if (a == "-n" || a == "--n-predict") {
      if (!(err = value(v)).empty()) return err;
      if (!parse_int(v, 1, 1 << 24, n)) return a + ": expected a token count >= 1, got \"" + v + "\"";
      o.n_predict = static_cast<int>(n);
    } else if (a == "--temp") {
      if (!(err = value(v)).empty()) return err;
      if (!parse_float(v, 0.0f, 100.0f, o.temperature)) return "--temp: expected a number in [0, 100], got \"" + v + "\"";
    } else if (a == "--top-k") {
      if (!(err = value(v)).empty()) return err;
      if (!parse_int(v, 0, INT32_MAX, n)) return "--top-k: expected an integer >= 0, got \"" + v + "\"";
      o.top_k = static_cast<int>(n);
    } else if (a == "--top-p") {
      if (!(err = value(v)).empty()) return err;
      if (!parse_float(v, 0.0f, 1.0f, o.top_p) || o.top_p <= 0.0f) return "--top-p: expected a number in (0, 1], got \"" + v + "\"";
    } else if (a == "--seed") {
      if (!(err = value(v)).empty()) return err;
      if (!parse_int(v, 0, INT64_MAX, n)) return "--seed: expected an integer >= 0, got \"" + v + "\"";
      o.seed = static_cast<uint64_t>(n);
    } else if (a == "--tokens") {
      o.print_tokens = true;
    } else if (a == "--logits") {
      if (!(err = value(v)).empty()) return err;
      o.logits_path = v;
    } else if (a == "--ignore-eos") {
      o.ignore_eos = true;
    } else if (a == "--bench") {
      o.bench = true;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--repeats") {
      if (!(err = value(v)).empty()) return err;
      if (!parse_int(v, 1, 1000, n)) return "--repeats: expected an integer in [1, 1000], got \"" + v + "\"";
      o.bench_repeats = static_cast<int>(n);
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      return "unknown flag " + a;
    } else if (o.model_path.empty()) {
      o.model_path = a;
    } else {
      return "unexpected argument \"" + a + "\" (the model file is already " + o.model_path + ")";
    }
  }
  if (o.help) return "";
  if (o.model_path.empty()) return "no model file given (the GGUF this program was planned for)";
  if (o.has_prompt && o.has_prompt_tokens) return "give either -p or --prompt-tokens, not both";
  if (o.has_prompt_tokens && o.prompt_tokens.empty()) return "--prompt-tokens: no token ids given";
  return "";
}

}  // namespace lanec::runtime
