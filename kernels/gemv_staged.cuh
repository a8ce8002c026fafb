// The staged GEMV: y = W x for q8_0_split weights and int8 (one- or
// two-word) activations, with every block's whole share of W copied into
// its shared memory before pdl_wait().
//
// The register GEMV (gemv.cuh) keeps one 16-byte chunk of each row a lane
// in flight and loads the first before the wait; where a lane has more
// chunks, each further one is a DRAM round trip after the wait. This kernel
// asks for all of a block's rows before the wait instead: thread 0 issues a
// bulk copy (cp.async.bulk, completion counted on an mbarrier) of the rows'
// int8 words and one of their scales for each part the rows fall in, so the
// weights stream while the launch before runs, and after the wait only the
// activation's L2 round trip and shared-memory reads remain. It pays only
// where every block is resident from the start and the launch before is
// long enough to hide the copies (measured: Qwen3-1.7B's output projection
// after the attention, +1.3 %; the GEMVs after a norm lose 2-8 %,
// docs/performance.md): the planner's rule staged_weights picks it, and
// launch_gemv_staged refuses shapes it cannot take. The copies need sm_90+.
//
// Thread mapping: kGemvStagedWarps warps a block, Split warps a row group of
// RowsPerWarp consecutive rows, so gemv_staged_rows_a_block(Split,
// RowsPerWarp) rows a block (rows numbered over the parts as in gemv.cuh). Warp w takes group
// w / Split and K slice s = w % Split, lane l the chunks c = s*32 + l +
// j*32*Split of each of its rows, one activation chunk load for all of them;
// slices reduce through shared memory. Epilogues: bias and residual per part
// (no SwiGLU).
#pragma once

#include "bulk_copy.cuh"
#include "gemv.cuh"
#include "limits.h"

namespace lanec::kernels {

// Whether launch_gemv_staged takes this k: bulk copies move multiples of 16
// bytes from 16-byte aligned addresses, and a row's scales are k/16 bytes.
__host__ __device__ constexpr bool gemv_staged_k_ok(int k) { return k > 0 && k % kGemvStagedKMultiple == 0; }

namespace gemv_staged_detail {

// Thread 0: asks for rows [row0, row0 + rows) of the launch (numbered over
// the parts) into s_qs / s_scale, one pair of bulk copies per part they
// touch, all counted on bar.
__device__ __forceinline__ void request_rows(const GemvParams& p, int row0, int rows, uint8_t* s_qs,
                                             uint16_t* s_scale, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const int scales_a_row = p.k / kQ8Block;
  bulk::init(bar, 1);
  bulk::arrive_expect(bar, static_cast<uint32_t>(rows) * (p.k + scales_a_row * 2));
  int first = row0;  // in the part's own numbering, once its part is found
  int done = 0;
  for (int q = 0; q < p.n_parts && done < rows; ++q) {
    const int part_rows = p.parts[q].rows;
    if (first >= part_rows) {
      first -= part_rows;
      continue;
    }
    const int n = min(rows - done, part_rows - first);
    const uint8_t* base = static_cast<const uint8_t*>(p.parts[q].w);
    const uint16_t* scales = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(part_rows) * p.k);
    bulk::copy(s_qs + static_cast<size_t>(done) * p.k, base + static_cast<size_t>(first) * p.k,
              static_cast<uint32_t>(n) * p.k, bar);
    bulk::copy(s_scale + static_cast<size_t>(done) * scales_a_row, scales + static_cast<size_t>(first) * scales_a_row,
              static_cast<uint32_t>(n) * scales_a_row * 2, bar);
    done += n;
    first = 0;
  }
#endif
}

// The part and local row of row `row` of the launch (numbered over the parts).
__device__ __forceinline__ int2 locate_row(const GemvParams& p, int row) {
  for (int q = 0; q < p.n_parts; ++q) {
    if (row < p.parts[q].rows) return make_int2(q, row);
    row -= p.parts[q].rows;
  }
  return make_int2(-1, 0);
}

}  // namespace gemv_staged_detail

