// Shape limits of the kernel library, shared with the planner: link
// (lib/plan/link.cpp) refuses a model outside them at plan time, naming the
// op, instead of leaving it to a launch that would refuse it on the device.
#pragma once

namespace lanec::kernels {

// rms_norm.cuh: each block of 1024 threads holds the whole vector in
// registers, at most 16 elements a thread.
constexpr int kRmsNormMaxLength = 16384;
// rope.cuh: a lane keeps at most 4 pairs and 8 unrotated elements of a head.
constexpr int kRopeMaxHeadDim = 256;
// attention.cuh: a lane holds head_dim / 32 elements of q and of each accumulator.
constexpr int kAttnMaxHeadDim = 256;

}  // namespace lanec::kernels
