// The whole SwiGLU feed-forward block of one decode step in one launch:
//   y += W_down q(silu(W_gate x) * (W_up x))
// for q8_0_split gate/up weights, two-word int8 activations (x and the
// SwiGLU output q(.), blocks.h) and the down weights in the q8_0_cols
// layout below. y holds the residual stream before the launch and the sum
// after it (the residual add is the accumulation itself).
//
// Why one launch: the chain gate/up GEMV -> SwiGLU quantize -> down GEMV
// has two dependent launch boundaries, each a grid-wide wait. Here each
// block owns Chunks 32-element blocks of the intermediate vector: it forms
// their gate and up values, their int8 words, and their whole contribution
// to every output row (the down GEMV split over its k by intermediate
// block), which it adds to y with atomics. No block waits for another.
// The price: the output is a sum of ffn/32 atomically added terms per row,
// in no fixed order, so it is not bit-reproducible from run to run (the
// terms themselves are: the gate/up sums, the SwiGLU and its int8 words are
// formed exactly as the chain forms them).
#pragma once

#include "common.cuh"
#include "gemv.cuh"
#include "quantize.cuh"
#include "repack.cuh"

namespace lanec::kernels {

// lanec "Q8_0 cols" layout of a [rows, k] Q8_0 matrix (rows a multiple of
// 4): for each 32-column block j, the int8 values of all rows in 8 planes
// of 16-byte pieces, piece (row % 4) * 2 + half of row group row / 4 at
// ((j * 8 + piece) * rows / 4 + row / 4) * 16; after all rows * k values,
// the f16 scales [k/32][rows]. A thread owning a row group reads its
// 4 rows x 32 values as 8 loads that are contiguous across the warp.
inline uint64_t q8_0_cols_bytes(uint64_t rows, uint64_t k) { return q8_0_split_bytes(rows, k); }
constexpr int kQ8ColsPieces = 8;  // 16-byte pieces of a 4-row group's 32 columns

struct RepackQ8_0ColsParams {
  const void* src;  // [rows, k/32] BlockQ8_0 (GGUF)
  void* dst;        // q8_0_cols_bytes(rows, k) bytes
  int rows;         // a multiple of 4
  int k;            // a multiple of 32
};

// One thread per 32-element block, as repack_q8_0_kernel: load time only.
__global__ void __launch_bounds__(kRepackThreads)
    repack_q8_0_cols_kernel(const __grid_constant__ RepackQ8_0ColsParams p) {
  pdl_wait();
  const size_t blocks_per_row = static_cast<size_t>(p.k / kQ8Block);
  const size_t n_blocks = static_cast<size_t>(p.rows) * blocks_per_row;
  const size_t groups = static_cast<size_t>(p.rows / 4);
  const uint8_t* src = static_cast<const uint8_t*>(p.src);
  uint8_t* dst = static_cast<uint8_t*>(p.dst);
  uint16_t* scales = reinterpret_cast<uint16_t*>(dst + static_cast<size_t>(p.rows) * p.k);
  for (size_t b = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; b < n_blocks;
       b += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t row = b / blocks_per_row, j = b % blocks_per_row;
    const uint8_t* blk = src + b * sizeof(BlockQ8_0);
    scales[j * p.rows + row] = static_cast<uint16_t>(blk[0] | (blk[1] << 8));
    for (int half = 0; half < 2; ++half) {
      const size_t piece = (row % 4) * 2 + half;
      uint8_t* out = dst + ((j * kQ8ColsPieces + piece) * groups + row / 4) * 16;
      for (int e = 0; e < 16; ++e) out[e] = blk[2 + half * 16 + e];
    }
  }
}

inline cudaError_t launch_repack_q8_0_cols(const RepackQ8_0ColsParams& p, cudaStream_t stream) {
  if (p.rows <= 0 || p.rows % 4 != 0 || p.k <= 0 || p.k % kQ8Block != 0) return invalid_launch();
  const size_t n_blocks = static_cast<size_t>(p.rows) * (p.k / kQ8Block);
  const size_t grid = (n_blocks + kRepackThreads - 1) / kRepackThreads;
  return launch_kernel(repack_q8_0_cols_kernel, static_cast<unsigned>(grid < 65535 ? grid : 65535), kRepackThreads,
                       0, stream, p);
}

struct FfnParams {
  const void* gate;    // q8_0_split [ffn, hidden]
  const void* up;      // q8_0_split [ffn, hidden]
  const void* down;    // q8_0_cols [hidden, ffn]
  const int8_t* x_qs;  // [hidden] two-word int8 input
  const int8_t* x_lo;  // [hidden]
  const float* x_d;    // [hidden/32]
  float* y;            // [hidden]: the residual stream, the block sums added in place
  int hidden;          // a multiple of 32
  int ffn;             // a multiple of 32 x Chunks
};

// Whether, with PreloadDown and more than one intermediate block, each
// thread loads its first group's second down-weight chunk right after its
// gate/up loop, before the sums' reductions and the SwiGLU's barriers,
// instead of in the down loop after them: the load's latency then overlaps
// those steps (1.7B +0.1 to +0.6 % a token in three calls on an H100,
// h100-2026-12-07j). The same for the first group without PreloadDown (8B)
// measured -0.2 %, so that form keeps its loads in the down loop.
// -DLANEC_FFN_DOWN_AFTER_LOOP=0 turns it off, to time it again.
#ifndef LANEC_FFN_DOWN_AFTER_LOOP
#define LANEC_FFN_DOWN_AFTER_LOOP 1
#endif
constexpr bool kFfnDownAfterLoop = LANEC_FFN_DOWN_AFTER_LOOP != 0;

namespace ffn_detail {

// The activation chunk c (16 values) of the two-word input.
__device__ __forceinline__ gemv_detail::XChunk<WeightFormat::q8_0_split, Activation::int8x2> load_x(
    const FfnParams& p, int c) {
  return gemv_detail::load_x_int8<WeightFormat::q8_0_split, Activation::int8x2>(p.x_qs, p.x_lo, p.x_d, c);
}

// One row group's 8 pieces and 4 scales of down-weight block j.
struct DownGroup {
  int4 piece[kQ8ColsPieces];
  uint2 scales;
};

__device__ __forceinline__ DownGroup load_down(const FfnParams& p, int j, int group) {
  const int groups = p.hidden / 4;
  const int4* planes = reinterpret_cast<const int4*>(static_cast<const uint8_t*>(p.down) +
                                                     static_cast<size_t>(j) * kQ8Block * p.hidden);
  DownGroup g;
#pragma unroll
  for (int i = 0; i < kQ8ColsPieces; ++i) g.piece[i] = load_streamed<kStreamNoL1>(planes + i * groups + group);
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(static_cast<const uint8_t*>(p.down) +
                                                             static_cast<size_t>(p.hidden) * p.ffn);
  g.scales = load_streamed<kStreamNoL1>(reinterpret_cast<const uint2*>(scales + static_cast<size_t>(j) * p.hidden) +
                                        group);
  return g;
}

// The block's int8 words of one intermediate block, in shared memory.
struct ActBlock {
  int4 q[2];
  int4 lo[2];
  float d;
};

// The 4 rows' terms of one down-weight block, each 16-value half formed as
// the GEMV's dot_chunk forms it (so a term matches the chain's bit for bit).
__device__ __forceinline__ void add_down_terms(const DownGroup& g, const ActBlock& a, float (&acc)[4]) {
  const float xd = a.d * (1.0f / 254.0f);
  const uint16_t s[4] = {static_cast<uint16_t>(g.scales.x & 0xffffu), static_cast<uint16_t>(g.scales.x >> 16),
                         static_cast<uint16_t>(g.scales.y & 0xffffu), static_cast<uint16_t>(g.scales.y >> 16)};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const float d = f16_bits_to_f32(s[r]);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int4 w = g.piece[r * 2 + h];
      const int sum = 254 * gemv_detail::dp4a16(w, a.q[h]) + gemv_detail::dp4a16(w, a.lo[h]);
      acc[r] += d * xd * static_cast<float>(sum);
    }
  }
}

