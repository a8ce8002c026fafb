// GraphBuilder: a small convenience layer for writing recognizers (GGUF ->
// step graph) and tests. It only adds tensors and ops to a Graph; finish()
// runs the verifier so a recognizer that builds a malformed graph fails with
// a message naming the op.
//
//   GraphBuilder b;
//   TensorId token = b.param("token", GgmlType::I32, {1});
//   TensorId w = b.constant("blk.0.attn_norm.weight", GgmlType::F32, {d});
//   TensorId n = b.apply_like(OpKind::rms_norm, "attn_norm_l00", {x, w}, {{"eps", 1e-6}});
//   TensorId q = b.apply(OpKind::matmul, "q_l00", {n_head, head_dim}, {n, wq});
//   Graph g = b.finish();
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/graph/graph.h"

namespace lanec {

class GraphBuilder {
 public:
  TensorId param(const std::string& name, GgmlType type, std::vector<int64_t> shape);
  TensorId state(const std::string& name, GgmlType type, std::vector<int64_t> shape);
  // gguf_name defaults to name.
  TensorId constant(const std::string& name, GgmlType type, std::vector<int64_t> shape,
                    std::string gguf_name = "");
  // A constant declared from GGUF's ne (innermost first); the shape is reversed.
  TensorId constant_from_ne(const std::string& name, GgmlType type,
                            const std::vector<uint64_t>& ne, std::string gguf_name = "");
  TensorId activation(const std::string& name, std::vector<int64_t> shape,
                      GgmlType type = GgmlType::F32);

  // Appends an op over already declared tensors.
  void op(OpKind kind, std::vector<TensorId> inputs, std::vector<TensorId> outputs,
          Attrs attrs = {});
  // Declares the activation `out_name` with out_shape/out_type and appends the
  // op producing it; returns the new activation.
  TensorId apply(OpKind kind, const std::string& out_name, std::vector<int64_t> out_shape,
                 std::vector<TensorId> inputs, Attrs attrs = {},
                 GgmlType out_type = GgmlType::F32);
  // As apply, with the output shaped like inputs[0] (f32).
  TensorId apply_like(OpKind kind, const std::string& out_name, std::vector<TensorId> inputs,
                      Attrs attrs = {});

  // Typed helpers for the common kinds (docs/ir.md gives their semantics).
  // Each declares the f32 output activation `name` and appends the op.
  TensorId rms_norm(const std::string& name, TensorId x, TensorId weight, double eps);
  TensorId head_rms_norm(const std::string& name, TensorId x, TensorId weight, double eps);
  // out_shape defaults to [rows of w].
  TensorId matmul(const std::string& name, TensorId x, TensorId w,
                  std::vector<int64_t> out_shape = {});
  TensorId add(const std::string& name, TensorId a, TensorId b);
  TensorId mul(const std::string& name, TensorId a, TensorId b);
  TensorId scale(const std::string& name, TensorId x, double factor);
  // silu, gelu, sigmoid, softplus, exp, softmax.
  TensorId unary(OpKind kind, const std::string& name, TensorId x);
  struct RopeSpec {
    std::string mode = "norm";  // "norm" (adjacent pairs) or "neox" (halves)
    int64_t n_rot = 0;
    double freq_base = 10000.0;
    std::optional<double> freq_scale;       // omitted = 1
    std::optional<TensorId> freq_factors;   // rope_freqs.weight
    Attrs yarn;                             // ext_factor, attn_factor, beta_fast, ...
  };
  TensorId rope(const std::string& name, TensorId x, TensorId pos, const RopeSpec& spec);
  void kv_write(TensorId cache, TensorId src, TensorId pos);
  // window 0 = unlimited (no attribute); sinks optional.
  TensorId attention(const std::string& name, TensorId q, TensorId k_cache, TensorId v_cache,
                     TensorId pos, double scale, int64_t window = 0,
                     std::optional<TensorId> sinks = std::nullopt);
  // Returns {ids, weights}.
  std::pair<TensorId, TensorId> moe_route(const std::string& ids_name,
                                          const std::string& weights_name, TensorId logits,
                                          int64_t k, const std::string& gating, bool normalize);
  TensorId reshape(const std::string& name, TensorId x, std::vector<int64_t> shape);
  // Columns [offset, offset + width) of x's last dim.
  TensorId slice(const std::string& name, TensorId x, int64_t offset, int64_t width);
  TensorId argmax(const std::string& name, TensorId x);

  void output(TensorId id) { graph_.add_output(id); }
  void set_metadata(const std::string& key, AttrValue value) {
    graph_.metadata()[key] = std::move(value);
  }

  const Tensor& tensor(TensorId id) const { return graph_.tensor(id); }
  Graph& graph() { return graph_; }
  // Verifies (verify_graph) and returns the graph; throws lanec::Error.
  Graph finish();

 private:
  Graph graph_;
};

// Layer-suffixed activation name: layer_name("attn_norm", 3) == "attn_norm_l03".
std::string layer_name(const std::string& base, int layer);

}  // namespace lanec
