// norm_prologue: RMS norm -> staged prologue of the GEMV that reads it
// (math in rules/norm_prologue.h).
#include "rules/norm_prologue.h"

#include <algorithm>

#include "kernels/limits.h"

namespace lanec {
namespace {

using namespace rule_helpers;

// The GEMV node reading the norm's output, when it is the only reader.
std::optional<int> only_gemv_reader(const FusedGraph& g, TensorId normed) {
  const std::vector<int> readers = g.readers(normed);
  if (readers.size() != 1) return std::nullopt;
  const FusedNode& n = g.node(readers.front());
  if (n.kind != NodeKind::gemv && !single_op(g, n, OpKind::matmul)) return std::nullopt;
  return readers.front();
}

class NormPrologueRule : public FusionRule {
 public:
  const char* name() const override { return "norm_prologue"; }
  const char* intent() const override { return "y = rms_norm(x) * w computed by each block of the GEMV reading y"; }

  // Pattern: a single rms_norm whose output some GEMV node reads.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes()) {
      const Op* norm = single_op(g, n, OpKind::rms_norm);
      if (!norm) continue;
      for (int r : g.readers(norm->outputs[0])) {
        const FusedNode& reader = g.node(r);
        if (reader.kind == NodeKind::gemv || single_op(g, reader, OpKind::matmul)) {
          sites.push_back({{n.id, r}, {}});
          break;
        }
      }
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext& context) const override {
    const Op& norm = g.only_op(g.node(site.nodes[0]));
    const TensorId y = norm.outputs[0];
    const Tensor& yt = g.graph().tensor(y);
    if (g.is_graph_output(y)) return "the normed " + yt.name + " is a graph output";
    if (!only_gemv_reader(g, y))
      return "the normed " + yt.name + " is also read by " + other_readers(g, y, site.nodes[1]);
    for (const Op* mm : matmuls_of(g, g.node(site.nodes[1])))
      if (mm->inputs[0] != y)
        return "the GEMV launch also multiplies " + g.graph().tensor(mm->inputs[0]).name + ", not only " + yt.name;
    const Op& mm = *matmuls_of(g, g.node(site.nodes[1])).front();
    if (auto reason = norm_stage_declines(g, y, g.graph().tensor(mm.inputs[1]).type, context.knobs)) return reason;
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::gemv, name());
  }
};

}  // namespace

std::optional<std::string> norm_stage_declines(const FusedGraph& g, TensorId normed, GgmlType weight,
                                               const Knobs& knobs) {
  const Tensor& yt = g.graph().tensor(normed);
  const int64_t k = yt.numel();
  if (k % 32 != 0)
    return "the staged input is read in blocks of 32 elements, " + yt.name + " has " + std::to_string(k);
  const bool int8 = weight == GgmlType::Q8_0 && knobs.activations != ActivationNumerics::dequant;
  const bool two_words = knobs.activations == ActivationNumerics::two_pass_int8;
  const long long bytes = kernels::gemv_stage_bytes(int8, two_words, k);
  if (bytes > kernels::kGemvMaxStageBytes)
    return "the staged " + yt.name + " takes " + std::to_string(bytes) + " bytes of shared memory, more than the " +
           std::to_string(kernels::kGemvMaxStageBytes) + " a GEMV block stages";
  return std::nullopt;
}

bool norm_feeds_only_gemvs(const FusedGraph& g, TensorId normed, const Knobs& knobs) {
  if (g.is_graph_output(normed)) return false;
  const std::vector<int> readers = g.readers(normed);
  if (readers.empty()) return false;
  for (int r : readers) {
    for (size_t i : g.node(r).ops) {
      const Op& op = g.op(i);
      const bool reads = std::find(op.inputs.begin(), op.inputs.end(), normed) != op.inputs.end();
      if (!reads) continue;
      if (op.kind != OpKind::matmul || op.inputs[0] != normed) return false;
      if (norm_stage_declines(g, normed, g.graph().tensor(op.inputs[1]).type, knobs)) return false;
    }
  }
  return true;
}

std::unique_ptr<FusionRule> make_norm_prologue_rule() { return std::make_unique<NormPrologueRule>(); }

}  // namespace lanec
