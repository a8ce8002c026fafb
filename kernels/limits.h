// Shape limits of the kernel library (plain C++), shared with the planner: link
// (lib/plan/link.cpp) refuses a model outside them at plan time, naming the
// op, instead of leaving it to a launch that would refuse it on the device.
#pragma once

namespace lanec::kernels {

// rms_norm.cuh: one block of 1024 threads holds the vector in registers, at
// most 16 elements a thread.
constexpr int kRmsNormMaxLength = 16384;
// rope.cuh: a lane keeps at most 4 pairs and 8 unrotated elements of a head.
constexpr int kRopeMaxHeadDim = 256;
// attention.cuh: a lane holds head_dim / 32 elements of q and of each accumulator.
constexpr int kAttnMaxHeadDim = 256;

// attention.cuh's rope prologue (rule rope_attention): a lane rotates the
// head_dim / 32 consecutive elements it holds, so pairs (2i, 2i+1) need an
// even count or one element a lane (the partner is the next lane), and NeoX
// pairs (i, i + rope_dims/2) a half of whole runs (the partner is one
// shuffle away).
constexpr bool attention_rope_fits(bool neox, int head_dim, int rope_dims) {
  return head_dim % 32 == 0 && head_dim <= kAttnMaxHeadDim && rope_dims > 0 && rope_dims % 2 == 0 &&
         rope_dims <= head_dim && (neox ? (rope_dims / 2) % (head_dim / 32) == 0 : (head_dim / 32) % 2 == 0 || head_dim == 32);
}

}  // namespace lanec::kernels
