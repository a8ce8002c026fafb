// The CPU reference executor: runs the UNFUSED step graph in f32 on weights
// dequantized by a WeightStore, one position per step, carrying the graph's
// states (KV caches) across steps. It is the oracle that fused plans, the
// emitted CUDA program and other implementations are compared against, so it
// favours plain loops that follow docs/ir.md over speed; only matmul rows are
// spread over threads.
//
// Contract:
//  - The graph must pass verify_graph and have params named `token` and `pos`
//    (i32 [1]), a f32 output (the logits) and, optionally, an i32 output
//    (the next token). The constructor loads every constant (dequantizing
//    through the store) and zeroes the states. The graph and the store must
//    outlive the executor (it keeps references to both).
//  - step(token, pos) runs every op once and returns the logits. States hold
//    f32 values rounded to their declared type (f16/bf16 caches round on write).
//  - Deterministic: the same steps give bit-identical results run to run and
//    for any thread count (each output element is computed by one thread in
//    a fixed order).
//  - Every op kind of docs/ir.md is implemented (MoE routing and experts,
//    short_conv and gated_delta_rule too). Bad runtime values (token out of
//    range, position past the cache) throw lanec::Error naming the op.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/graph/graph.h"
#include "lib/ref/weights.h"

namespace lanec {

struct ReferenceOptions {
  unsigned threads = 0;  // matmul threads; 0 = hardware concurrency
};

class ReferenceExecutor {
 public:
  ReferenceExecutor(const Graph& graph, WeightStore& weights, ReferenceOptions options = {});

  // Runs one decode step of `token` at position `pos`; returns the logits.
  std::vector<float> step(int32_t token, int32_t pos);
  // The graph's i32 output (argmax of the logits) after the last step.
  int32_t next_token() const;
  bool has_next_token() const { return next_id_ != kNoTensor; }

  // Current values of any f32 tensor (activation, state or constant) by name,
  // for tests and debugging. Throws lanec::Error for an unknown name.
  std::vector<float> values(std::string_view name) const;
  // Zeroes every state (a new sequence).
  void reset();

  const Graph& graph() const { return graph_; }
  int64_t n_vocab() const { return graph_.tensor(logits_id_).numel(); }

 private:
  static constexpr TensorId kNoTensor = static_cast<TensorId>(-1);

  const float* f32_in(TensorId id) const;
  std::vector<float>& f32_out(TensorId id);
  int32_t i32_scalar(TensorId id) const;
  void run_op(size_t index);
  void run_moe_route(const Op& op);
  void run_moe_experts(const Op& op);
  void run_short_conv(const Op& op);
  void run_gated_delta_rule(const Op& op);

  const Graph& graph_;
  ReferenceOptions options_;
  std::vector<const std::vector<float>*> constants_;  // by TensorId; null if not a constant
  std::vector<std::vector<float>> f32_;               // activations, states, f32 params
  std::vector<std::vector<int32_t>> i32_;             // i32 params and activations
  TensorId token_id_ = kNoTensor;
  TensorId pos_id_ = kNoTensor;
  TensorId logits_id_ = kNoTensor;
  TensorId next_id_ = kNoTensor;
};

}  // namespace lanec
