// Fused graph: nodes over the step graph's ops (fused_graph.h).
#include "lib/plan/fused_graph.h"

#include <algorithm>
#include <set>

#include "lib/common/error.h"
#include "lib/graph/text.h"

namespace lanec {

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::single: return "single";
    case NodeKind::embed_norm: return "embed_norm";
    case NodeKind::add_norm: return "add_norm";
    case NodeKind::gemv: return "gemv";
    case NodeKind::rope: return "rope";
    case NodeKind::kv_write: return "kv_write";
    case NodeKind::view: return "view";
    case NodeKind::join: return "join";
    case NodeKind::ffn: return "ffn";
  }
  return "?";
}

FusedGraph::FusedGraph(const Graph& graph) : graph_(&graph) {
  for (size_t i = 0; i < graph.ops().size(); ++i) {
    FusedNode n;
    n.id = static_cast<int>(i);
    n.ops = {i};
    nodes_.push_back(n);
  }
  writer_op_.assign(graph.tensors().size(), -1);
  for (size_t i = 0; i < graph.ops().size(); ++i)
    for (TensorId t : graph.ops()[i].outputs) writer_op_[t] = static_cast<int>(i);
  reader_ops_.assign(graph.tensors().size(), {});
  for (size_t i = 0; i < graph.ops().size(); ++i)
    for (TensorId t : graph.ops()[i].inputs)
      if (reader_ops_[t].empty() || reader_ops_[t].back() != i) reader_ops_[t].push_back(i);
  reindex();
}

void FusedGraph::reindex() {
  node_of_op_.assign(graph_->ops().size(), -1);
  position_of_id_.assign(graph_->ops().size(), -1);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    position_of_id_[static_cast<size_t>(nodes_[i].id)] = static_cast<int>(i);
    for (size_t op : nodes_[i].ops) node_of_op_[op] = nodes_[i].id;
  }
}

std::optional<size_t> FusedGraph::position(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= position_of_id_.size() || position_of_id_[static_cast<size_t>(id)] < 0)
    return std::nullopt;
  return static_cast<size_t>(position_of_id_[static_cast<size_t>(id)]);
}

const FusedNode& FusedGraph::node(int id) const {
  auto p = position(id);
  LANEC_ASSERT(p.has_value(), "no fused node #" + std::to_string(id));
  return nodes_[*p];
}

FusedNode& FusedGraph::node_mut(int id) {
  auto p = position(id);
  LANEC_ASSERT(p.has_value(), "no fused node #" + std::to_string(id));
  return nodes_[*p];
}

std::optional<int> FusedGraph::producer(TensorId t) const {
  if (t >= writer_op_.size() || writer_op_[t] < 0) return std::nullopt;
  return node_of_op_[static_cast<size_t>(writer_op_[t])];
}

