// gemv_norm_epilogue: matmul + residual add (+ the RMS norm of the sum) ->
// one GEMV launch (math and sites in rules/gemv_norm_epilogue.h).
#include "rules/gemv_norm_epilogue.h"

namespace lanec {
namespace {

using namespace rule_helpers;

// extra[0] of each site says which pattern matched.
enum Site : int64_t { residual_add = 0, absorb_add_norm = 1, absorb_norm = 2 };

// The one matmul of a GEMV node, or nullptr (several parts, SwiGLU, a norm).
const Op* single_matmul(const FusedGraph& g, const FusedNode& n) {
  if (!is_plain_gemv(g, n)) return nullptr;
  std::vector<const Op*> mms = matmuls_of(g, n);
  return mms.size() == 1 ? mms.front() : nullptr;
}

// The residual add inside a GEMV node (its product plus a non-constant), or nullptr.
const Op* residual_add_of(const FusedGraph& g, const FusedNode& n, const Op& mm) {
  for (size_t i : n.ops) {
    const Op& op = g.op(i);
    if (op.kind != OpKind::add) continue;
    const bool takes_product = op.inputs[0] == mm.outputs[0] || op.inputs[1] == mm.outputs[0];
    const TensorId other = op.inputs[0] == mm.outputs[0] ? op.inputs[1] : op.inputs[0];
    if (takes_product && g.graph().tensor(other).role != Role::constant) return &op;
  }
  return nullptr;
}

// GEMV node -> add_norm node whose add reads the GEMV's product.
void add_norm_sites(const FusedGraph& g, std::vector<RuleMatch>& sites) {
  for (const FusedNode& n : g.nodes()) {
    if (n.kind != NodeKind::add_norm) continue;
    const Op& add = g.op(n.ops.front());
    for (TensorId in : add.inputs) {
      std::optional<int> p = g.producer(in);
      if (!p) continue;
      const Op* mm = single_matmul(g, g.node(*p));
      if (mm && mm->outputs[0] == in && !residual_add_of(g, g.node(*p), *mm)) {
        sites.push_back({{*p, n.id}, {absorb_add_norm}});
        break;
      }
    }
  }
}

// GEMV node with its residual add -> the rms_norm of that sum.
void norm_sites(const FusedGraph& g, std::vector<RuleMatch>& sites) {
  for (const FusedNode& n : g.nodes()) {
    const Op* norm = single_op(g, n, OpKind::rms_norm);
    if (!norm) continue;
    std::optional<int> p = g.producer(norm->inputs[0]);
    if (!p) continue;
    const Op* mm = single_matmul(g, g.node(*p));
    const Op* add = mm ? residual_add_of(g, g.node(*p), *mm) : nullptr;
    if (add && add->outputs[0] == norm->inputs[0]) sites.push_back({{*p, n.id}, {absorb_norm}});
  }
}

// The residual stream h the norm reads must fit the launch's norm tail.
std::optional<std::string> tail_guard(const Tensor& h) {
  if (h.numel() % 32 != 0 || h.numel() > kGemvNormTailMaxElements)
    return "the norm tail keeps " + h.name + " in one block's shared memory: it takes a multiple of 32 up to " +
           std::to_string(kGemvNormTailMaxElements) + " elements, got " + std::to_string(h.numel());
  return std::nullopt;
}

class GemvNormEpilogueRule : public FusionRule {
 public:
  const char* name() const override { return "gemv_norm_epilogue"; }
  const char* intent() const override {
    return "h = W x + r (residual) in the GEMV epilogue, and y = rms_norm(h) * w by its last block";
  }

  std::vector<RuleMatch> match(const FusedGraph& g) const override {
    std::vector<RuleMatch> sites = epilogue_sites(g, false);
    for (RuleMatch& s : sites) s.extra.push_back(residual_add);  // extra = {side, pattern}
    std::vector<RuleMatch> more;
    add_norm_sites(g, more);
    norm_sites(g, more);
    for (RuleMatch& s : more) s.extra.insert(s.extra.begin(), 0);
    sites.insert(sites.end(), more.begin(), more.end());
    return sites;
  }

  std::optional<std::string> guard(const FusedGraph& g, const RuleMatch& site,
                                   const RuleContext&) const override {
    switch (site.extra[1]) {
      case residual_add:
        return epilogue_guard(g, site, "residual");
      case absorb_add_norm: {
        const Op& add = g.op(g.node(site.nodes[1]).ops.front());
        const TensorId product = g.producer(add.inputs[0]) == site.nodes[0] ? add.inputs[0] : add.inputs[1];
        std::string others = other_readers(g, product, site.nodes[1]);
        if (!others.empty() || g.is_graph_output(product))
          return "the product " + g.graph().tensor(product).name + " is also read by " +
                 (others.empty() ? std::string("the graph outputs") : others);
        if (auto t = tail_guard(g.graph().tensor(add.outputs[0]))) return t;
        break;
      }
      default:
        if (auto t = tail_guard(g.graph().tensor(g.only_op(g.node(site.nodes[1])).inputs[0]))) return t;
        break;
    }
    if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
    return std::nullopt;
  }

  void rewrite(FusedGraph& g, const RuleMatch& site) const override {
    g.merge(site.nodes, NodeKind::gemv, name());
  }
};

}  // namespace

std::unique_ptr<FusionRule> make_gemv_norm_epilogue_rule() {
  return std::make_unique<GemvNormEpilogueRule>();
}

}  // namespace lanec
