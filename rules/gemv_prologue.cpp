// gemv_prologue: rms_norm and quantize launches folded into the GEMV that
// reads their output (math and guards in rules/gemv_prologue.h).
#include "rules/gemv_prologue.h"

#include <algorithm>
#include <optional>
#include <set>

#include "rules/registry.h"

namespace lanec {
namespace {

constexpr const char* kRule = "gemv_prologue";
constexpr int64_t kQ8Block = 32;
constexpr int64_t kStaticSmemBytes = 1024;  // the kernel's own partial sums and scratch

class GemvPrologueRule : public FusionRule {
 public:
  const char* name() const override { return kRule; }
  const char* intent() const override {
    return "a GEMV forms its input (residual add, RMS norm, int8 quantization) in every block";
  }
  RuleStage stage() const override { return RuleStage::launches; }
  // A launch-stage rule: the planner calls apply_gemv_prologue at the size stage.
  std::vector<RuleMatch> match(const FusedGraph&) const override { return {}; }
  std::optional<std::string> guard(const FusedGraph&, const RuleMatch&, const RuleContext&) const override {
    return std::nullopt;
  }
  void rewrite(FusedGraph&, const RuleMatch&) const override {}
};

class Absorber {
 public:
  Absorber(std::vector<Launch>& launches, const GemvPrologueContext& context, RuleTally& tally)
      : launches_(launches), context_(context), tally_(tally) {}

  void run() {
    for (size_t j = 0; j < launches_.size(); ++j) {
      if (!std::holds_alternative<GemvLaunch>(launches_[j].params)) continue;
      j = absorb_quantize(j);
      j = absorb_norm(j);
      GemvLaunch& g = std::get<GemvLaunch>(launches_[j].params);
      if (g.prologue) g.grid_sms = context_.sms;
    }
  }

 private:
  GemvLaunch& gemv(size_t j) { return std::get<GemvLaunch>(launches_[j].params); }

  // The GEMV's input as a producer would write it: its int8 form, else x.
  static const std::string& input_of(const GemvLaunch& g) { return g.x_q8.empty() ? g.x : g.x_q8; }

  // The last launch before `j` that writes `name` (by storage).
  std::optional<size_t> producer(size_t j, const std::string& name) const {
    const std::string root = context_.storage_of(name);
    for (size_t i = j; i-- > 0;)
      for (const std::string& w : launches_[i].writes())
        if (context_.storage_of(w) == root) return i;
    return std::nullopt;
  }

  // Launches other than `except` (indices) that read `name` (by storage).
  int readers(const std::string& name, const std::set<size_t>& except) const {
    const std::string root = context_.storage_of(name);
    int n = 0;
    for (size_t m = 0; m < launches_.size(); ++m) {
      if (except.count(m)) continue;
      for (const std::string& r : launches_[m].reads())
        if (context_.storage_of(r) == root) {
          ++n;
          break;
        }
    }
    return n;
  }

  std::set<std::string> roots(const std::vector<std::string>& names) const {
    std::set<std::string> out;
    for (const std::string& n : names) out.insert(context_.storage_of(n));
    return out;
  }

  // Why the producer at i cannot move into the GEMV at j, or nullopt.
  std::optional<std::string> blocker(size_t i, size_t j) const {
    const Launch& p = launches_[i];
    const std::set<std::string> reads = roots(p.reads()), writes = roots(p.writes());
    const std::string& input = input_of(std::get<GemvLaunch>(launches_[j].params));
    for (const std::string& w : p.writes()) {
      const bool own_input = context_.storage_of(w) == context_.storage_of(input);
      if (context_.is_graph_output(w)) return "its output " + w + " is a graph output";
      // h (the new residual stream) moves with the producer; its other outputs must have no other reader.
      const auto* norm = std::get_if<RmsNormLaunch>(&p.params);
      if (norm != nullptr && w == norm->h_out) continue;
      const int n = readers(w, {i, j});
      if (n > 0) return (own_input ? "the input " : "its output ") + w + " is also read by " + std::to_string(n) + " launch" + (n > 1 ? "es" : "");
    }
    for (size_t m = i + 1; m < j; ++m) {
      for (const std::string& w : launches_[m].writes())
        if (reads.count(context_.storage_of(w)) || writes.count(context_.storage_of(w)))
          return "launch " + launches_[m].name + " between them writes " + w;
      for (const std::string& r : launches_[m].reads())
        if (writes.count(context_.storage_of(r))) return "launch " + launches_[m].name + " between them reads " + r;
    }
    return std::nullopt;
  }