__device__ __forceinline__ void add_to_output(float* y, int group, const float (&acc)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(y) + group, make_float4(acc[0], acc[1], acc[2], acc[3]));
#else
#pragma unroll
  for (int r = 0; r < 4; ++r) atomicAdd(y + 4 * group + r, acc[r]);
#endif
}

}  // namespace ffn_detail

// Thread mapping: Warps warps a block, Chunks intermediate blocks of 32 a
// block (grid ffn / (32 Chunks)). Gate/up: warp w takes the
// 32 Chunks / Warps consecutive intermediate indices from w's share, their
// gate and up rows (lane l reads chunks l, l + 32, ... of each, as the GEMV
// at split 1, so the sums are the GEMV's). Warps 0..Chunks-1 then form one
// intermediate block's SwiGLU and int8 words each, into shared memory. Down:
// thread t takes row groups t, t + threads, ...; its first group's weights
// load before the wait, with the first gate/up chunks (PreloadDown), and
// its second chunk after its gate/up loop (kFfnDownAfterLoop). Ahead: the gate/up
// trips a lane loads before the wait (1, or 2: at hidden 1024 every chunk,
// so no weight load is left between the wait and the SwiGLU); the sums
// are the same either way. Split 2: a cluster of two blocks shares the
// intermediate blocks, each summing half of the gate/up chunks (the halves
// meet in both blocks' shared memory and add in a fixed order, so both form
// the same SwiGLU words) and taking half of the down rows: twice the
// blocks, for shapes whose intermediate blocks leave SMs idle (0.6B: 96).
template <int Chunks, int Warps, int MinBlocks, bool PreloadDown, int Ahead = 1, int Split = 1>
__global__ void __launch_bounds__(Warps* kWarpSize, MinBlocks) ffn_kernel(const __grid_constant__ FfnParams p) {
  static_assert(Ahead == 1 || Ahead == 2, "one or two gate/up trips before the wait");
  static_assert(Split == 1 || Split == 2, "one block or a cluster of two a set of intermediate blocks");
  if constexpr (Split > 1) cluster_arrive_relaxed();  // waited on before the first write to the peer
  constexpr WeightFormat F = WeightFormat::q8_0_split;
  constexpr Activation A = Activation::int8x2;
  constexpr int kInter = Chunks * kQ8Block;
  constexpr int kPairs = kInter / Warps;  // gate/up row pairs a warp
  static_assert(kPairs >= 1 && kInter % Warps == 0, "whole row pairs a warp");
  static_assert(Warps >= Chunks, "a warp for each intermediate block's quantize");
  constexpr int kRows = 2 * kPairs;
  __shared__ float s_gate[Split][kInter], s_up[Split][kInter];  // each block's partial sums
  __shared__ ffn_detail::ActBlock s_act[Chunks];

  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int set = blockIdx.x / Split, rank = blockIdx.x % Split;
  const int first = set * kInter + warp * kPairs;
  // This block's chunks of each gate/up row: [c_base, c_base + n_chunks).
  const int n_chunks = p.hidden / gemv_chunk_elems<F>() / Split;
  const int c_base = rank * n_chunks;
  const uint8_t* row_ptr[kRows];
  const uint16_t* scale_ptr[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    GemvPart part{r < kPairs ? p.gate : p.up, nullptr, nullptr, nullptr, p.ffn};
    gemv_detail::row_pointers<F>(part, p.hidden, first + r % kPairs, row_ptr[r], scale_ptr[r]);
  }
  // The lane's first Ahead trips of every row, loaded before the wait.
  gemv_detail::WChunk ahead[Ahead][kRows];
#pragma unroll
  for (int t = 0; t < Ahead; ++t)
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (lane + t * kWarpSize < n_chunks)
        ahead[t][r] = gemv_detail::load_w<F>(row_ptr[r], scale_ptr[r], c_base + lane + t * kWarpSize);
  const int j0 = set * Chunks;
  // This block's 4-row groups of the down weights: [g_base, groups).
  const int groups_each = p.hidden / 4 / Split;
  const int g_base = rank * groups_each, groups = g_base + groups_each;
  const int group0 = g_base + threadIdx.x;
  ffn_detail::DownGroup down0{};
  if (PreloadDown && group0 < groups) down0 = ffn_detail::load_down(p, j0, group0);
  pdl_wait();
  // The down loop's second item, the first group's next chunk, loaded after
  // the gate/up loop (kFfnDownAfterLoop) where this thread has a group.
  constexpr int kThreads = Warps * kWarpSize;
  constexpr bool kLate = kFfnDownAfterLoop && PreloadDown && Chunks > 1;
  const bool has_late = kLate && group0 < groups;

  // Gate and up sums.
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
#pragma unroll
  for (int t = 0; t < Ahead; ++t) {
    if (lane + t * kWarpSize >= n_chunks) break;
    const auto x = ffn_detail::load_x(p, c_base + lane + t * kWarpSize);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float d = gemv_detail::dot_chunk<F, A>(ahead[t][r], x);
      acc[r] = t == 0 ? d : acc[r] + d;  // the first term as the GEMV starts its sum
    }
  }
  for (int c = c_base + lane + Ahead * kWarpSize; c < c_base + n_chunks; c += kWarpSize) {
    const auto x = ffn_detail::load_x(p, c);
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      acc[r] += gemv_detail::dot_chunk<F, A>(gemv_detail::load_w<F>(row_ptr[r], scale_ptr[r], c), x);
  }
  ffn_detail::DownGroup down_late{};
  if (has_late) down_late = ffn_detail::load_down(p, j0 + 1, group0);
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);
  if constexpr (Split > 1) cluster_wait();  // the peer has started: its shared memory may be written
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < kPairs; ++r) {
      const int i = warp * kPairs + r;
#pragma unroll
      for (int b = 0; b < Split; ++b) {  // this block's partials into every block's slot `rank`
        *(Split > 1 ? cluster_shared(&s_gate[rank][0], i, b) : &s_gate[rank][i]) = acc[r];
        *(Split > 1 ? cluster_shared(&s_up[rank][0], i, b) : &s_up[rank][i]) = acc[kPairs + r];
      }
    }
  }
  if constexpr (Split > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  // The SwiGLU and its int8 words, one intermediate block a warp.
  if (warp < Chunks) {
    const int i = warp * kQ8Block + lane;
    float g = s_gate[0][i], u = s_up[0][i];
#pragma unroll
    for (int b = 1; b < Split; ++b) {  // the partials in rank order: the same sums in every block
      g += s_gate[b][i];
      u += s_up[b][i];
    }
    const float v = silu(g) * u;
    float scale, r;
    q8_scales(warp_max(fabsf(v)), scale, r);
    const float q = r > 0.0f ? roundf(v * r) : 0.0f;
    reinterpret_cast<int8_t*>(s_act[warp].q)[lane] = static_cast<int8_t>(q);
    reinterpret_cast<int8_t*>(s_act[warp].lo)[lane] = quantize_low_word(v, q, scale, r);
    if (lane == 0) s_act[warp].d = scale;
  }
  __syncthreads();

  // The down projection's terms of this block's intermediate blocks.
  for (int group = group0; group < groups; group += kThreads) {
    float out[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int c = 0; c < Chunks; ++c) {
      const bool early = PreloadDown && c == 0 && group == group0;
      const bool late = has_late && c == 1 && group == group0;
      const ffn_detail::DownGroup g = early ? down0 : late ? down_late : ffn_detail::load_down(p, j0 + c, group);
      ffn_detail::add_down_terms(g, s_act[c], out);
    }
    ffn_detail::add_to_output(p.y, group, out);
  }
}

template <int Chunks, int Warps, int MinBlocks = 1, bool PreloadDown = true, int Ahead = 1, int Split = 1>
cudaError_t launch_ffn(const FfnParams& p, cudaStream_t stream) {
  constexpr int kThreads = Warps * kWarpSize;
  if (p.hidden <= 0 || p.hidden % kQ8Block != 0) return invalid_launch();
  if (p.ffn <= 0 || p.ffn % (Chunks * kQ8Block) != 0) return invalid_launch();
  const auto blocks = static_cast<unsigned>(p.ffn / (Chunks * kQ8Block));
  if (Split > 1 && (p.hidden % (32 * Split) != 0 || !cluster_launches_enabled())) return invalid_launch();
  return launch_kernel(ffn_kernel<Chunks, Warps, MinBlocks, PreloadDown, Ahead, Split>, blocks * Split, kThreads, 0,
                       stream, p, dim3(Split, 1, 1));
}

}  // namespace lanec::kernels
