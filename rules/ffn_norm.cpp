// ffn_norm: rms_norm + ffn launch -> one ffn launch (math in rules/ffn_norm.h).
#include "rules/ffn_norm.h"

#include "kernels/limits.h"

namespace lanec {
namespace {

using namespace rule_helpers;

// The residual add of an ffn node: the op adding the down product.
const Op* residual_add(const FusedGraph& g, const FusedNode& ffn) {
  for (size_t i : ffn.ops)
    if (g.op(i).kind == OpKind::add) return &g.op(i);
  return nullptr;
}

class FfnNormRule : public FusionRule {
 public:
  const char* name() const override { return "ffn_norm"; }
  const char* intent() const override { return "the ffn launch forms q(rms_norm(h) * w) itself, in every block"; }

  // Pattern: an ffn node whose gate/up input is written by a single
  // rms_norm node; nodes {norm, ffn}.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes()) {
      if (n.kind != NodeKind::ffn) continue;
      std::vector<const Op*> mm = matmuls_of(g, n);
      if (mm.empty()) continue;
      std::optional<int> maker = g.producer(mm.front()->inputs[0]);
      if (maker && single_op(g, g.node(*maker), OpKind::rms_norm)) sites.push_back({{*maker, n.id}, {}});
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    const Graph& gr = g.graph();
    const Op& norm = g.only_op(g.node(site.nodes[0]));
    const FusedNode& ffn = g.node(site.nodes[1]);
    const TensorId x = norm.outputs[0], h = norm.inputs[0];
    std::string others = other_readers(g, x, site.nodes[1]);
    if (!others.empty() || g.is_graph_output(x))
      return "the normed vector " + gr.tensor(x).name + " is also read by " +
             (others.empty() ? std::string("the graph outputs") : others);
    const Op* add = residual_add(g, ffn);
    if (add == nullptr || (add->inputs[0] != h && add->inputs[1] != h))
      return "the norm's input " + gr.tensor(h).name + " is not the FFN block's residual";
    std::optional<int> writer = g.producer(h);
    if (!writer || g.node(*writer).kind != NodeKind::gemv || !g.node(*writer).pack.empty())
      return "the residual " + gr.tensor(h).name +
             " is not written by a GEMV launch (its second store is the norm's input)";
    const int64_t n = gr.tensor(h).numel();
    if (n > kernels::kRmsNormMaxLength)
      return "the norm's length " + std::to_string(n) + " is past the kernel's " +
             std::to_string(kernels::kRmsNormMaxLength);
    if (gr.tensor(norm.inputs[1]).role != Role::constant)
      return "the norm weight " + gr.tensor(norm.inputs[1]).name + " is not a constant";
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override { g.merge(site.nodes, NodeKind::ffn, name()); }
};

}  // namespace

std::unique_ptr<FusionRule> make_ffn_norm_rule() { return std::make_unique<FfnNormRule>(); }

}  // namespace lanec