template <Activation A, int Split, int RowsPerWarp>
__global__ void __launch_bounds__(kGemvStagedWarps* kWarpSize) gemv_staged_kernel(const __grid_constant__ GemvParams p) {
  static_assert(A == Activation::int8 || A == Activation::int8x2, "the staged GEMV takes int8 activations");
  static_assert(Split == 1 || Split == 2 || Split == 4, "split 1, 2 or 4");
  static_assert(RowsPerWarp == 1 || RowsPerWarp == 2 || RowsPerWarp == 4, "1, 2 or 4 rows a warp");
  constexpr int kRows = gemv_staged_rows_a_block(Split, RowsPerWarp);
  extern __shared__ __align__(128) uint8_t staged[];
  __shared__ __align__(8) uint64_t bar;
  __shared__ float partial[kGemvStagedWarps][RowsPerWarp];
  int total_rows = 0;
  for (int q = 0; q < p.n_parts; ++q) total_rows += p.parts[q].rows;
  const int row0 = static_cast<int>(blockIdx.x) * kRows;
  const int rows = min(kRows, total_rows - row0);
  uint8_t* s_qs = staged;
  uint16_t* s_scale = reinterpret_cast<uint16_t*>(staged + static_cast<size_t>(kRows) * p.k);
  // Weights are constants: requested before the wait.
  if (threadIdx.x == 0) gemv_staged_detail::request_rows(p, row0, rows, s_qs, s_scale, &bar);
  __syncthreads();  // the barrier is initialized before anyone waits on it
  pdl_wait();  // before any access to what earlier launches write (see common.cuh)
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize, lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int r0 = warp / Split * RowsPerWarp, slice = warp % Split;  // the warp's rows r0 .. r0 + RowsPerWarp - 1
  const int n_chunks = p.k / gemv_chunk_elems<WeightFormat::q8_0_split>();
  const int c0 = slice * kWarpSize + lane;
  float acc[RowsPerWarp] = {};
  if (r0 < rows) {
    // The activation's first chunk is on its way before the weights are waited for.
    auto x = gemv_detail::load_x<WeightFormat::q8_0_split, A>(p, c0);
    bulk::wait(&bar, 0);
#pragma unroll 1
    for (int c = c0; c < n_chunks; c += kWarpSize * Split) {
      if (c != c0) x = gemv_detail::load_x<WeightFormat::q8_0_split, A>(p, c);
#pragma unroll
      for (int j = 0; j < RowsPerWarp; ++j) {
        const int r = r0 + j;  // rows past the block's end read staged bytes never written; their sums are dropped
        const gemv_detail::WChunk w{*reinterpret_cast<const int4*>(s_qs + static_cast<size_t>(r) * p.k + c * 16),
                                    s_scale[static_cast<size_t>(r) * (p.k / kQ8Block) + c / 2]};
        acc[j] += gemv_detail::dot_chunk<WeightFormat::q8_0_split, A>(w, x);
      }
    }
  }
  gemv_detail::reduce_slices(acc, partial, warp, slice, lane, Split);
  if (lane != 0 || slice != 0) return;
#pragma unroll
  for (int j = 0; j < RowsPerWarp; ++j) {
    if (r0 + j >= rows) break;
    const int2 at = gemv_staged_detail::locate_row(p, row0 + r0 + j);
    const GemvPart& pt = p.parts[at.x];
    float y = acc[j];
    if (pt.bias != nullptr) y += pt.bias[at.y];
    if (pt.residual != nullptr) y += pt.residual[at.y];
    pt.y[at.y] = y;
  }
}

namespace gemv_staged_detail {

// The largest dynamic shared memory a block of this device may opt in to.
inline int max_optin_smem() {
  static const int bytes = [] {
    int device = 0, value = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return 0;
    if (cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) return 0;
    return value;
  }();
  return bytes;
}

template <Activation A, int Split, int RowsPerWarp>
cudaError_t launch_split(const GemvParams& p, int rows, cudaStream_t stream) {
  const size_t smem = static_cast<size_t>(gemv_staged_smem_bytes(p.k, Split, RowsPerWarp));
  if (smem + kGemvStagedStaticSmem > static_cast<size_t>(max_optin_smem())) return invalid_launch();
  static const cudaError_t attr = cudaFuncSetAttribute(gemv_staged_kernel<A, Split, RowsPerWarp>,
                                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                       max_optin_smem() - kGemvStagedStaticSmem);
  if (attr != cudaSuccess) return attr;
  const int grid = ceil_div(rows, gemv_staged_rows_a_block(Split, RowsPerWarp));
  return launch_kernel(gemv_staged_kernel<A, Split, RowsPerWarp>, static_cast<unsigned>(grid), dim3(kGemvStagedWarps * kWarpSize),
                       smem, stream, p);
}

}  // namespace gemv_staged_detail

// p as for launch_gemv<q8_0_split, A, RowsPerWarp, false>, with p.split_k
// the warps a row group (1, 2 or 4). Refuses (cudaErrorInvalidValue) shapes
// it cannot take. Code built for, or a device below, sm_90 (no bulk copies
// or mbarrier byte counts) runs the register GEMV with the same parameters.
template <Activation A, int RowsPerWarp>
cudaError_t launch_gemv_staged(const GemvParams& p, cudaStream_t stream) {
  if (!cluster_launches_enabled()) return launch_gemv<WeightFormat::q8_0_split, A, RowsPerWarp, false>(p, stream);
  if (!gemv_staged_k_ok(p.k)) return invalid_launch();
  if (p.n_parts < 1 || p.n_parts > kGemvMaxParts) return invalid_launch();
  if (!aligned16(p.x_qs) || p.x_d == nullptr) return invalid_launch();
  if (A == Activation::int8x2 && (p.x_lo == nullptr || !aligned16(p.x_lo))) return invalid_launch();
  int rows = 0;
  for (int q = 0; q < p.n_parts; ++q) {
    if (p.parts[q].rows <= 0 || !aligned16(p.parts[q].w) || p.parts[q].y == nullptr) return invalid_launch();
    rows += p.parts[q].rows;
  }
  switch (p.split_k) {
    case 1: return gemv_staged_detail::launch_split<A, 1, RowsPerWarp>(p, rows, stream);
    case 2: return gemv_staged_detail::launch_split<A, 2, RowsPerWarp>(p, rows, stream);
    case 4: return gemv_staged_detail::launch_split<A, 4, RowsPerWarp>(p, rows, stream);
    default: return invalid_launch();
  }
}

}  // namespace lanec::kernels
