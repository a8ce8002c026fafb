// embed_norm: the embedding gather followed by the RMS norm of the row, as
// one embed launch with its norm.
//
// Math: r = table[token];  y = r * rsqrt(mean(r^2) + eps) * w.  One block
// gathers the row, sums squares and rescales the elements it wrote. Legal only
// when nothing else reads the raw row: the fused kernel keeps only y. In
// llama-style decoders the raw row is also the residual stream of layer 0, so
// the rule declines there with that reason (a kernel writing both rows would
// lift it).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_embed_norm_rule();

}  // namespace lanec
