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

TensorId GraphBuilder::rms_norm(const std::string& name, TensorId x, TensorId weight,
                                double eps) {
  return apply_like(OpKind::rms_norm, name, {x, weight}, {{"eps", eps}});
}

TensorId GraphBuilder::head_rms_norm(const std::string& name, TensorId x, TensorId weight,
                                     double eps) {
  return apply_like(OpKind::head_rms_norm, name, {x, weight}, {{"eps", eps}});
}

TensorId GraphBuilder::matmul(const std::string& name, TensorId x, TensorId w,
                              std::vector<int64_t> out_shape) {
  const std::vector<int64_t>& w_shape = graph_.tensor(w).shape;
  if (out_shape.empty()) out_shape = {w_shape.size() == 2 ? w_shape.front() : 1};
  return apply(OpKind::matmul, name, std::move(out_shape), {x, w});
}

TensorId GraphBuilder::add(const std::string& name, TensorId a, TensorId b) {
  return apply_like(OpKind::add, name, {a, b});
}

TensorId GraphBuilder::mul(const std::string& name, TensorId a, TensorId b) {
  return apply_like(OpKind::mul, name, {a, b});
}

TensorId GraphBuilder::scale(const std::string& name, TensorId x, double factor) {
  return apply_like(OpKind::scale, name, {x}, {{"scale", factor}});
}

TensorId GraphBuilder::unary(OpKind kind, const std::string& name, TensorId x) {
  return apply_like(kind, name, {x});
}

TensorId GraphBuilder::rope(const std::string& name, TensorId x, TensorId pos,
                            const RopeSpec& spec) {
  Attrs attrs = spec.yarn;
  attrs["mode"] = spec.mode;
  attrs["n_rot"] = spec.n_rot;
  attrs["freq_base"] = spec.freq_base;
  if (spec.freq_scale) attrs["freq_scale"] = *spec.freq_scale;
  std::vector<TensorId> inputs{x, pos};
  if (spec.freq_factors) inputs.push_back(*spec.freq_factors);
  return apply_like(OpKind::rope, name, std::move(inputs), std::move(attrs));
}

void GraphBuilder::kv_write(TensorId cache, TensorId src, TensorId pos) {
  op(OpKind::kv_write, {src, pos}, {cache});
}

TensorId GraphBuilder::attention(const std::string& name, TensorId q, TensorId k_cache,
                                 TensorId v_cache, TensorId pos, double scale_factor,
                                 int64_t window, std::optional<TensorId> sinks) {
  Attrs attrs{{"scale", scale_factor}};
  if (window != 0) attrs["window"] = window;
  std::vector<TensorId> inputs{q, k_cache, v_cache, pos};
  if (sinks) inputs.push_back(*sinks);
  std::vector<int64_t> shape{graph_.tensor(q).shape.front(), graph_.tensor(v_cache).cols()};
  return apply(OpKind::attention, name, std::move(shape), std::move(inputs), std::move(attrs));
}

std::pair<TensorId, TensorId> GraphBuilder::moe_route(const std::string& ids_name,
                                                      const std::string& weights_name,
                                                      TensorId logits, int64_t k,
                                                      const std::string& gating, bool normalize) {
  TensorId ids = activation(ids_name, {k}, GgmlType::I32);
  TensorId weights = activation(weights_name, {k});
  op(OpKind::moe_route, {logits}, {ids, weights},
     {{"k", k}, {"gating", gating}, {"normalize", int64_t{normalize ? 1 : 0}}});
  return {ids, weights};
}

TensorId GraphBuilder::reshape(const std::string& name, TensorId x, std::vector<int64_t> shape) {
  return apply(OpKind::reshape, name, std::move(shape), {x}, {}, graph_.tensor(x).type);
}

TensorId GraphBuilder::slice(const std::string& name, TensorId x, int64_t offset, int64_t width) {
  std::vector<int64_t> shape = graph_.tensor(x).shape;
  shape.back() = width;
  return apply(OpKind::slice, name, std::move(shape), {x}, {{"offset", offset}});
}

TensorId GraphBuilder::argmax(const std::string& name, TensorId x) {
  return apply(OpKind::argmax, name, {1}, {x}, {}, GgmlType::I32);
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
