// conv_silu (waiting for qwen3next): the gated delta net's causal depthwise
// short convolution followed by SiLU: y_c = silu(sum_t w_c,t x_c,t). The
// activation is elementwise on the conv output, so the conv thread that
// computes y_c applies it before writing.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_conv_silu_rule();

}  // namespace lanec
