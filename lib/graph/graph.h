// The step graph: lanec's IR of ONE decode step of a language model.
//
// Contract (docs/ir.md is the full specification):
//  - A Graph owns a table of tensors (indexed by TensorId, names unique) and an
//    ordered list of ops. Ops are in topological order: every tensor an op
//    reads is a param, state or constant, or the output of an earlier op.
//  - Shapes are written outermost first (PyTorch order): a GGUF matrix with
//    ne = [in, out] (ne[0] contiguous) is the shape [out, in]. shape() is the
//    reverse of GGUF's ne.
//  - Element types are ggml's (GgmlType): activations are f32 (ids i32),
//    params i32, states f32/f16/bf16, constants any weight format.
//  - Roles: param (per-step input), state (carried across steps, written in
//    place only by the state-updating kinds), constant (weights from the
//    GGUF), activation (intermediate; defined by exactly one op).
//  - Attributes are a sorted map (deterministic printing) of int, float or
//    string values; each kind's attributes are listed in docs/ir.md.
// verify.h checks all of this; text.h prints and parses the text form.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "lib/gguf/ggml_types.h"

namespace lanec {

using TensorId = uint32_t;

enum class Role : uint8_t {
  param,       // per-step input: token id, position
  state,       // carried across steps: KV caches, conv rings, recurrent states
  constant,    // weights, with their ggml format and GGUF tensor name
  activation,  // intermediate, defined by exactly one op
};

const char* role_name(Role role);                         // "param", "state", "const", "act"
std::optional<Role> role_from_name(std::string_view name);

// Element types the IR accepts, with their text names (ggml's lower-case
// names): the kGgmlTypes rows marked ggml_use::kGraph (lib/gguf/ggml_types.h,
// the type table alone; the IR does not depend on the GGUF reader).
const char* elem_type_name(GgmlType type);                // nullptr if not an IR type
std::optional<GgmlType> elem_type_from_name(std::string_view name);
bool elem_type_is_quantized(GgmlType type);               // block formats (q8_0, q4_k, mxfp4, ...)

// The op vocabulary. Math, operand order, shapes and attributes of every kind
// are specified in docs/ir.md; verify.cpp enforces them.
enum class OpKind : uint8_t {
  // gather and elementwise
  embed_get_rows,    // table[token] -> f32 row
  rms_norm,          // over the whole (rank-1) vector, times weight
  head_rms_norm,     // over the last dim of [rows, cols], times weight [cols]
  l2_norm,           // over the last dim (rank 1 or 2), no weight
  add,               // a + b, b broadcast over a's leading dims (biases too)
  mul,               // a * b, b broadcast over a's leading dims (norm weights, gates)
  scale,             // x * attr scale
  silu,
  gelu,              // tanh approximation
  sigmoid,
  softplus,
  exp,
  swiglu,            // silu(g) * u
  swiglu_oai,        // gpt-oss clamped swiglu
  geglu,             // gelu(g) * u
  softmax,           // over the last dim
  // linear algebra
  matmul,            // y = W x, W constant [out, in]
  // positions and caches
  rope,              // rotate [heads, head_dim] by the position param
  kv_write,          // cache[pos % rows] = src (writes a state)
  attention,         // decode attention of one query over a cache
  // mixture of experts
  moe_route,         // router logits -> top-k expert ids and weights
  moe_experts,       // weighted sum of the selected experts' GLU MLPs
  // recurrent (gated delta net)
  short_conv,        // causal depthwise conv over a ring of past inputs (writes a state)
  gated_delta_rule,  // delta-rule recurrence over a per-head state (writes a state)
  // views and data movement
  reshape,           // same elements, new shape
  slice,             // a contiguous range of the last dim
  concat,            // join along the last dim
  // output
  argmax,            // index of the largest element -> i32 [1]
};

const char* op_kind_name(OpKind kind);
std::optional<OpKind> op_kind_from_name(std::string_view name);
// All kinds in enum order (for tests and documentation checks).
const std::vector<OpKind>& all_op_kinds();
// Kinds that write a state tensor in place (their state operand is an output).
bool op_kind_writes_state(OpKind kind);

using AttrValue = std::variant<int64_t, double, std::string>;
using Attrs = std::map<std::string, AttrValue>;

struct Tensor {
  std::string name;             // unique; from the model (blk.3.attn_q.weight, attn_norm_l03)
  Role role = Role::activation;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> shape;   // outermost first; rank >= 1, every dim >= 1
  std::string gguf_name;        // constants: the GGUF tensor to load; empty otherwise

