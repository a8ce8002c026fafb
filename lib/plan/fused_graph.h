// The fused graph: the step graph partitioned into nodes, each of which will
// become one launch (or a view, which costs none). The rewrite stage starts
// with one node per op and fusion rules merge nodes; the step graph itself is
// never changed, so every node can always say which ops it covers.
//
// Contract:
//  - Every op of the step graph belongs to exactly one node; a node's ops are
//    sorted by op index. Nodes are in an executable order: a node reads only
//    tensors that are params, states, constants or outputs of earlier nodes
//    (or of its own earlier ops). verify_fused_graph checks this.
//  - A node's kind says how link turns it into a launch (docs/planner.md):
//      single   one op, linked by its op kind
//      embed_norm  embed_get_rows + rms_norm of the row
//      add_norm    add + rms_norm of the sum
//      gemv     matmuls sharing one input, their bias/residual adds, a swiglu
//      rope     ropes (<= 2) and the head_rms_norms feeding them, and (row_write)
//               the K and V cache writes of the rows the node rotates
//      kv_write the K and V cache writes of one position
//      view     reshape or contiguous slice: no launch, a view of the input
//      join     concat whose parts are written in place into the joined buffer
//      ffn      the SwiGLU FFN block: gate and up matmuls, the swiglu, the down
//               matmul and its residual add (ffn_fused)
//  - `pack` names a buffer that the node's outputs are planned into as
//    consecutive views (qkv_head_epilogue).
//  - Node ids are stable across rewrites (merges keep the first id), so
//    a rule can hold on to a node between a match and its rewrite.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/graph/graph.h"

namespace lanec {

enum class NodeKind : uint8_t { single, embed_norm, add_norm, gemv, rope, kv_write, view, join, ffn };
const char* node_kind_name(NodeKind kind);

struct FusedNode {
  int id = 0;
  NodeKind kind = NodeKind::single;
  std::vector<size_t> ops;          // sorted op indices
  std::vector<std::string> rules;   // rules that fired to build it, in firing order
  std::string pack;                 // outputs planned as views of this buffer; "" = none
};

class FusedGraph {
 public:
  // One single-op node per op, in op order.
  explicit FusedGraph(const Graph& graph);

  const Graph& graph() const { return *graph_; }
  const std::vector<FusedNode>& nodes() const { return nodes_; }
  std::vector<FusedNode>& mutable_nodes() { return nodes_; }

  // Position of the node with this id, or nullopt once merged away.
  std::optional<size_t> position(int id) const;
  const FusedNode& node(int id) const;
  FusedNode& node_mut(int id);

  // The op's OpKind at op index `op`.
  const Op& op(size_t index) const { return graph_->ops()[index]; }
  // The first op of a single node.
  const Op& only_op(const FusedNode& node) const { return op(node.ops.front()); }

  // Id of the node writing tensor t (activation or state), if any.
  std::optional<int> producer(TensorId t) const;
  // Ids of the nodes reading t from outside the node producing it, in order.
  std::vector<int> readers(TensorId t) const;
  bool is_graph_output(TensorId t) const;
  // Tensors a node reads from outside itself / writes that are read outside
  // itself or are graph outputs or states; in op order, without repeats.
  std::vector<TensorId> external_inputs(const FusedNode& node) const;
  std::vector<TensorId> external_outputs(const FusedNode& node) const;
  // All tensors written by the node's ops.
  std::vector<TensorId> written(const FusedNode& node) const;

  // Why the nodes cannot become one node at one position, or nullopt when they
  // can. Tries the latest member's position (no node in between may read an
  // earlier member's output) and the earliest (every outside input of a later
  // member must exist before it).
  std::optional<std::string> merge_blocker(const std::vector<int>& ids) const;
  // Merges the nodes (merge_blocker must be nullopt) into the first id's node,
  // with the given kind; records `rule`. Returns the merged node's id.
  int merge(const std::vector<int>& ids, NodeKind kind, const std::string& rule);

  // Short text naming a node for decline reasons: "#12 matmul q_l00".
  std::string describe(int id) const;
  std::string describe_node(const FusedNode& node) const;

 private:
  void reindex();
  std::optional<size_t> merge_position(const std::vector<int>& ids) const;

  const Graph* graph_;
  std::vector<FusedNode> nodes_;
  std::vector<int> node_of_op_;        // op index -> node id
  std::vector<int> position_of_id_;    // node id -> position, -1 once merged away
  std::vector<int> writer_op_;         // tensor id -> op index writing it, -1
  std::vector<std::vector<size_t>> reader_ops_;  // tensor id -> ops reading it
};

// Checks the contract above; throws lanec::Error naming the node and stage.
void verify_fused_graph(const FusedGraph& fused, const std::string& stage);

// Text form for --dump-after and rule tests:
//   #3 rms_norm attn_norm_l00 = inp_embd, blk.0.attn_norm.weight eps=1e-06
//   gemv [gemv_bias] {
//     #5 matmul q_flat_l00 = attn_norm_l00, blk.0.attn_q.weight
//     #6 add q_bias_l00 = q_flat_l00, blk.0.attn_q.bias
//   }
std::string print_fused_graph(const FusedGraph& fused);
// One op: "#5 matmul q_l00 = attn_norm_l00, blk.0.attn_q.weight".
std::string print_op_line(const Graph& graph, size_t op_index);

}  // namespace lanec
