// A fusion rule: a named, self-contained rewrite of the fused graph.
//
// Every rule has a stable snake_case name (the census and --hold use it), a
// pattern (match: the candidate sites in the current fused graph), a guard
// (why a matched site is declined, or nullopt to fire) and a rewrite (merge
// the site's nodes). Rules whose architecture has not landed yet keep their
// place in the registry with their intent written down; their guard always
// answers "waiting for architecture X" and they never fire.
//
// Two rules act on launches rather than on the graph (rows_a_warp picks a
// GEMV parameter at the size stage, sequences merges per-sequence launches);
// they have stage() == RuleStage::launches and are driven by the planner.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/knobs/knobs.h"
#include "lib/plan/fused_graph.h"

namespace lanec {

enum class RuleStage : uint8_t { graph, launches };

// One candidate site: the nodes (by stable id) a rewrite would merge, plus
// rule-specific integers (e.g. which operand is the bias).
struct RuleMatch {
  std::vector<int> nodes;
  std::vector<int64_t> extra;
};

struct RuleContext {
  const Knobs& knobs;
};

class FusionRule {
 public:
  virtual ~FusionRule() = default;
  virtual const char* name() const = 0;
  // One line: what the fused launch computes.
  virtual const char* intent() const = 0;
  // The architecture this rule waits for, or nullptr when it is implemented.
  virtual const char* waiting_for() const { return nullptr; }
  virtual RuleStage stage() const { return RuleStage::graph; }

  // Pattern: candidate sites, in graph order.
  virtual std::vector<RuleMatch> match(const FusedGraph& graph) const = 0;
  // Guard: the reason the site is declined, or nullopt to fire.
  virtual std::optional<std::string> guard(const FusedGraph& graph, const RuleMatch& site,
                                           const RuleContext& context) const = 0;
  // Rewrite: merges the site (called only when guard returned nullopt).
  virtual void rewrite(FusedGraph& graph, const RuleMatch& site) const = 0;
};

// "waiting for architecture qwen3next" (or "waiting for batched decode" for
// what is not an architecture): the decline reason and census status of a
// rule whose waiting_for() is `what`.
inline std::string waiting_reason(const char* what) {
  std::string w = what;
  bool architecture = w.find(' ') == std::string::npos;
  return "waiting for " + (architecture ? "architecture " + w : w);
}

// A registered rule whose architecture has not landed: it never matches.
class WaitingRule : public FusionRule {
 public:
  WaitingRule(const char* rule_name, const char* rule_intent, const char* architecture)
      : name_(rule_name), intent_(rule_intent), arch_(architecture) {}
  const char* name() const override { return name_; }
  const char* intent() const override { return intent_; }
  const char* waiting_for() const override { return arch_; }
  std::vector<RuleMatch> match(const FusedGraph&) const override { return {}; }
  std::optional<std::string> guard(const FusedGraph&, const RuleMatch&,
                                   const RuleContext&) const override {
    return waiting_reason(arch_);
  }
  void rewrite(FusedGraph&, const RuleMatch&) const override {}

 private:
  const char* name_;
  const char* intent_;
  const char* arch_;
};

// A rule of the launch stage: it matches nothing in the graph; the planner
// asks its choose_* function per launch and records what it decided.
class LaunchStageRule : public FusionRule {
 public:
  LaunchStageRule(const char* rule_name, const char* rule_intent) : name_(rule_name), intent_(rule_intent) {}
  const char* name() const override { return name_; }
  const char* intent() const override { return intent_; }
  RuleStage stage() const override { return RuleStage::launches; }
  std::vector<RuleMatch> match(const FusedGraph&) const override { return {}; }
  std::optional<std::string> guard(const FusedGraph&, const RuleMatch&,
                                   const RuleContext&) const override {
    return std::nullopt;
  }
  void rewrite(FusedGraph&, const RuleMatch&) const override {}

 private:
  const char* name_;
  const char* intent_;
};

// Helpers shared by the graph rules (rules/rule_helpers.cpp).
namespace rule_helpers {
// The single op of a node of kind single with op kind `kind`, or nullptr.
const Op* single_op(const FusedGraph& g, const FusedNode& n, OpKind kind);
// True when node n is a gemv-capable node: a single matmul or a gemv node
// without a SwiGLU.
bool is_plain_gemv(const FusedGraph& g, const FusedNode& n);
// A single swiglu node's op and the nodes making its gate and up inputs
// (nullopt for another node, or an input no node makes).
struct SwigluSources {
  const Op* glu;
  int gate;
  int up;
};
std::optional<SwigluSources> swiglu_sources(const FusedGraph& g, const FusedNode& n);
// The matmul ops of a node, in op order.
std::vector<const Op*> matmuls_of(const FusedGraph& g, const FusedNode& n);
// "reader #12 add attn_res_l00" list of the readers other than `except`.
std::string other_readers(const FusedGraph& g, TensorId t, int except);
// The tensor a node's GEMV parts deliver for matmul `mm` (the matmul output,
// or the add that folded a bias/residual into it).
TensorId gemv_part_result(const FusedGraph& g, const FusedNode& n, const Op& mm);
// Two-node chains (add_norm, embed_norm, head_norm_rope): a single op of
// kind `consumer` whose first input is written by a single op of kind
// `producer`; nodes {producer, consumer}.
std::vector<RuleMatch> chain_sites(const FusedGraph& g, OpKind producer, OpKind consumer);
// GEMV epilogue sites (gemv_bias, gemv_norm_epilogue): a single add one of
// whose operands (extra[0] = 0 or 1) is a matmul output of a plain GEMV node
// and whose other operand is a constant (`constant`) or not.
std::vector<RuleMatch> epilogue_sites(const FusedGraph& g, bool constant);
// Their shared guard; `what` names the other operand ("bias", "residual").
std::optional<std::string> epilogue_guard(const FusedGraph& g, const RuleMatch& site,
                                          const char* what);
// The kv_write op that writes the cache state `cache`, or nullptr.
const Op* cache_writer(const FusedGraph& g, TensorId cache);
// The attention ops that each sit alone in a node, in node order.
std::vector<const Op*> lone_attentions(const FusedGraph& g);
}  // namespace rule_helpers

}  // namespace lanec
