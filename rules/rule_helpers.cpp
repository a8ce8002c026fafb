// Helpers shared by the graph rules (declared in rules/rule.h).
#include <algorithm>

#include "rules/rule.h"

namespace lanec::rule_helpers {

const Op* single_op(const FusedGraph& g, const FusedNode& n, OpKind kind) {
  if (n.kind != NodeKind::single) return nullptr;
  const Op& op = g.only_op(n);
  return op.kind == kind ? &op : nullptr;
}

std::optional<SwigluSources> swiglu_sources(const FusedGraph& g, const FusedNode& n) {
  const Op* glu = single_op(g, n, OpKind::swiglu);
  if (!glu) return std::nullopt;
  std::optional<int> gate = g.producer(glu->inputs[0]);
  std::optional<int> up = g.producer(glu->inputs[1]);
  if (!gate || !up) return std::nullopt;
  return SwigluSources{glu, *gate, *up};
}

std::vector<const Op*> matmuls_of(const FusedGraph& g, const FusedNode& n) {
  std::vector<const Op*> out;
  for (size_t i : n.ops)
    if (g.op(i).kind == OpKind::matmul) out.push_back(&g.op(i));
  return out;
}

bool is_plain_gemv(const FusedGraph& g, const FusedNode& n) {
  if (single_op(g, n, OpKind::matmul)) return true;
  if (n.kind != NodeKind::gemv) return false;
  for (size_t i : n.ops)
    if (g.op(i).kind == OpKind::swiglu) return false;
  return true;
}

std::string other_readers(const FusedGraph& g, TensorId t, int except) {
  std::string out;
  for (int id : g.readers(t)) {
    if (id == except) continue;
    // Name the op that reads t, not the node's last op.
    for (size_t i : g.node(id).ops) {
      const Op& op = g.op(i);
      if (std::find(op.inputs.begin(), op.inputs.end(), t) == op.inputs.end()) continue;
      std::string what = "#" + std::to_string(i) + " " + op_kind_name(op.kind);
      if (!op.outputs.empty()) what += " " + g.graph().tensor(op.outputs.front()).name;
      out += (out.empty() ? "" : ", ") + what;
      break;
    }
  }
  return out;
}

TensorId gemv_part_result(const FusedGraph& g, const FusedNode& n, const Op& mm) {
  TensorId y = mm.outputs.front();
  for (size_t i : n.ops) {
    const Op& op = g.op(i);
    if (op.kind == OpKind::add && (op.inputs[0] == y || op.inputs[1] == y)) return op.outputs.front();
  }
  return y;
}

std::vector<RuleMatch> chain_sites(const FusedGraph& g, OpKind producer, OpKind consumer) {
  std::vector<RuleMatch> sites;
  for (const FusedNode& n : g.nodes()) {
    const Op* op = single_op(g, n, consumer);
    if (!op) continue;
    std::optional<int> p = g.producer(op->inputs[0]);
    if (p && single_op(g, g.node(*p), producer)) sites.push_back({{*p, n.id}, {}});
  }
  return sites;
}

// Shared by gemv_bias and gemv_norm_epilogue: an add whose operand
// extra[0] is a part of a plain GEMV node; `constant` selects the other
// operand's role (bias: a constant; residual: anything else).
std::vector<RuleMatch> epilogue_sites(const FusedGraph& g, bool constant) {
  std::vector<RuleMatch> sites;
  for (const FusedNode& n : g.nodes()) {
    const Op* add = single_op(g, n, OpKind::add);
    if (!add) continue;
    for (int side = 0; side < 2; ++side) {
      std::optional<int> p = g.producer(add->inputs[static_cast<size_t>(side)]);
      if (!p || !is_plain_gemv(g, g.node(*p))) continue;
      const Tensor& other = g.graph().tensor(add->inputs[static_cast<size_t>(1 - side)]);
      if ((other.role == Role::constant) != constant) continue;
      // The product must be a matmul output of that node (not an epilogue's sum).
      bool is_product = false;
      for (const Op* mm : matmuls_of(g, g.node(*p)))
        is_product = is_product || mm->outputs.front() == add->inputs[static_cast<size_t>(side)];
      if (!is_product) continue;
      sites.push_back({{*p, n.id}, {side}});
      break;
    }
  }
  return sites;
}

std::optional<std::string> epilogue_guard(const FusedGraph& g, const RuleMatch& site,
                                          const char* what) {
  const Op& add = g.only_op(g.node(site.nodes[1]));
  size_t side = static_cast<size_t>(site.extra[0]);
  const Tensor& y = g.graph().tensor(add.inputs[side]);
  const Tensor& other = g.graph().tensor(add.inputs[1 - side]);
  if (other.numel() != y.numel())
    return std::string("the ") + what + " " + other.name + " " + shape_to_string(other.shape) +
           " broadcasts over the product " + y.name + " " + shape_to_string(y.shape);
  std::string others = other_readers(g, add.inputs[side], site.nodes[1]);
  if (!others.empty() || g.is_graph_output(add.inputs[side]))
    return "the product " + y.name + " is also read by " +
           (others.empty() ? std::string("the graph outputs") : others);
  const FusedNode& gemv = g.node(site.nodes[0]);
  for (size_t i : gemv.ops) {
    const Op& op = g.op(i);
    if (op.kind == OpKind::add &&
        (op.inputs[0] == add.inputs[side] || op.inputs[1] == add.inputs[side]))
      return "the product " + y.name + " already has an epilogue";
  }
  std::optional<int> maker = g.producer(add.inputs[1 - side]);
  if (maker && *maker == site.nodes[0])
    return std::string("the ") + what + " " + other.name + " comes from the same GEMV launch";
  if (auto blocked = g.merge_blocker(site.nodes)) return *blocked;
  return std::nullopt;
}

const Op* cache_writer(const FusedGraph& g, TensorId cache) {
  for (const Op& op : g.graph().ops())
    if (op.kind == OpKind::kv_write && op.outputs.front() == cache) return &op;
  return nullptr;
}

std::vector<const Op*> lone_attentions(const FusedGraph& g) {
  std::vector<const Op*> found;
  for (const FusedNode& n : g.nodes())
    if (const Op* attn = single_op(g, n, OpKind::attention)) found.push_back(attn);
  return found;
}

}  // namespace lanec::rule_helpers
