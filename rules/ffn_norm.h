// ffn_norm: the RMS norm in front of a fused FFN block (rule ffn_fused)
// formed by the ffn launch itself (kernels/ffn.cuh, its norm prologue).
//
// Math: x = q(rms_norm(h) * w), the two-word int8 form the gate/up sums
// read. Every thread block reads h (a few KB from L2) and forms all of x in
// its shared memory, mirroring the norm launch's threads so that its words
// are the norm launch's bit for bit: the sums of squares in the same order,
// the same scales and rounding. One dependent launch goes per layer.
//
// h is also the residual the blocks add their sums to, in place, while
// other blocks may still be reading it; so the GEMV that writes h stores it
// twice (GemvPart::y_copy) and the norm reads the second store.
//
// Declines: a norm whose output is read by anything but the ffn launch (or
// is a graph output), a norm input that is not the FFN block's residual,
// an input not written by a GEMV launch (no second store to read), a
// vector longer than the norm kernel's registers take.
//
// Measured (bench/ffn_fold.cu, the FFN block and its norm a layer,
// docs/performance.md).
#pragma once

#include <memory>

#include "rules/rule.h"

namespace lanec {

std::unique_ptr<FusionRule> make_ffn_norm_rule();

}  // namespace lanec
