// Graph containers, names of roles/types/kinds and attribute access.
#include "lib/graph/graph.h"

#include <algorithm>

#include "lib/common/error.h"

namespace lanec {

namespace {

struct RoleName {
  Role role;
  const char* name;
};
constexpr RoleName kRoleNames[] = {
    {Role::param, "param"},
    {Role::state, "state"},
    {Role::constant, "const"},
    {Role::activation, "act"},
};

struct KindName {
  OpKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {OpKind::embed_get_rows, "embed_get_rows"},
    {OpKind::rms_norm, "rms_norm"},
    {OpKind::head_rms_norm, "head_rms_norm"},
    {OpKind::l2_norm, "l2_norm"},
    {OpKind::add, "add"},
    {OpKind::mul, "mul"},
    {OpKind::scale, "scale"},
    {OpKind::silu, "silu"},
    {OpKind::gelu, "gelu"},
    {OpKind::sigmoid, "sigmoid"},
    {OpKind::softplus, "softplus"},
    {OpKind::exp, "exp"},
    {OpKind::swiglu, "swiglu"},
    {OpKind::swiglu_oai, "swiglu_oai"},
    {OpKind::geglu, "geglu"},
    {OpKind::softmax, "softmax"},
    {OpKind::matmul, "matmul"},
    {OpKind::rope, "rope"},
    {OpKind::kv_write, "kv_write"},
    {OpKind::attention, "attention"},
    {OpKind::moe_route, "moe_route"},
    {OpKind::moe_experts, "moe_experts"},
    {OpKind::short_conv, "short_conv"},
    {OpKind::gated_delta_rule, "gated_delta_rule"},
    {OpKind::reshape, "reshape"},
    {OpKind::slice, "slice"},
    {OpKind::concat, "concat"},
    {OpKind::argmax, "argmax"},
};

const char* attr_type_name(const AttrValue& v) {
  switch (v.index()) {
    case 0: return "int";
    case 1: return "float";
    default: return "string";
  }
}

}  // namespace

const char* role_name(Role role) {
  for (const auto& r : kRoleNames)
    if (r.role == role) return r.name;
  LANEC_ASSERT(false, "role without a name");
  return "";
}

std::optional<Role> role_from_name(std::string_view name) {
  for (const auto& r : kRoleNames)
    if (name == r.name) return r.role;
  return std::nullopt;
}

// The IR's element types are the kGgmlTypes rows marked ggml_use::kGraph,
// spelled in lower case.
const char* elem_type_name(GgmlType type) {
  return ggml_type_has_use(type, ggml_use::kGraph) ? ggml_type_lower_name(type) : nullptr;
}

std::optional<GgmlType> elem_type_from_name(std::string_view name) {
  for (const GgmlTypeTraits& t : kGgmlTypes) {
    if ((t.uses & ggml_use::kGraph) != 0 && name == ggml_type_lower_name(t.type)) return t.type;
  }
  return std::nullopt;
}

bool elem_type_is_quantized(GgmlType type) {
  return ggml_type_has_use(type, ggml_use::kGraph) && ggml_traits(type).block_elems > 1;
}

const char* op_kind_name(OpKind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return k.name;
  LANEC_ASSERT(false, "op kind without a name");
  return "";
}

std::optional<OpKind> op_kind_from_name(std::string_view name) {
  for (const auto& k : kKindNames)
    if (name == k.name) return k.kind;
  return std::nullopt;
}

const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> v;
    for (const auto& k : kKindNames) v.push_back(k.kind);
    return v;
  }();
  return kinds;
}

bool op_kind_writes_state(OpKind kind) {
  return kind == OpKind::kv_write || kind == OpKind::short_conv ||
         kind == OpKind::gated_delta_rule;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

bool is_valid_tensor_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!is_name_char(c)) return false;
  return true;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {
const AttrValue& require_attr(const Op& op, const std::string& key) {
  auto it = op.attrs.find(key);
  if (it == op.attrs.end())
    throw Error(std::string("op ") + op_kind_name(op.kind) + ": missing attribute '" + key + "'");
  return it->second;
}
[[noreturn]] void wrong_attr_type(const Op& op, const std::string& key, const char* expected,
                                  const AttrValue& got) {
  throw Error(std::string("op ") + op_kind_name(op.kind) + ": attribute '" + key +
              "' expected " + expected + ", got " + attr_type_name(got));
}
}  // namespace

int64_t Op::get_int(const std::string& key) const {
  const AttrValue& v = require_attr(*this, key);
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  wrong_attr_type(*this, key, "int", v);
}

double Op::get_float(const std::string& key) const {
  const AttrValue& v = require_attr(*this, key);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  wrong_attr_type(*this, key, "float", v);
}

const std::string& Op::get_string(const std::string& key) const {
  const AttrValue& v = require_attr(*this, key);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  wrong_attr_type(*this, key, "string", v);
}