  std::optional<std::string> fits(const GemvLaunch& g) const {
    if (g.k % kQ8Block != 0) return "k = " + std::to_string(g.k) + " is not a multiple of 32";
    const int64_t bytes = gemv_prologue_smem_bytes(g.k, g.numerics) + kStaticSmemBytes;
    if (bytes > context_.smem_bytes_per_block)
      return "the formed input needs " + std::to_string(bytes) + " bytes of shared memory, a block has " +
             std::to_string(context_.smem_bytes_per_block);
    return std::nullopt;
  }

  // Moves launch i into the GEMV at j (i < j); returns the GEMV's new index.
  size_t merge(size_t i, size_t j) {
    Launch& g = launches_[j];
    const Launch& p = launches_[i];
    std::vector<size_t> ops = g.ops;
    ops.insert(ops.end(), p.ops.begin(), p.ops.end());
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    g.ops = ops;
    std::vector<std::string> rules = g.rules;
    rules.insert(rules.end(), p.rules.begin(), p.rules.end());
    rules.push_back(kRule);
    g.rules.clear();
    for (const std::string& r : rule_names())
      if (std::find(rules.begin(), rules.end(), r) != rules.end()) g.rules.push_back(r);
    tally_.fired(kRule, p.name + " -> " + g.name, ops);
    launches_.erase(launches_.begin() + static_cast<std::ptrdiff_t>(i));
    return j - 1;
  }

  std::optional<size_t> site(size_t j, const std::string& input) {
    if (input.empty()) return std::nullopt;
    return producer(j, input);
  }

  size_t absorb_quantize(size_t j) {
    GemvLaunch& g = gemv(j);
    if (g.prologue || g.x_q8.empty()) return j;
    std::optional<size_t> i = site(j, g.x_q8);
    if (!i) return j;
    const auto* q = std::get_if<QuantizeLaunch>(&launches_[*i].params);
    if (q == nullptr || q->out_q8 != g.x_q8) return j;
    if (auto why = blocker(*i, j); why) return decline(*i, j, *why);
    if (auto why = fits(g); why) return decline(*i, j, *why);
    g.x = q->x;
    g.x_q8.clear();
    g.prologue = true;
    return merge(*i, j);
  }

  size_t absorb_norm(size_t j) {
    GemvLaunch& g = gemv(j);
    const std::string input = input_of(g);
    std::optional<size_t> i = site(j, input);
    if (!i) return j;
    const auto* r = std::get_if<RmsNormLaunch>(&launches_[*i].params);
    if (r == nullptr || (r->out != input && r->out_q8 != input)) return j;
    if (!g.norm_weight.empty()) return j;
    if (auto why = blocker(*i, j); why) return decline(*i, j, *why);
    if (auto why = fits(g); why) return decline(*i, j, *why);
    if (!r->residual.empty()) {
      const std::string h = context_.storage_of(r->h_out);
      if (h == context_.storage_of(r->x) || h == context_.storage_of(r->residual))
        return decline(*i, j, "the sum " + r->h_out + " overwrites a vector it is formed from");
    }
    g.x = r->x;
    g.x_q8.clear();
    g.x_residual = r->residual;
    g.h_out = r->h_out;
    g.norm_weight = r->weight;
    g.eps = r->eps;
    g.prologue = true;
    return merge(*i, j);
  }

  size_t decline(size_t i, size_t j, const std::string& why) {
    tally_.declined(kRule, launches_[i].name + " -> " + launches_[j].name, why);
    return j;
  }

  std::vector<Launch>& launches_;
  const GemvPrologueContext& context_;
  RuleTally& tally_;
};

}  // namespace

int64_t gemv_prologue_smem_bytes(int64_t k, GemvNumerics numerics) {
  if (numerics == GemvNumerics::f32) return 4 * k;
  return 4 * k + k * (numerics == GemvNumerics::int8x2 ? 2 : 1) + k / kQ8Block * 4;
}

void apply_gemv_prologue(std::vector<Launch>& launches, const GemvPrologueContext& context, RuleTally& tally) {
  Absorber(launches, context, tally).run();
}

std::unique_ptr<FusionRule> make_gemv_prologue_rule() { return std::make_unique<GemvPrologueRule>(); }

}  // namespace lanec
