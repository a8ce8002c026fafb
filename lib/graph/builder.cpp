// GraphBuilder: declares tensors and appends ops; finish() verifies.
#include "lib/graph/builder.h"

#include <cstdio>

#include "lib/common/error.h"
#include "lib/graph/verify.h"

namespace lanec {

namespace {
Tensor make_tensor(const std::string& name, Role role, GgmlType type, std::vector<int64_t> shape,
                   std::string gguf_name = "") {
  Tensor t;
  t.name = name;
  t.role = role;
  t.type = type;
  t.shape = std::move(shape);
  t.gguf_name = std::move(gguf_name);
  return t;
}
}  // namespace

TensorId GraphBuilder::param(const std::string& name, GgmlType type, std::vector<int64_t> shape) {
  return graph_.add_tensor(make_tensor(name, Role::param, type, std::move(shape)));
}

TensorId GraphBuilder::state(const std::string& name, GgmlType type, std::vector<int64_t> shape) {
  return graph_.add_tensor(make_tensor(name, Role::state, type, std::move(shape)));
}

TensorId GraphBuilder::constant(const std::string& name, GgmlType type, std::vector<int64_t> shape,
                                std::string gguf_name) {
  if (gguf_name.empty()) gguf_name = name;
  return graph_.add_tensor(
      make_tensor(name, Role::constant, type, std::move(shape), std::move(gguf_name)));
}

TensorId GraphBuilder::constant_from_ne(const std::string& name, GgmlType type,
                                        const std::vector<uint64_t>& ne, std::string gguf_name) {
  std::vector<int64_t> shape(ne.rbegin(), ne.rend());
  return constant(name, type, std::move(shape), std::move(gguf_name));
}

TensorId GraphBuilder::activation(const std::string& name, std::vector<int64_t> shape,
                                  GgmlType type) {
  return graph_.add_tensor(make_tensor(name, Role::activation, type, std::move(shape)));
}

void GraphBuilder::op(OpKind kind, std::vector<TensorId> inputs, std::vector<TensorId> outputs,
                      Attrs attrs) {
  graph_.add_op(Op{kind, std::move(inputs), std::move(outputs), std::move(attrs)});
}

TensorId GraphBuilder::apply(OpKind kind, const std::string& out_name,
                             std::vector<int64_t> out_shape, std::vector<TensorId> inputs,
                             Attrs attrs, GgmlType out_type) {
  TensorId out = activation(out_name, std::move(out_shape), out_type);
  op(kind, std::move(inputs), {out}, std::move(attrs));
  return out;
}

TensorId GraphBuilder::apply_like(OpKind kind, const std::string& out_name,
                                  std::vector<TensorId> inputs, Attrs attrs) {
  LANEC_ASSERT(!inputs.empty(), "apply_like needs an input to copy the shape from");
  std::vector<int64_t> shape = graph_.tensor(inputs[0]).shape;
  return apply(kind, out_name, std::move(shape), std::move(inputs), std::move(attrs));
}

Graph GraphBuilder::finish() {
  verify_graph(graph_);
  return graph_;
}

std::string layer_name(const std::string& base, int layer) {
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_l%02d", layer);
  return base + suffix;
}

}  // namespace lanec
