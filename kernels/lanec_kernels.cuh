// The lanec kernel library: every kernel family, for the emitted program.
// Each family defines a params struct, a kernel template taking it as
// __grid_constant__, and a launch_<family>(params, stream) that returns
// cudaErrorInvalidValue for shapes it cannot take (wrap in LANEC_CUDA_CHECK).
// docs/kernels.md documents params, thread mappings and layouts.
#pragma once

#include "common.cuh"       // LANEC_CUDA_CHECK, reductions, formats, dequant helpers
#include "embed.cuh"        // launch_embed: token row gather (+ RMS norm)
#include "rms_norm.cuh"     // launch_rms_norm: (+ residual add) (+ int8 output)
#include "quantize.cuh"     // launch_quantize_q8: f32 -> int8 activations
#include "repack.cuh"       // launch_repack_q8_0: GGUF Q8_0 -> q8_0_split at load
#include "gemv.cuh"         // launch_gemv: y = W x, parts / SwiGLU / bias / residual
#include "gemv_staged.cuh"  // launch_gemv_staged: the same with the weights staged in shared memory
#include "rope.cuh"         // launch_rope: RoPE (+ per-head RMS norm), Q and K parts
#include "kv_cache.cuh"     // launch_kv_write: K/V rows into the caches
#include "attention.cuh"    // launch_attention: split-K decode attention, merged in-kernel
#include "elementwise.cuh"  // launch_elementwise: SwiGLU, add
#include "argmax.cuh"       // launch_argmax: greedy token + device decode-state advance
#include "ffn.cuh"          // launch_ffn: the SwiGLU FFN block in one launch (+ its q8_0_cols repack)
