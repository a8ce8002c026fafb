// The step graph's text form (grammar in docs/ir.md): one line per tensor
// declaration, one per op, deterministic, and exactly round-trippable:
//   parse_graph(print_graph(g)) == g  and  print(parse(print(g))) == print(g).
//
//   lanec-graph 1
//   meta arch="llama"
//   param token i32 [1]
//   const blk.0.attn_q.weight q8_0 [2048, 1024] gguf="blk.0.attn_q.weight"
//   act x_l00 f32 [1024]
//   op rms_norm attn_norm_l00 = x_l00, blk.0.attn_norm.weight eps=1e-06
//   output logits
//
// Floats are printed with the fewest digits that read back to the same
// double; a float always shows '.', 'e', "inf" or "nan" so that it never
// reads back as an int.
#pragma once

#include <string>
#include <string_view>

#include "lib/graph/graph.h"

namespace lanec {

std::string print_graph(const Graph& graph);

// Parses the text form. Errors throw lanec::Error "SOURCE:LINE:COL: expected
// WHAT, got WHAT". Does not verify: call verify_graph for semantic checks.
Graph parse_graph(std::string_view text, const std::string& source_name = "<graph>");

// Reads and parses a text graph file; errors name the path (and line:col).
// A GGUF given by mistake is refused with a message saying so.
Graph read_graph_file(const std::string& path);

// Formatting helpers shared with other printers (schedule dumps, census).
std::string format_float(double value);
std::string format_attr_value(const AttrValue& value);

}  // namespace lanec
