// The link stage: fused graph -> launches. Each node becomes one launch of a
// kernel family (or a view, which costs nothing); operands are named by the
// step-graph tensors they hold ("<tensor>.q8" for int8 activation forms).
// Views record where a tensor lives inside another: reshapes, contiguous
// slices (slice_read), concat parts (join_in_place), in-place RoPE outputs
// and packed projection results (qkv_head_epilogue).
//
// When no kernel can take a node, link throws lanec::Error:
//   "no kernel for op #12 (rms_norm -> attn_norm_l00): kind head_rms_norm,
//    output q_norm_l00: WHY"
// Link never reads weight data: formats and shapes come from the graph.
#pragma once

#include <string>
#include <vector>

#include "lib/knobs/knobs.h"
#include "lib/plan/fused_graph.h"
#include "lib/plan/schedule.h"

namespace lanec {

struct ViewDecl {
  std::string tensor;   // this tensor's buffer ...
  std::string of;       // ... is a view into this one
  int64_t offset = 0;   // elements
};

struct PackDecl {
  std::string name;     // "qkv_l03"
  int64_t elements = 0;
};

// An int8 form of an activation a GEMV reads ("<tensor>.q8"); the size stage
// plans its buffer and who writes it.
struct Int8FormDecl {
  std::string name;     // "attn_norm_l03.q8"
  std::string tensor;   // "attn_norm_l03"
};

struct LinkedPlan {
  std::vector<Launch> launches;
  std::vector<ViewDecl> views;
  std::vector<PackDecl> packs;
  std::vector<Int8FormDecl> int8_forms;  // in first-use order, no repeats
};

LinkedPlan link_launches(const FusedGraph& fused, const Knobs& knobs);

// Text of launches for --dump-after link/size/sequences (one launch a line).
std::string print_launches(const std::vector<Launch>& launches);
std::string print_launch(const Launch& launch);

}  // namespace lanec