std::vector<int> FusedGraph::readers(TensorId t) const {
  std::optional<int> own = producer(t);
  std::vector<std::pair<size_t, int>> found;  // (position, id)
  if (t >= reader_ops_.size()) return {};
  for (size_t op : reader_ops_[t]) {
    int id = node_of_op_[op];
    if (own && id == *own) continue;
    std::pair<size_t, int> entry{*position(id), id};
    if (std::find(found.begin(), found.end(), entry) == found.end()) found.push_back(entry);
  }
  std::sort(found.begin(), found.end());
  std::vector<int> out;
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

bool FusedGraph::is_graph_output(TensorId t) const {
  const auto& outs = graph_->outputs();
  return std::find(outs.begin(), outs.end(), t) != outs.end();
}

std::vector<TensorId> FusedGraph::written(const FusedNode& node) const {
  std::vector<TensorId> out;
  for (size_t op : node.ops)
    for (TensorId t : graph_->ops()[op].outputs) out.push_back(t);
  return out;
}

std::vector<TensorId> FusedGraph::external_inputs(const FusedNode& node) const {
  std::vector<TensorId> made = written(node);
  std::vector<TensorId> out;
  for (size_t op : node.ops)
    for (TensorId t : graph_->ops()[op].inputs) {
      bool inside = std::find(made.begin(), made.end(), t) != made.end();
      if (!inside && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  return out;
}

std::vector<TensorId> FusedGraph::external_outputs(const FusedNode& node) const {
  std::vector<TensorId> out;
  for (TensorId t : written(node)) {
    bool keep = graph_->tensor(t).role == Role::state || is_graph_output(t) || !readers(t).empty();
    if (keep && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

std::optional<size_t> FusedGraph::merge_position(const std::vector<int>& ids) const {
  std::vector<size_t> pos;
  for (int id : ids) pos.push_back(*position(id));
  size_t lo = *std::min_element(pos.begin(), pos.end());
  size_t hi = *std::max_element(pos.begin(), pos.end());
  std::set<int> members(ids.begin(), ids.end());
  // Latest position: nobody strictly between may read what a member writes.
  bool late_ok = true;
  for (size_t p = lo + 1; p < hi && late_ok; ++p) {
    const FusedNode& between = nodes_[p];
    if (members.count(between.id)) continue;
    for (size_t q : pos) {
      if (q >= p) continue;
      for (TensorId t : written(nodes_[q]))
        for (size_t op : between.ops)
          for (TensorId in : graph_->ops()[op].inputs) late_ok = late_ok && in != t;
    }
  }
  if (late_ok) return hi;
  // Earliest position: every member's outside inputs exist before lo.
  bool early_ok = true;
  for (size_t q : pos) {
    for (TensorId t : external_inputs(nodes_[q])) {
      std::optional<int> w = producer(t);
      if (!w || members.count(*w)) continue;
      early_ok = early_ok && *position(*w) < lo;
    }
  }
  if (early_ok) return lo;
  return std::nullopt;
}

std::optional<std::string> FusedGraph::merge_blocker(const std::vector<int>& ids) const {
  for (int id : ids)
    if (!position(id)) return "node #" + std::to_string(id) + " was merged already";
  if (merge_position(ids)) return std::nullopt;
  return "an op between the members reads one member's output while another needs inputs "
         "made in between";
}

int FusedGraph::merge(const std::vector<int>& ids, NodeKind kind, const std::string& rule) {
  LANEC_ASSERT(!ids.empty(), "merge of no nodes");
  std::optional<size_t> at = merge_position(ids);
  LANEC_ASSERT(at.has_value(), "merge without a legal position (" + rule + ")");
  FusedNode merged;
  merged.id = ids.front();
  merged.kind = kind;
  for (int id : ids) {
    const FusedNode& n = node(id);
    merged.ops.insert(merged.ops.end(), n.ops.begin(), n.ops.end());
    for (const std::string& r : n.rules)
      if (std::find(merged.rules.begin(), merged.rules.end(), r) == merged.rules.end())
        merged.rules.push_back(r);
    if (merged.pack.empty()) merged.pack = n.pack;
  }
  std::sort(merged.ops.begin(), merged.ops.end());
  if (std::find(merged.rules.begin(), merged.rules.end(), rule) == merged.rules.end())
    merged.rules.push_back(rule);
  int anchor_id = nodes_[*at].id;
  std::vector<FusedNode> next;
  std::set<int> members(ids.begin(), ids.end());
  for (const FusedNode& n : nodes_) {
    if (n.id == anchor_id) next.push_back(merged);
    else if (!members.count(n.id)) next.push_back(n);
  }
  nodes_ = std::move(next);
  reindex();
  return merged.id;
}

std::string FusedGraph::describe(int id) const { return describe_node(node(id)); }

std::string FusedGraph::describe_node(const FusedNode& n) const {
  const Op& op = graph_->ops()[n.ops.back()];
  std::string out = "#" + std::to_string(n.ops.back()) + " " + op_kind_name(op.kind);
  if (!op.outputs.empty()) out += " " + graph_->tensor(op.outputs.front()).name;
  return out;
}

void verify_fused_graph(const FusedGraph& fused, const std::string& stage) {
  const Graph& g = fused.graph();
  std::vector<int> seen(g.ops().size(), 0);
  std::vector<bool> defined(g.tensors().size(), false);
  for (TensorId t = 0; t < g.tensors().size(); ++t)
    defined[t] = g.tensor(t).role != Role::activation;
  auto fail = [&](const FusedNode& n, const std::string& why) {
    throw Error("fused graph after stage '" + stage + "': node " + fused.describe_node(n) + " (" +
                node_kind_name(n.kind) + "): " + why);
  };
  for (const FusedNode& n : fused.nodes()) {
    if (n.ops.empty()) fail(n, "covers no op");
    if (!std::is_sorted(n.ops.begin(), n.ops.end())) fail(n, "ops are not sorted");
    if (n.kind == NodeKind::single && n.ops.size() != 1) fail(n, "a single node covers several ops");
    for (size_t op : n.ops) {
      if (op >= seen.size()) fail(n, "op index " + std::to_string(op) + " out of range");
      if (seen[op]++) fail(n, "op #" + std::to_string(op) + " is covered twice");
    }
    for (size_t op : n.ops) {
      for (TensorId in : g.ops()[op].inputs)
        if (!defined[in])
          fail(n, "reads " + g.tensor(in).name + " before any node writes it");
      for (TensorId out : g.ops()[op].outputs) defined[out] = true;
    }
  }
  for (size_t op = 0; op < seen.size(); ++op)
    if (!seen[op])
      throw Error("fused graph after stage '" + stage + "': op " + describe_op(g, op) +
                  " belongs to no node");
}

std::string print_op_line(const Graph& graph, size_t op_index) {
  const Op& op = graph.ops()[op_index];
  std::string s = "#" + std::to_string(op_index) + " " + op_kind_name(op.kind) + " ";
  for (size_t i = 0; i < op.outputs.size(); ++i)
    s += (i ? ", " : "") + graph.tensor(op.outputs[i]).name;
  s += " =";
  for (size_t i = 0; i < op.inputs.size(); ++i)
    s += (i ? ", " : " ") + graph.tensor(op.inputs[i]).name;
  for (const auto& [key, value] : op.attrs) s += " " + key + "=" + format_attr_value(value);
  return s;
}

std::string print_fused_graph(const FusedGraph& fused) {
  std::string out;
  for (const FusedNode& n : fused.nodes()) {
    if (n.kind == NodeKind::single && n.rules.empty() && n.pack.empty()) {
      out += print_op_line(fused.graph(), n.ops.front()) + "\n";
      continue;
    }
    out += node_kind_name(n.kind);
    if (!n.rules.empty()) {
      out += " [";
      for (size_t i = 0; i < n.rules.size(); ++i) out += (i ? ", " : "") + n.rules[i];
      out += "]";
    }
    if (!n.pack.empty()) out += " pack=" + n.pack;
    out += " {\n";
    for (size_t op : n.ops) out += "  " + print_op_line(fused.graph(), op) + "\n";
    out += "}\n";
  }
  return out;
}

}  // namespace lanec
