// glu_pair: gate and up GEMVs + SwiGLU -> one GEMV launch with the SwiGLU
// epilogue (math in rules/glu_pair.h).
#include "rules/glu_pair.h"

#include "lib/plan/schedule.h"

namespace lanec {
namespace {

using namespace rule_helpers;

class GluPairRule : public FusionRule {
 public:
  const char* name() const override { return "glu_pair"; }
  const char* intent() const override { return "a = silu(W_g x) * (W_u x) in one GEMV launch"; }

  // Pattern: a single swiglu whose gate and up come from plain GEMV nodes.
  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites;
    for (const FusedNode& n : g.nodes()) {
      std::optional<SwigluSources> glu = swiglu_sources(g, n);
      if (glu && is_plain_gemv(g, g.node(glu->gate)) && is_plain_gemv(g, g.node(glu->up)))
        sites.push_back({{glu->gate, glu->up, n.id}, {}});
    }
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext& context) const override {
    const Graph& gr = g.graph();
    if (site.nodes[0] == site.nodes[1]) return std::string("gate and up are already parts of one GEMV launch");
    const FusedNode& gate = g.node(site.nodes[0]);
    const FusedNode& up = g.node(site.nodes[1]);
    if (matmuls_of(g, gate).size() != 1 || matmuls_of(g, up).size() != 1)
      return std::string("gate or up is already a part of a multi-part GEMV");
    const Op& mg = *matmuls_of(g, gate).front();
    const Op& mu = *matmuls_of(g, up).front();
    if (mg.inputs[0] != mu.inputs[0])
      return "gate reads " + gr.tensor(mg.inputs[0]).name + " but up reads " + gr.tensor(mu.inputs[0]).name;
    const Tensor& wg = gr.tensor(mg.inputs[1]);
    const Tensor& wu = gr.tensor(mu.inputs[1]);
    if (wg.type != wu.type)
      return std::string("gate and up weights differ in format (") + elem_type_name(wg.type) + ", " +
             elem_type_name(wu.type) + ")";
    if (wg.shape != wu.shape) return "gate and up weights differ in shape";
    for (const FusedNode* n : {&gate, &up})
      for (size_t i : n->ops)
        if (g.op(i).kind == OpKind::add && gr.tensor(g.op(i).inputs[0]).role != Role::constant &&
            gr.tensor(g.op(i).inputs[1]).role != Role::constant)
          return "a residual epilogue on gate or up cannot precede the SwiGLU";
    const Op& glu = g.only_op(g.node(site.nodes[2]));
    for (int side = 0; side < 2; ++side) {
      TensorId t = glu.inputs[static_cast<size_t>(side)];
      std::string others = other_readers(g, t, site.nodes[2]);
      if (!others.empty() || g.is_graph_output(t))
        return std::string(side == 0 ? "the gate " : "the up ") + gr.tensor(t).name +
               " is also read by " + (others.empty() ? std::string("the graph outputs") : others);
    }
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    if (read_by_int8_gemv(g, glu.outputs[0], context.knobs))
      return std::string(
          "the SwiGLU output is quantized for an int8 GEMV: its quantize launch forms the SwiGLU, and "
          "gate and up stream one row a warp (measured faster)");
    return std::nullopt;
  }

  // Whether a GEMV with int8 activations reads t (it reads t's int8 form,
  // which a launch of its own makes).
  static bool read_by_int8_gemv(const FusedGraph& g, TensorId t, const Knobs& knobs) {
    for (int reader : g.readers(t))
      for (const Op* mm : matmuls_of(g, g.node(reader)))
        if (mm->inputs[0] == t &&
            gemv_numerics(g.graph().tensor(mm->inputs[1]).type, knobs.activations) != GemvNumerics::f32)
          return true;
    return false;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::gemv, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_glu_pair_rule() { return std::make_unique<GluPairRule>(); }

}  // namespace lanec
