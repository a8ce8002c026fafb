// One-time repack of a GGUF Q8_0 matrix [rows, k] (34-byte blocks, only
// 2-byte aligned) into lanec's q8_0_split layout (blocks.h: int8 plane, then
// f16 scale plane) so that GEMV can stream weights with 16-byte loads.
// Runs at load time, out of place (src and dst must not overlap).
#pragma once

#include "common.cuh"

namespace lanec::kernels {

struct RepackQ8_0Params {
  const void* src;  // [rows, k/32] BlockQ8_0
  void* dst;        // q8_0_split_bytes(rows, k) bytes
  int rows;
  int k;            // a multiple of 32
};

// Thread mapping: one thread per 32-element block (grid-stride); it copies
// the block's 32 values and its scale. Byte-granular reads: load time only.
constexpr int kRepackThreads = 256;

__global__ void __launch_bounds__(kRepackThreads) repack_q8_0_kernel(const __grid_constant__ RepackQ8_0Params p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  const size_t blocks_per_row = static_cast<size_t>(p.k / kQ8Block);
  const size_t n_blocks = static_cast<size_t>(p.rows) * blocks_per_row;
  const uint8_t* src = static_cast<const uint8_t*>(p.src);
  uint8_t* dst = static_cast<uint8_t*>(p.dst);
  uint16_t* scales = reinterpret_cast<uint16_t*>(dst + static_cast<size_t>(p.rows) * p.k);
  for (size_t b = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; b < n_blocks;
       b += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint8_t* blk = src + b * sizeof(BlockQ8_0);
    scales[b] = static_cast<uint16_t>(blk[0] | (blk[1] << 8));
    // Block b of the matrix holds elements [32b, 32b+32) of the row-major int8 plane.
    for (int j = 0; j < kQ8Block; ++j) dst[b * kQ8Block + j] = blk[2 + j];
  }
}

inline cudaError_t launch_repack_q8_0(const RepackQ8_0Params& p, cudaStream_t stream) {
  if (p.rows <= 0 || p.k <= 0 || p.k % kQ8Block != 0) return invalid_launch();
  const size_t n_blocks = static_cast<size_t>(p.rows) * (p.k / kQ8Block);
  const size_t grid = (n_blocks + kRepackThreads - 1) / kRepackThreads;
  return launch_kernel(repack_q8_0_kernel, static_cast<unsigned>(grid < 65535 ? grid : 65535), kRepackThreads, 0, stream,
                       p);
}

}  // namespace lanec::kernels