int64_t Op::get_int_or(const std::string& key, int64_t fallback) const {
  return has_attr(key) ? get_int(key) : fallback;
}
double Op::get_float_or(const std::string& key, double fallback) const {
  return has_attr(key) ? get_float(key) : fallback;
}
std::string Op::get_string_or(const std::string& key, const std::string& fallback) const {
  return has_attr(key) ? get_string(key) : fallback;
}

TensorId Graph::add_tensor(Tensor tensor) {
  if (!is_valid_tensor_name(tensor.name))
    throw Error("tensor '" + tensor.name +
                "': expected a name of letters, digits, '_', '.' and '-', got an empty name or "
                "another character");
  if (by_name_.count(tensor.name))
    throw Error("tensor " + tensor.name + ": declared twice");
  if (tensor.shape.empty())
    throw Error("tensor " + tensor.name + ": expected a shape of rank >= 1, got []");
  // Bounding the element count keeps every size computation on it (numel,
  // byte sizes, offsets) free of overflow, whatever a graph file says.
  constexpr int64_t kMaxElements = int64_t{1} << 48;
  int64_t elements = 1;
  for (int64_t d : tensor.shape) {
    if (d < 1)
      throw Error("tensor " + tensor.name + ": expected every dim >= 1, got " +
                  shape_to_string(tensor.shape));
    if (d > kMaxElements / elements)
      throw Error("tensor " + tensor.name + ": expected at most 2^48 elements, got shape " +
                  shape_to_string(tensor.shape));
    elements *= d;
  }
  auto id = static_cast<TensorId>(tensors_.size());
  by_name_.emplace(tensor.name, id);
  tensors_.push_back(std::move(tensor));
  return id;
}

size_t Graph::add_op(Op op) {
  for (TensorId id : op.inputs) LANEC_ASSERT(id < tensors_.size(), "op input out of range");
  for (TensorId id : op.outputs) LANEC_ASSERT(id < tensors_.size(), "op output out of range");
  ops_.push_back(std::move(op));
  return ops_.size() - 1;
}

const Tensor& Graph::tensor(TensorId id) const {
  LANEC_ASSERT(id < tensors_.size(), "tensor id out of range");
  return tensors_[id];
}

Tensor& Graph::tensor(TensorId id) {
  LANEC_ASSERT(id < tensors_.size(), "tensor id out of range");
  return tensors_[id];
}

std::optional<TensorId> Graph::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

TensorId Graph::id_of(std::string_view name) const {
  auto id = find(name);
  if (!id) throw Error("unknown tensor " + std::string(name));
  return *id;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string describe_op(const Graph& graph, size_t op_index) {
  LANEC_ASSERT(op_index < graph.ops().size(), "op index out of range");
  const Op& op = graph.ops()[op_index];
  std::string s = "op #" + std::to_string(op_index) + " (" + op_kind_name(op.kind);
  if (!op.outputs.empty() && op.outputs[0] < graph.tensors().size())
    s += " -> " + graph.tensor(op.outputs[0]).name;
  return s + ")";
}

GraphUses compute_uses(const Graph& graph) {
  GraphUses uses;
  uses.producer.resize(graph.tensors().size());
  uses.consumers.resize(graph.tensors().size());
  for (size_t i = 0; i < graph.ops().size(); ++i) {
    const Op& op = graph.ops()[i];
    for (TensorId id : op.outputs)
      if (id < graph.tensors().size() && !uses.producer[id]) uses.producer[id] = i;
    for (TensorId id : op.inputs) {
      if (id >= graph.tensors().size()) continue;
      auto& readers = uses.consumers[id];
      if (readers.empty() || readers.back() != i) readers.push_back(i);
    }
  }
  return uses;
}

size_t remove_unused_activations(Graph& graph) {
  GraphUses uses = compute_uses(graph);
  std::vector<bool> keep(graph.tensors().size(), true);
  for (TensorId id : graph.outputs()) LANEC_ASSERT(id < keep.size(), "output id out of range");
  std::vector<bool> is_output(graph.tensors().size(), false);
  for (TensorId id : graph.outputs()) is_output[id] = true;
  size_t removed = 0;
  for (TensorId id = 0; id < keep.size(); ++id) {
    if (graph.tensor(id).role == Role::activation && !uses.producer[id] &&
        uses.consumers[id].empty() && !is_output[id]) {
      keep[id] = false;
      ++removed;
    }
  }
  if (removed == 0) return 0;

  Graph rebuilt;
  std::vector<TensorId> new_id(keep.size(), 0);
  for (TensorId id = 0; id < keep.size(); ++id)
    if (keep[id]) new_id[id] = rebuilt.add_tensor(graph.tensor(id));
  for (Op op : graph.ops()) {
    for (TensorId& id : op.inputs) id = new_id[id];
    for (TensorId& id : op.outputs) id = new_id[id];
    rebuilt.add_op(std::move(op));
  }
  for (TensorId id : graph.outputs()) rebuilt.add_output(new_id[id]);
  rebuilt.metadata() = graph.metadata();
  graph = std::move(rebuilt);
  return removed;
}

}  // namespace lanec
