// ffn_fused: gate/up GEMV + SwiGLU + down GEMV with its residual -> one
// launch (math in rules/ffn_fused.h).
#include "rules/ffn_fused.h"

#include <cmath>

namespace lanec {
namespace {

using namespace rule_helpers;

// The ops of one site: the gate and up matmuls, the swiglu, the down
// matmul and its residual add.
struct FfnSite {
  const Op* gate = nullptr;
  const Op* up = nullptr;
  const Op* glu = nullptr;
  const Op* down = nullptr;
  const Op* add = nullptr;
};

// The add of a node that takes the matmul's output, or nullptr.
const Op* add_after(const FusedGraph& g, const FusedNode& n, const Op& mm) {
  for (size_t i : n.ops) {
    const Op& op = g.op(i);
    if (op.kind == OpKind::add && (op.inputs[0] == mm.outputs[0] || op.inputs[1] == mm.outputs[0])) return &op;
  }
  return nullptr;
}

// The site's ops when the nodes have the expected shape, else nullopt:
// nodes = {gate/up GEMV, swiglu, down GEMV}.
std::optional<FfnSite> site_ops(const FusedGraph& g, const RuleMatch& site) {
  const FusedNode& pair = g.node(site.nodes[0]);
  const FusedNode& down = g.node(site.nodes[2]);
  FfnSite s;
  s.glu = &g.only_op(g.node(site.nodes[1]));
  std::vector<const Op*> pair_mm = matmuls_of(g, pair);
  std::vector<const Op*> down_mm = matmuls_of(g, down);
  if (pair.kind != NodeKind::gemv || pair_mm.size() != 2 || pair.ops.size() != 2) return std::nullopt;
  if (down.kind != NodeKind::gemv || down_mm.size() != 1 || down.ops.size() != 2) return std::nullopt;
  s.gate = pair_mm[0]->outputs[0] == s.glu->inputs[0] ? pair_mm[0] : pair_mm[1];
  s.up = s.gate == pair_mm[0] ? pair_mm[1] : pair_mm[0];
  if (s.gate->outputs[0] != s.glu->inputs[0] || s.up->outputs[0] != s.glu->inputs[1]) return std::nullopt;
  s.down = down_mm[0];
  s.add = add_after(g, down, *s.down);
  if (s.add == nullptr || s.down->inputs[0] != s.glu->outputs[0]) return std::nullopt;
  return s;
}

class FfnFusedRule : public FusionRule {
 public:
  const char* name() const override { return "ffn_fused"; }
  const char* intent() const override { return "y = r + W_d q(silu(W_g x) * (W_u x)) in one launch"; }

  // Pattern: a single swiglu between a two-part GEMV (gate, up) and a GEMV
  // that reads it.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes()) {
      std::optional<SwigluSources> glu = swiglu_sources(g, n);
      if (!glu || glu->gate != glu->up) continue;
      std::vector<int> readers = g.readers(glu->glu->outputs[0]);
      if (readers.size() == 1) sites.push_back({{glu->gate, n.id, readers.front()}, {}});
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext& context) const override {
    const Graph& gr = g.graph();
    if (context.knobs.activations != ActivationNumerics::two_pass_int8)
      return std::string("the fused FFN kernel takes two-word int8 activations (activations: two-pass-int8), "
                         "these knobs ask for ") + knob_name(context.knobs.activations);
    std::optional<FfnSite> s = site_ops(g, site);
    if (!s)
      return std::string("the gate/up GEMV or the down GEMV has other parts or epilogues than a residual add");
    for (const Op* mm : {s->gate, s->up, s->down}) {
      const Tensor& w = gr.tensor(mm->inputs[1]);
      if (w.type != GgmlType::Q8_0)
        return "the fused FFN kernel takes q8_0 weights, " + w.name + " is " + elem_type_name(w.type);
    }
    const Tensor& wg = gr.tensor(s->gate->inputs[1]);
    const Tensor& wd = gr.tensor(s->down->inputs[1]);
    const int64_t hidden = wg.cols(), ffn = wg.numel() / wg.cols();
    if (gr.tensor(s->up->inputs[1]).shape != wg.shape) return std::string("gate and up weights differ in shape");
    if (wd.cols() != ffn || wd.numel() / wd.cols() != hidden)
      return "the down weight " + wd.name + " is not [hidden, ffn] of the gate's [ffn, hidden]";
    if (hidden % 32 != 0 || ffn % 32 != 0)
      return "the hidden (" + std::to_string(hidden) + ") and intermediate (" + std::to_string(ffn) +
             ") lengths must be multiples of 32";
    const int64_t blocks = ffn / 32;
    const double min_blocks = std::ceil(kFfnFusedMinBlocksPerSm * context.knobs.chip.sms);
    if (static_cast<double>(blocks) < min_blocks)
      return std::to_string(blocks) + " intermediate blocks of 32 for " + std::to_string(context.knobs.chip.sms) +
             " SMs: the fused launch was measured where they fill at least half the chip";
    for (TensorId t : {s->glu->inputs[0], s->glu->inputs[1], s->glu->outputs[0]}) {
      std::string others = other_readers(g, t, t == s->glu->outputs[0] ? site.nodes[2] : site.nodes[1]);
      if (!others.empty() || g.is_graph_output(t))
        return gr.tensor(t).name + " is also read by " + (others.empty() ? std::string("the graph outputs") : others);
    }
    if (auto why = residual_blocker(g, site, *s)) return why;
    if (!g.node(site.nodes[2]).pack.empty()) return std::string("the down GEMV's output is planned into a pack");
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  // The residual is overwritten in place: no later node may read it, and
  // it must be an activation of the step.
  static std::optional<std::string> residual_blocker(const FusedGraph& g, const RuleMatch& site, const FfnSite& s) {
    const Graph& gr = g.graph();
    const TensorId r = s.add->inputs[0] == s.down->outputs[0] ? s.add->inputs[1] : s.add->inputs[0];
    const Tensor& residual = gr.tensor(r);
    if (residual.role != Role::activation)
      return "the residual " + residual.name + " is not an activation of the step (it is overwritten in place)";
    if (g.is_graph_output(r))
      return "the residual " + residual.name + " is a graph output (it is overwritten in place)";
    const size_t here = *g.position(site.nodes[2]);
    for (int reader : g.readers(r))
      if (reader != site.nodes[2] && *g.position(reader) > here)
        return "the residual " + residual.name + " is read after the FFN by " + g.describe(reader) +
               " (it is overwritten in place)";
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override { g.merge(site.nodes, NodeKind::ffn, name()); }
};

}  // namespace

std::unique_ptr<FusionRule> make_ffn_fused_rule() { return std::make_unique<FfnFusedRule>(); }

}  // namespace lanec
