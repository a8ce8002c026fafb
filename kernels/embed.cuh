// Embedding gather: out = table[token] dequantized to f32, optionally followed
// by an RMS norm of the row (embed_norm: out = row * rsqrt(mean(row^2)+eps) * w).
// The token id is read on the device (from the decode state slot argmax
// writes), so a captured CUDA graph replays with no host round trip.
#pragma once

#include "common.cuh"

namespace lanec::kernels {

struct EmbedParams {
  const void* table;     // [n_rows, dim] in format F (GGUF row layout, or q8_0_split)
  const int* token;      // device int32: the row to gather
  float* out;            // [dim]
  const float* norm_w;   // [dim]; used only when Norm
  float eps;             // RMS norm epsilon; used only when Norm
  int n_rows;            // rows of the table (vocabulary size)
  int dim;               // row length; a multiple of the format's block size
};

// Thread mapping: blocks of kEmbedThreads threads; a pass of a block covers
// kEmbedThreads * kEmbedPerThread elements, thread t elements t, t + blockDim,
// ... of it (byte loads: block-format rows are only 2-byte aligned; this runs
// once per token so its cost is one row's bytes). A thread loads its
// elements of a pass before storing any: the compiler cannot tell the stores
// from the table, so a load after a store would wait for it, one round trip
// an element. Without Norm the passes spread over blocks; the norm's sum
// needs one block.
// An out-of-range token id writes zeros (argmax and the tokenizer never make one).
constexpr int kEmbedThreads = 256;
constexpr int kEmbedPerThread = 4;

template <WeightFormat F, bool Norm>
__global__ void __launch_bounds__(kEmbedThreads) embed_kernel(const __grid_constant__ EmbedParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  __shared__ float scratch[kWarpSize];
  const int token = *p.token;
  const bool in_range = token >= 0 && token < p.n_rows;
  const uint8_t* base = static_cast<const uint8_t*>(p.table);
  const int pass = static_cast<int>(blockDim.x) * kEmbedPerThread;
  float sumsq = 0.0f;
  for (int start = static_cast<int>(blockIdx.x) * pass; start < p.dim; start += static_cast<int>(gridDim.x) * pass) {
    float v[kEmbedPerThread];
#pragma unroll
    for (int j = 0; j < kEmbedPerThread; ++j) {
      const int i = start + static_cast<int>(threadIdx.x + j * blockDim.x);
      v[j] = 0.0f;
      if (in_range && i < p.dim) {
        if constexpr (F == WeightFormat::q8_0_split) {
          v[j] = dequant_q8_0_split(base, p.n_rows, p.dim, token, i);
        } else {
          v[j] = dequant_element<F>(base + static_cast<size_t>(token) * weight_row_bytes(F, p.dim), i);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kEmbedPerThread; ++j) {
      const int i = start + static_cast<int>(threadIdx.x + j * blockDim.x);
      if (i < p.dim) p.out[i] = v[j];
      sumsq += v[j] * v[j];
    }
  }
  if constexpr (Norm) {
    const float total = block_sum(sumsq, scratch);
    const float inv = rsqrtf(total / static_cast<float>(p.dim) + p.eps);
    // Each thread rescales exactly the elements it wrote above.
    for (int start = 0; start < p.dim; start += pass) {
#pragma unroll
      for (int j = 0; j < kEmbedPerThread; ++j) {
        const int i = start + static_cast<int>(threadIdx.x + j * blockDim.x);
        if (i < p.dim) p.out[i] = p.out[i] * inv * p.norm_w[i];
      }
    }
  }
}

template <WeightFormat F, bool Norm>
cudaError_t launch_embed(const EmbedParams& p, cudaStream_t stream) {
  if (p.dim <= 0 || p.dim % weight_block_elems(F) != 0 || p.n_rows <= 0) return invalid_launch();
  if (Norm && p.norm_w == nullptr) return invalid_launch();
  const unsigned blocks = Norm ? 1u : static_cast<unsigned>(ceil_div(p.dim, kEmbedThreads * kEmbedPerThread));
  return launch_kernel(embed_kernel<F, Norm>, blocks, kEmbedThreads, 0, stream, p);
}

}  // namespace lanec::kernels