  int64_t numel() const;
  // The last (innermost, contiguous) dim; GGUF's ne[0].
  int64_t cols() const { return shape.empty() ? 0 : shape.back(); }
  bool operator==(const Tensor& o) const {
    return name == o.name && role == o.role && type == o.type && shape == o.shape &&
           gguf_name == o.gguf_name;
  }
  bool operator!=(const Tensor& o) const { return !(*this == o); }
};

struct Op {
  Op() = default;
  Op(OpKind kind_, std::vector<TensorId> inputs_, std::vector<TensorId> outputs_,
     Attrs attrs_ = {}, std::string fusion_ = {})
      : kind(kind_), inputs(std::move(inputs_)), outputs(std::move(outputs_)),
        attrs(std::move(attrs_)), fusion(std::move(fusion_)) {}

  OpKind kind = OpKind::embed_get_rows;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;  // state-writing kinds list the state they update here
  Attrs attrs;
  // Set by fusion rules, empty in a recognized graph: ops sharing a label
  // ("add_norm.3": rule name, '.', firing number) are linked into one launch
  // by the planner. The label does not change an op's meaning, so the
  // reference executor ignores it. Text form: a trailing "@add_norm.3".
  std::string fusion;

  bool operator==(const Op& o) const {
    return kind == o.kind && inputs == o.inputs && outputs == o.outputs && attrs == o.attrs &&
           fusion == o.fusion;
  }
  bool operator!=(const Op& o) const { return !(*this == o); }

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  // Typed attribute access; throw lanec::Error naming the key when it is
  // missing or of another type. get_float accepts an int value too.
  int64_t get_int(const std::string& key) const;
  double get_float(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  int64_t get_int_or(const std::string& key, int64_t fallback) const;
  double get_float_or(const std::string& key, double fallback) const;
  std::string get_string_or(const std::string& key, const std::string& fallback) const;
};

class Graph {
 public:
  // Adds a tensor; throws lanec::Error if the name is already taken or the
  // name/shape is malformed (empty name, rank 0, a dim < 1).
  TensorId add_tensor(Tensor tensor);
  // Appends an op (not verified here: call verify_graph).
  size_t add_op(Op op);

  const Tensor& tensor(TensorId id) const;
  Tensor& tensor(TensorId id);
  std::optional<TensorId> find(std::string_view name) const;
  // Throws lanec::Error "unknown tensor NAME" when absent.
  TensorId id_of(std::string_view name) const;

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Op>& ops() const { return ops_; }
  std::vector<Op>& mutable_ops() { return ops_; }

  // Graph outputs (e.g. the logits and the next token), in order.
  const std::vector<TensorId>& outputs() const { return outputs_; }
  void add_output(TensorId id) { outputs_.push_back(id); }

  // Model-level metadata (arch, n_layer, n_ctx, ...), printed in the header.
  Attrs& metadata() { return metadata_; }
  const Attrs& metadata() const { return metadata_; }

  bool operator==(const Graph& o) const {
    return tensors_ == o.tensors_ && ops_ == o.ops_ && outputs_ == o.outputs_ &&
           metadata_ == o.metadata_;
  }
  bool operator!=(const Graph& o) const { return !(*this == o); }

 private:
  std::vector<Tensor> tensors_;
  std::vector<Op> ops_;
  std::vector<TensorId> outputs_;
  Attrs metadata_;
  std::unordered_map<std::string, TensorId> by_name_;
};

// Who defines and who reads each tensor, for rewrites and the planner.
struct GraphUses {
  std::vector<std::optional<size_t>> producer;  // by TensorId: the op writing it, if any
  std::vector<std::vector<size_t>> consumers;   // by TensorId: ops reading it, in op order
};
GraphUses compute_uses(const Graph& graph);

// Removes activations that no op writes or reads and no graph output names,
// renumbering the remaining tensors in their current order (ops and outputs
// are remapped). Rewrites call it after replacing ops. Returns how many were
// removed.
size_t remove_unused_activations(Graph& graph);

// Tensor names are runs of letters, digits, '_', '.' and '-' (GGUF tensor
// names fit), so the text form needs no quoting for them.
bool is_name_char(char c);
bool is_valid_tensor_name(std::string_view name);

// "[2048, 1024]"
std::string shape_to_string(const std::vector<int64_t>& shape);
// A short description of an op for error messages: "op #12 (rms_norm -> attn_norm_l00)".
std::string describe_op(const Graph& graph, size_t op_index);

}  // namespace lanec
