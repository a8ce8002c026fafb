// The step-graph verifier. Runs after the recognizer and between compiler
// stages (each rewrite must leave a valid graph).
//
// Checks, throwing lanec::Error with a message naming the op (index and kind),
// the tensors involved and "expected ... got ...":
//  - tensors: unique names, rank >= 1, dims >= 1, types allowed for the role
//    (params i32, activations f32/i32, states f32/f16/bf16, constants with a
//    GGUF name);
//  - every activation is written by exactly one op; params and constants are
//    never written; a state is written only by a state-writing kind
//    (kv_write, short_conv, gated_delta_rule) and by at most one op; an op
//    other than its writer reads a state only after the write;
//  - topological order: every input is a param/state/constant or the output
//    of an earlier op;
//  - per kind: input/output counts, element types, shapes and attributes as
//    docs/ir.md specifies;
//  - graph outputs are defined tensors.
#pragma once

#include "lib/graph/graph.h"

namespace lanec {

void verify_graph(const Graph& graph);

// Checks one op's operands and attributes only (per-kind signature); used by
// verify_graph and usable by rewrites that want to check a new op in place.
void verify_op(const Graph& graph, size_t op_index);

}  // namespace lanec
