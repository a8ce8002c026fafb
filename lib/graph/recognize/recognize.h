// Architecture recognizers: GGUF metadata and tensor names -> the step graph
// of ONE decode step (docs/ir.md, docs/reference.md).
//
// Contract:
//  - recognize_model dispatches on general.architecture; an architecture
//    without a recognizer is an lanec::Error listing the supported ones.
//  - Every tensor the graph needs is looked up by its GGUF name and its ne
//    checked against the hyperparameters; a missing or misshapen tensor is an
//    Error naming the file, the tensor, the expected and the found shape.
//  - The graph has params `token` and `pos` (i32 [1]), one K and one V cache
//    state per layer ([n_ctx, n_kv_head, head_dim], f32), and the outputs
//    `logits` (f32 [n_vocab]) and `next_token` (i32 [1], argmax of logits).
//  - The returned graph has passed verify_graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lib/graph/graph.h"

namespace lanec {

class GgufFile;

struct RecognizeOptions {
  // Caps the KV cache rows (n_ctx) below the model's context_length; 0 keeps
  // context_length. Real models train at 32k-128k positions, far more than a
  // test or a reference run needs.
  int64_t max_ctx = 0;
};

Graph recognize_model(const GgufFile& gguf, const RecognizeOptions& options = {});

// The model's step graph for a command: parsed from `graph_file` and verified
// when it is non-empty (a user-edited graph; weights still come from the
// GGUF), else recognized from the GGUF.
Graph load_step_graph(const GgufFile& gguf, const std::string& graph_file,
                      const RecognizeOptions& options = {});

// The architectures recognize_model accepts, in a stable order.
const std::vector<std::string>& recognized_architectures();

}  // namespace lanec
