// What a persistent decode step would cost on this GPU, measured before any
// planner work (docs/performance.md, "Measured and dropped: a persistent
// step": slower than the launch chain on every Qwen3 shape): one
// cooperative kernel of one 1024-thread block an SM runs a whole step of a
// Qwen3 shape, its dependent stages separated by grid-wide barriers, where
// the generated programs run 9 launches a layer (-DPS_THREADS=512: two
// blocks of 512 an SM).
//
// A layer is 5 stages, each ending in a barrier:
//   1. every block forms the int8 form of rms_norm(h) in its shared memory
//      (the norm computed redundantly, no launch of its own), then its warps
//      take Q/K/V rows (one warp a row);
//   2. attention stand-in: one warp a query head reads its q, k and v rows
//      and writes v scaled by a function of q.k (a context of one key: the
//      real attention, rope and the cache write are not modelled);
//   3. every block quantizes the attention output; output GEMV plus the
//      residual into h (split over the warps of a block where rows are few);
//   4. every block forms int8 rms_norm(h); gate/up rows in pairs, a warp
//      writing silu(g) * u;
//   5. every block quantizes that; down GEMV plus the residual into h.
// Then the final norm, the logits GEMV and one more barrier (the argmax's).
// Weights are q8_0 (int8 rows and an f16 scale a 32-element block, the
// q8_0_split byte count), distinct for every layer (more than the L2), with
// one-word int8 activations and dp4a, as the generated GEMVs stream them.
//
// Modes, each µs a step (median of 7 repeats of 20 steps):
//   persistent           the step as above;
//   persistent_prefetch  the same, each warp asking the L2 for its rows of the
//                        next GEMV stage (cp.async.bulk.prefetch.L2) before
//                        it arrives at the barrier;
//   persistent_preload   the same, each warp loading the first chunk of its
//                        rows of the next GEMV stage into registers between
//                        arriving at the barrier and waiting on it;
//   stages_only          the barriers and the per-block norms and quantizes,
//                        no GEMV rows: the step's floor without weights;
//   streamed             the same stages in a kernel of PS_STREAM_WARPS
//                        consumer warps and one producer warp a block, the
//                        producer copying the block's weights for the whole
//                        step into a ring of shared-memory slots ahead of the
//                        barriers ("the streamed step" below; docs/
//                        performance.md, "a persistent step streaming its
//                        weights": slower too). PS_STREAM_PROBE takes its
//                        copies or its arithmetic out to time the rest.
// The GEMV stages are first checked against a CPU dot product on random
// inputs; the three register GEMV modes must give the same logits bit for
// bit, and the streamed step's (another summation order) must be near them.
// Prints one JSON object.
//   nvcc -std=c++17 -O2 -arch=sm_90 [-DPS_MAX_K=3072] -o persistent_step bench/persistent_step.cu && ./persistent_step [0.6b|1.7b|8b]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "../kernels/bulk_copy.cuh"
#include "../kernels/common.cuh"

namespace {

using lanec::kernels::warp_sum;

// Threads a block (PS_THREADS: 1024, one block an SM, or 512, two; 64
// registers a thread either way).
#ifndef PS_THREADS
#define PS_THREADS 1024
#endif
constexpr int kThreads = PS_THREADS;
static_assert(kThreads == 512 || kThreads == 1024, "PS_THREADS is 512 or 1024");
constexpr int kBlocksPerSm = 1024 / kThreads;
constexpr int kWarps = kThreads / 32;
constexpr int kHeadDim = 128;
// Longest GEMV input: Qwen3-8B's down projection (-DPS_MAX_K=3072 for 0.6B
// alone keeps fewer values a thread in the norms).
#ifndef PS_MAX_K
#define PS_MAX_K 12288
#endif
constexpr int kMaxK = PS_MAX_K;
constexpr float kEps = 1e-6f;

struct Shape {
  const char* name;
  int d, n_head, n_kv, f, layers, vocab;
  int q() const { return n_head * kHeadDim; }
  int kv() const { return n_kv * kHeadDim; }
};

constexpr Shape kShapes[] = {
    {"0.6b", 1024, 16, 8, 3072, 28, 151936},
    {"1.7b", 2048, 16, 8, 6144, 28, 151936},
    {"8b", 4096, 32, 8, 12288, 36, 151936},
};

// One q8_0 matrix: rows of k int8 values, then an f16 scale a 32-block.
struct Matrix {
  const int8_t* qs;
  const __half* d;
  int rows, k;
};

struct Layer {
  Matrix qkv, o, gate_up, down;  // gate_up: row 2i is gate i, row 2i+1 up i
  const float* attn_norm;
  const float* ffn_norm;
};

enum Mode { kPersistent = 0, kPrefetch = 1, kStagesOnly = 2, kPreload = 3, kStreamed = 4 };

struct StepParams {
  const Layer* layers;
  int n_layers;
  Matrix logits_w;
  const float* out_norm;
  float* h;       // [d] residual stream
  float* qkv;     // [q + 2 kv]
  float* attn;    // [q]
  float* act;     // [f]
  float* logits;  // [vocab]
  unsigned* counter;
  unsigned epoch;  // barriers passed by earlier launches, times gridDim.x
  int n_head, n_kv;
  int mode;
};

// ---- building blocks ------------------------------------------------------------

struct BlockSync {
  __device__ void operator()() const { __syncthreads(); }
};

// A counter that only grows: round r of this launch completes when it holds
// epoch + r * gridDim.x (signed distance, so wrap-around is harmless). A
// block arrives once its writes are done (sync: the barrier of the threads
// that wrote) and may load constants (weights) before it waits.
template <typename Sync = BlockSync>
__device__ void grid_arrive(unsigned* counter, unsigned& target, Sync sync = {}) {
  sync();
  target += gridDim.x;
  if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}

template <typename Sync = BlockSync>
__device__ void grid_wait(const unsigned* counter, unsigned target, Sync sync = {}) {
  if (threadIdx.x == 0) {
    unsigned v;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
    } while (static_cast<int>(v - target) < 0);
  }
  sync();
}

template <typename Sync = BlockSync>
__device__ void grid_barrier(unsigned* counter, unsigned& target, Sync sync = {}) {
  grid_arrive(counter, target, sync);
  grid_wait(counter, target, sync);
}

// x (n <= kMaxK, a multiple of 32) into its int8 form in shared memory:
// rms_norm with weights g first when g is non-null, by the block's first
// Threads threads (sync: their barrier). Thread t holds elements
// t + Threads j, so each warp holds whole 32-element blocks.
template <int Threads, typename Sync>
__device__ void form_input_by(const float* x, const float* g, int n, int8_t* xq, float* xd, float* red, Sync sync) {
  constexpr int kPer = (kMaxK + Threads - 1) / Threads;
  constexpr int kFormWarps = Threads / 32;
  float v[kPer];
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = threadIdx.x + j * Threads;
    v[j] = i < n ? __ldcg(x + i) : 0.0f;
    ss += v[j] * v[j];
  }
  float scale = 1.0f;
  if (g != nullptr) {
    ss = warp_sum(ss);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = ss;
    sync();
    const int lane = threadIdx.x % 32;
    const float total = warp_sum(lane < kFormWarps ? red[lane] : 0.0f);  // every warp sums the partials itself
    scale = rsqrtf(total / n + kEps);
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int i = threadIdx.x + j * Threads;
    if (i >= n) break;
    float y = v[j] * scale * (g != nullptr ? __ldg(g + i) : 1.0f);
    float amax = fabsf(y);
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float d = amax / 127.0f;
    xq[i] = static_cast<int8_t>(__float2int_rn(d > 0.0f ? y / d : 0.0f));
    if (threadIdx.x % 32 == 0) xd[i / 32] = d;
  }
  sync();
}

__device__ void form_input(const float* x, const float* g, int n, int8_t* xq, float* xd, float* red) {
  form_input_by<kThreads>(x, g, n, xq, xd, red, BlockSync{});
}

// Warps a row group takes so that the groups fill the grid's warps, keeping
// at least one 16-byte chunk a lane.
__device__ int stage_split(int groups, int k) {
  const int warps = gridDim.x * kWarps;
  int split = 1;
  while (split < kWarps && groups * split * 2 <= warps && k / 16 >= 32 * split * 2) split *= 2;
  return split;
}

// Exact int32 dot of weight chunk a with chunk c of the int8 input, as f32.
__device__ __forceinline__ float chunk_dot(const int4& a, const int8_t* xq, int c) {
  const int4 b = *reinterpret_cast<const int4*>(xq + c * 16);
  int s = __dp4a(a.x, b.x, 0);
  s = __dp4a(a.y, b.y, s);
  s = __dp4a(a.z, b.z, s);
  return static_cast<float>(__dp4a(a.w, b.w, s));
}

// The first weight chunk of this warp's rows in a GEMV stage's first pass,
// loaded into registers between arriving at a barrier and waiting on it
// (the generated GEMVs load theirs before pdl_wait()).
struct FirstChunks {
  int4 a[2];
  float d[2];
};

// Where a warp works in a GEMV stage: its split, slice and first-pass group.
struct WarpPlace {
  int groups, split, slice, per_block, group0, c0, chunks;
};

template <bool Pair>
__device__ WarpPlace warp_place(const Matrix& m) {
  WarpPlace w;
  w.groups = m.rows / (Pair ? 2 : 1);
  w.split = stage_split(w.groups, m.k);
  const int warp = threadIdx.x / 32;
  w.per_block = kWarps / w.split;
  w.slice = warp % w.split;
  w.group0 = blockIdx.x * w.per_block + warp / w.split;
  w.c0 = w.slice * 32 + threadIdx.x % 32;
  w.chunks = m.k / 16;
  return w;
}

template <bool Pair>
__device__ FirstChunks load_first_chunks(const Matrix& m) {
  const WarpPlace w = warp_place<Pair>(m);
  FirstChunks f{};
  if (w.group0 >= w.groups || w.c0 >= w.chunks) return f;
#pragma unroll
  for (int r = 0; r < (Pair ? 2 : 1); ++r) {
    const size_t row = static_cast<size_t>(w.group0) * (Pair ? 2 : 1) + r;
    f.a[r] = __ldg(reinterpret_cast<const int4*>(m.qs + row * m.k) + w.c0);
    f.d[r] = __half2float(__ldg(m.d + row * (m.k / 32) + w.c0 / 2));
  }
  return f;
}

// rows of m (Pair: gate/up pairs) against the int8 input in shared memory;
// y[group] = dot (+ residual), or silu(gate) * up for pairs. All threads of
// the block call it (the same number of passes in every block).
template <bool Pair>
__device__ void gemv_stage(const Matrix& m, const int8_t* xq, const float* xd, float* y, const float* residual,
                           float (*partial)[2], const FirstChunks* first = nullptr) {
  constexpr int kRows = Pair ? 2 : 1;
  const WarpPlace place = warp_place<Pair>(m);
  const int groups = place.groups, split = place.split, per_block = place.per_block, slice = place.slice;
  const int chunks = place.chunks;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int passes = (groups + per_block * gridDim.x - 1) / (per_block * gridDim.x);
  for (int pass = 0; pass < passes; ++pass) {
    const int group = (pass * gridDim.x + blockIdx.x) * per_block + warp / split;
    float acc[kRows] = {};
    if (group < groups) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const size_t row = static_cast<size_t>(group) * kRows + r;
        const int4* w = reinterpret_cast<const int4*>(m.qs + row * m.k);
        const __half* wd = m.d + row * (m.k / 32);
        // Two chunks a lane in flight: one block of 32 warps an SM holds half
        // the warps the generated GEMVs run with.
        const int stride = 32 * split;
        int c = slice * 32 + lane;
        if (pass == 0 && first != nullptr && c < chunks) {
          acc[r] += chunk_dot(first->a[r], xq, c) * first->d[r] * xd[c / 2];
          c += stride;
        }
        for (; c < chunks; c += 2 * stride) {
          const bool second = c + stride < chunks;
          const int4 a0 = __ldg(w + c);
          const int4 a1 = second ? __ldg(w + c + stride) : make_int4(0, 0, 0, 0);
          const float d0 = __half2float(__ldg(wd + c / 2));
          const float d1 = second ? __half2float(__ldg(wd + (c + stride) / 2)) : 0.0f;
          acc[r] += chunk_dot(a0, xq, c) * d0 * xd[c / 2];
          if (second) acc[r] += chunk_dot(a1, xq, c + stride) * d1 * xd[(c + stride) / 2];
        }
        acc[r] = warp_sum(acc[r]);
      }
    }
    if (split > 1) {
      if (lane == 0) partial[warp][0] = acc[0], partial[warp][1] = kRows > 1 ? acc[kRows - 1] : 0.0f;
      __syncthreads();
      if (slice == 0)
        for (int j = 1; j < split; ++j) {
          acc[0] += partial[warp + j][0];
          if (kRows > 1) acc[kRows - 1] += partial[warp + j][1];
        }
      __syncthreads();
    }
    if (group < groups && slice == 0 && lane == 0) {
      float out = acc[0];
      if (Pair) out = acc[0] / (1.0f + __expf(-acc[0])) * acc[kRows - 1];
      if (residual != nullptr) out += __ldcg(residual + group);
      y[group] = out;
    }
  }
}

// This warp's rows of the first pass of the next GEMV stage, asked of the L2.
template <bool Pair>
__device__ void prefetch_stage(const Matrix& m) {
  constexpr int kRows = Pair ? 2 : 1;
  const WarpPlace w = warp_place<Pair>(m);
  const int lane = threadIdx.x % 32;
  if (w.group0 >= w.groups || w.slice != 0 || lane >= kRows) return;
  const size_t row = static_cast<size_t>(w.group0) * kRows + lane;
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(m.qs + row * m.k), "r"(m.k) : "memory");
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(m.d + row * (m.k / 32)), "r"(m.k / 16) : "memory");
}

// Attention stand-in: one warp a query head (see the header), over the
// first warps_a_block warps of every block.
__device__ void attention_stand_in(const StepParams& p, int warps_a_block = kWarps) {
  const int warp = blockIdx.x * warps_a_block + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp >= p.n_head) return;
  const int q_dim = p.n_head * kHeadDim, kv_dim = p.n_kv * kHeadDim;
  const int kvh = warp / (p.n_head / p.n_kv);
  const float4 q = __ldcg(reinterpret_cast<const float4*>(p.qkv + warp * kHeadDim) + lane);
  const float4 k = __ldcg(reinterpret_cast<const float4*>(p.qkv + q_dim + kvh * kHeadDim) + lane);
  const float4 v = __ldcg(reinterpret_cast<const float4*>(p.qkv + q_dim + kv_dim + kvh * kHeadDim) + lane);
  const float s = warp_sum(q.x * k.x + q.y * k.y + q.z * k.z + q.w * k.w);
  const float w = 1.0f / (1.0f + __expf(-s * 1e-3f));
  reinterpret_cast<float4*>(p.attn + warp * kHeadDim)[lane] = make_float4(v.x * w, v.y * w, v.z * w, v.w * w);
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm) step_kernel(const StepParams p) {
  __shared__ alignas(16) int8_t xq[kMaxK];
  __shared__ float xd[kMaxK / 32];
  __shared__ float red[kWarps];
  __shared__ float partial[kWarps][2];
  unsigned target = p.epoch;
  const bool work = p.mode != kStagesOnly, prefetch = p.mode == kPrefetch, preload = p.mode == kPreload;
  const int d = p.layers[0].qkv.k, q_dim = p.layers[0].o.k, f = p.layers[0].down.k;
  FirstChunks fc{};
  const FirstChunks* first = preload ? &fc : nullptr;
  if (preload) fc = load_first_chunks<false>(p.layers[0].qkv);
  for (int l = 0; l < p.n_layers; ++l) {
    const Layer& L = p.layers[l];
    form_input(p.h, L.attn_norm, d, xq, xd, red);
    if (work) gemv_stage<false>(L.qkv, xq, xd, p.qkv, nullptr, partial, first);
    if (prefetch) prefetch_stage<false>(L.o);
    grid_arrive(p.counter, target);
    if (preload) fc = load_first_chunks<false>(L.o);
    grid_wait(p.counter, target);
    attention_stand_in(p);
    grid_barrier(p.counter, target);
    form_input(p.attn, nullptr, q_dim, xq, xd, red);
    if (work) gemv_stage<false>(L.o, xq, xd, p.h, p.h, partial, first);
    if (prefetch) prefetch_stage<true>(L.gate_up);
    grid_arrive(p.counter, target);
    if (preload) fc = load_first_chunks<true>(L.gate_up);
    grid_wait(p.counter, target);
    form_input(p.h, L.ffn_norm, d, xq, xd, red);
    if (work) gemv_stage<true>(L.gate_up, xq, xd, p.act, nullptr, partial, first);
    if (prefetch) prefetch_stage<false>(L.down);
    grid_arrive(p.counter, target);
    if (preload) fc = load_first_chunks<false>(L.down);
    grid_wait(p.counter, target);
    form_input(p.act, nullptr, f, xq, xd, red);
    if (work) gemv_stage<false>(L.down, xq, xd, p.h, p.h, partial, first);
    const bool last = l + 1 == p.n_layers;
    if (prefetch) prefetch_stage<false>(last ? p.logits_w : p.layers[l + 1].qkv);
    grid_arrive(p.counter, target);
    if (preload) fc = last ? load_first_chunks<false>(p.logits_w) : load_first_chunks<false>(p.layers[l + 1].qkv);
    grid_wait(p.counter, target);
  }
  form_input(p.h, p.out_norm, d, xq, xd, red);
  if (work) gemv_stage<false>(p.logits_w, xq, xd, p.logits, nullptr, partial, first);
  grid_barrier(p.counter, target);
}

// ---- the streamed step ---------------------------------------------------------
//
// The same stages, with every block's weights for the whole step streamed by
// one producer warp into a ring of shared-memory slots (cp.async.bulk,
// completion on an mbarrier a slot), decoupled from the grid barriers: the
// producer runs as far ahead as the ring allows, so the DRAM keeps streaming
// through the barriers, the norms and the attention stand-in. The consumer
// warps take each slot's rows from shared memory. Block b owns a contiguous
// range of every matrix's rows (row pairs for gate/up), and its weights for
// the step are one contiguous stream in global memory, tile after tile:
// a tile's rows of int8 values, then their f16 scales.

#ifndef PS_STREAM_WARPS
#define PS_STREAM_WARPS 16
#endif
constexpr int kStreamWarps = PS_STREAM_WARPS;  // consumer warps; one more warp produces
constexpr int kStreamThreads = kStreamWarps * 32;
static_assert(kStreamWarps >= 1 && kStreamWarps <= 31, "PS_STREAM_WARPS is 1..31");
#ifndef PS_SLOT_KB
#define PS_SLOT_KB 16
#endif
#ifndef PS_SLOTS
#define PS_SLOTS 12
#endif
constexpr int kSlotBytes = PS_SLOT_KB * 1024;
constexpr int kSlots = PS_SLOTS;
// PS_STREAM_PROBE: 0 the step; 1 consumers take no rows (the stream's own
// rate); 2 the producer copies nothing (the consumers' own rate); 3 neither
// copies nor rows (the streamed kernel's floor). Probes give meaningless
// logits, so their runs fail the check.
#ifndef PS_STREAM_PROBE
#define PS_STREAM_PROBE 0
#endif
constexpr int kProbeNoRows = 1, kProbeNoCopy = 2, kProbeFloor = 3;
constexpr int kStreamProbe = PS_STREAM_PROBE;

__host__ __device__ constexpr size_t row_bytes(int k) { return static_cast<size_t>(k) * 17 / 16; }
// Rows a tile: as many as a slot holds (pairs: whole pairs).
__host__ __device__ constexpr int tile_rows(int k, bool pair) {
  return static_cast<int>(kSlotBytes / row_bytes(k)) / (pair ? 2 : 1) * (pair ? 2 : 1);
}

// Block b's rows [lo, hi) of a matrix (pairs: whole row pairs).
struct RowSpan {
  int lo, hi;
};
__host__ __device__ inline RowSpan block_rows(int rows, bool pair, int b, int blocks) {
  const int per = pair ? 2 : 1;
  const long long groups = rows / per;
  return {static_cast<int>(groups * b / blocks) * per, static_cast<int>(groups * (b + 1) / blocks) * per};
}

// One GEMV stage of the step as the stream sees it.
struct StreamStage {
  int rows, k;
  bool pair;
};

// The step's GEMV stages in order: per layer Q/K/V, output, gate/up, down;
// then the logits.
std::vector<StreamStage> stream_stages(const Shape& s) {
  std::vector<StreamStage> out;
  for (int l = 0; l < s.layers; ++l) {
    out.push_back({s.q() + 2 * s.kv(), s.d, false});
    out.push_back({s.d, s.q(), false});
    out.push_back({2 * s.f, s.d, true});
    out.push_back({s.d, s.f, false});
  }
  out.push_back({s.vocab, s.d, false});
  return out;
}

// Bytes of block b's stream for one stage.
__host__ __device__ inline size_t stage_stream_bytes(const StreamStage& st, int b, int blocks) {
  const RowSpan r = block_rows(st.rows, st.pair, b, blocks);
  return static_cast<size_t>(r.hi - r.lo) * row_bytes(st.k);
}

// Copies block b's tiles of matrix m into its stream at dst (one launch a
// stage, one block a stream block).
__global__ void pack_stage(Matrix m, bool pair, char* stream, const size_t* cursor) {
  const RowSpan span = block_rows(m.rows, pair, blockIdx.x, gridDim.x);
  char* dst = stream + cursor[blockIdx.x];
  const int tr = tile_rows(m.k, pair);
  for (int r = span.lo; r < span.hi; r += tr) {
    const int n = min(tr, span.hi - r);
    const size_t qs_bytes = static_cast<size_t>(n) * m.k, d_bytes = qs_bytes / 16;
    const int4* qs = reinterpret_cast<const int4*>(m.qs + static_cast<size_t>(r) * m.k);
    const int4* d = reinterpret_cast<const int4*>(m.d + static_cast<size_t>(r) * (m.k / 32));
    for (size_t i = threadIdx.x; i < qs_bytes / 16; i += blockDim.x) reinterpret_cast<int4*>(dst)[i] = qs[i];
    for (size_t i = threadIdx.x; i < d_bytes / 16; i += blockDim.x) reinterpret_cast<int4*>(dst + qs_bytes)[i] = d[i];
    dst += qs_bytes + d_bytes;
  }
}

struct StreamParams {
  const StreamStage* stages;
  int n_stages;
  const char* stream;
  const size_t* stream_base;  // [gridDim.x]: where block b's stream starts
};

// The consumer warps' barrier (named barrier 1: the producer warp is not in it).
struct ConsumerSync {
  __device__ void operator()() const { asm volatile("bar.sync 1, %0;" ::"r"(kStreamThreads) : "memory"); }
};

// The ring: slot s holds kSlotBytes; full[s] completes when its copy has
// landed, empty[s] when every consumer warp is done with it.
struct Ring {
  char* slots;
  uint64_t* full;
  uint64_t* empty;
  int slot = 0;
  unsigned phase = 0;
  __device__ void advance() {
    if (++slot == kSlots) slot = 0, phase ^= 1u;
  }
};

// `count` arrivals on bar at once.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar, unsigned count = 1) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;" ::"r"(lanec::kernels::bulk::smem_addr(bar)), "r"(count)
               : "memory");
}

// PS_WAIT: 0 every lane waits with try_wait (which may suspend the thread
// until the phase completes); 1 lane 0 polls with test_wait (never
// suspends), then the warp syncs (lone: the caller is one thread).
#ifndef PS_WAIT
#define PS_WAIT 0
#endif
__device__ __forceinline__ void ring_wait(uint64_t* bar, unsigned parity, bool lone = false) {
  if (PS_WAIT == 0) {
    lanec::kernels::bulk::wait(bar, parity);
    return;
  }
  if (lone || threadIdx.x % 32 == 0) {
    uint32_t done = 0;
    while (!done)
      asm volatile(
          "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
          : "=r"(done)
          : "r"(lanec::kernels::bulk::smem_addr(bar)), "r"(parity)
          : "memory");
  }
  if (!lone) __syncwarp();
}

// The producer: one lane walks the step's tiles in order and copies each
// into the next free slot.
__device__ void produce_stream(const StreamParams& sp, Ring ring) {
  if (kStreamProbe == kProbeFloor) return;
  const char* src = sp.stream + sp.stream_base[blockIdx.x];
  for (int s = 0; s < sp.n_stages; ++s) {
    const StreamStage st = sp.stages[s];
    const RowSpan span = block_rows(st.rows, st.pair, blockIdx.x, gridDim.x);
    const int tr = tile_rows(st.k, st.pair);
    for (int r = span.lo; r < span.hi; r += tr) {
      const uint32_t bytes = static_cast<uint32_t>(min(tr, span.hi - r) * row_bytes(st.k));
      ring_wait(&ring.empty[ring.slot], ring.phase ^ 1u, true);
      if (kStreamProbe == kProbeNoCopy) {
        mbarrier_arrive(&ring.full[ring.slot]);
      } else {
        lanec::kernels::bulk::arrive_expect(&ring.full[ring.slot], bytes);
        lanec::kernels::bulk::copy(ring.slots + static_cast<size_t>(ring.slot) * kSlotBytes, src, bytes,
                                   &ring.full[ring.slot]);
      }
      src += bytes;
      ring.advance();
    }
  }
}

// One GEMV stage of the consumers: this block's rows of stage st from the
// ring against the int8 input in shared memory, y[row] = dot (+ residual),
// or y[pair] = silu(gate) * up. Row group g (a row, or a gate/up pair) of
// the block goes to warp g % kStreamWarps, whose lanes sum all its chunks
// before one warp reduction (a reduction a chunk costs more than the chunk).
// Every warp waits on every tile and releases it: a parity wait tells only
// two phases apart, so no warp may fall a pass of the ring behind.
__device__ void consume_stage(const StreamStage st, Ring& ring, const int8_t* xq, const float* xd, float* y,
                              const float* residual) {
  const RowSpan span = block_rows(st.rows, st.pair, blockIdx.x, gridDim.x);
  const int per = st.pair ? 2 : 1, n_rows = span.hi - span.lo, k = st.k;
  const int tr = tile_rows(k, st.pair), cpr = k / 16;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r0 = 0; kStreamProbe != kProbeFloor && r0 < n_rows; r0 += tr, ring.advance()) {
    const int n = min(tr, n_rows - r0), g0 = r0 / per, groups = n / per;
    ring_wait(&ring.full[ring.slot], ring.phase);
    const char* tile = ring.slots + static_cast<size_t>(ring.slot) * kSlotBytes;
    const __half* scales = reinterpret_cast<const __half*>(tile + static_cast<size_t>(n) * k);
    // This warp's first group in the tile: the smallest j with (g0 + j) % W == warp.
    const int first = (warp - g0 % kStreamWarps + kStreamWarps) % kStreamWarps;
    for (int j = first; kStreamProbe != kProbeNoRows && j < groups; j += kStreamWarps) {
      float sum[2] = {};
      for (int r = 0; r < per; ++r) {
        const int4* row = reinterpret_cast<const int4*>(tile + static_cast<size_t>(j * per + r) * k);
        const __half* row_d = scales + (j * per + r) * (k / 32);
#pragma unroll 4
        for (int c = lane; c < cpr; c += 32) sum[r] += chunk_dot(row[c], xq, c) * __half2float(row_d[c / 2]) * xd[c / 2];
        sum[r] = warp_sum(sum[r]);
      }
      if (lane == 0) {
        const int out_i = span.lo / per + g0 + j;
        float out = st.pair ? sum[0] / (1.0f + __expf(-sum[0])) * sum[1] : sum[0];
        if (residual != nullptr) out += __ldcg(residual + out_i);
        y[out_i] = out;
      }
    }
    __syncwarp();
    if (lane == 0) mbarrier_arrive(&ring.empty[ring.slot]);
  }
}

// Shared memory of the streamed step: the ring, its barriers, the int8 input
// and the norm's partial sums.
constexpr size_t kStreamSmemBytes =
    static_cast<size_t>(kSlots) * kSlotBytes + 2 * kSlots * sizeof(uint64_t) + kMaxK + kMaxK / 32 * sizeof(float) + 32 * sizeof(float);

// A streamed block's shared memory, carved: the ring, its barriers, the
// int8 input and the norm's partial sums.
struct StreamBlock {
  Ring ring;
  int8_t* xq;
  float* xd;
  float* red;
};

// Carves the shared memory and initializes the ring's barriers; the producer
// warp then streams the step's tiles and gets false, the consumers get true.
__device__ bool start_streamed_block(char* smem, const StreamParams& sp, StreamBlock& b) {
  b.ring.slots = smem;
  b.ring.full = reinterpret_cast<uint64_t*>(smem + static_cast<size_t>(kSlots) * kSlotBytes);
  b.ring.empty = b.ring.full + kSlots;
  b.xq = reinterpret_cast<int8_t*>(b.ring.empty + kSlots);
  b.xd = reinterpret_cast<float*>(b.xq + kMaxK);
  b.red = b.xd + kMaxK / 32;
  if (threadIdx.x == 0)
    for (int s = 0; s < kSlots; ++s) {
      lanec::kernels::bulk::init(&b.ring.full[s], 1);
      lanec::kernels::bulk::init(&b.ring.empty[s], kStreamWarps);
    }
  __syncthreads();
  if (threadIdx.x < kStreamThreads) return true;
  if (threadIdx.x == kStreamThreads) produce_stream(sp, b.ring);
  return false;
}

__global__ void __launch_bounds__(kStreamThreads + 32, 1) streamed_step_kernel(const StepParams p, const StreamParams sp) {
  extern __shared__ __align__(128) char smem[];
  StreamBlock b;
  if (!start_streamed_block(smem, sp, b)) return;
  Ring& ring = b.ring;
  int8_t* xq = b.xq;
  float *xd = b.xd, *red = b.red;
  const ConsumerSync sync;
  unsigned target = p.epoch;
  const int d = p.layers[0].qkv.k, q_dim = p.layers[0].o.k, f = p.layers[0].down.k;
  int s = 0;
  // The next GEMV stage on x (normed by g when non-null), into y (+ residual).
  auto gemv = [&](const float* x, const float* g, int n, float* y, const float* residual) {
    form_input_by<kStreamThreads>(x, g, n, xq, xd, red, sync);
    consume_stage(sp.stages[s++], ring, xq, xd, y, residual);
    grid_barrier(p.counter, target, sync);
  };
  for (int l = 0; l < p.n_layers; ++l) {
    const Layer& L = p.layers[l];
    gemv(p.h, L.attn_norm, d, p.qkv, nullptr);
    attention_stand_in(p, kStreamWarps);
    grid_barrier(p.counter, target, sync);
    gemv(p.attn, nullptr, q_dim, p.h, p.h);
    gemv(p.h, L.ffn_norm, d, p.act, nullptr);
    gemv(p.act, nullptr, f, p.h, p.h);
  }
  gemv(p.h, p.out_norm, d, p.logits, nullptr);
}

// One streamed stage alone, on an int8 input quantized by the host.
__global__ void __launch_bounds__(kStreamThreads + 32, 1) streamed_check_kernel(const StreamParams sp, const int8_t* x_qs,
                                                                                const float* x_d, float* y) {
  extern __shared__ __align__(128) char smem[];
  StreamBlock b;
  if (!start_streamed_block(smem, sp, b)) return;
  const StreamStage st = sp.stages[0];
  for (int i = threadIdx.x; i < st.k; i += kStreamThreads) b.xq[i] = x_qs[i];
  for (int i = threadIdx.x; i < st.k / 32; i += kStreamThreads) b.xd[i] = x_d[i];
  ConsumerSync{}();
  consume_stage(st, b.ring, b.xq, b.xd, y, nullptr);
}

int barriers_per_step(int layers) { return 5 * layers + 1; }

// ---- the GEMV stage against the CPU ----------------------------------------------

// The GEMV stage alone, on an int8 input quantized by the host.
__global__ void gemv_check_kernel(Matrix m, const int8_t* x_qs, const float* x_d, float* y, bool pair) {
  __shared__ alignas(16) int8_t xq[kMaxK];
  __shared__ float xd[kMaxK / 32];
  __shared__ float partial[kWarps][2];
  for (int i = threadIdx.x; i < m.k; i += kThreads) xq[i] = x_qs[i];
  for (int i = threadIdx.x; i < m.k / 32; i += kThreads) xd[i] = x_d[i];
  __syncthreads();
  if (pair) gemv_stage<true>(m, xq, xd, y, nullptr, partial);
  else gemv_stage<false>(m, xq, xd, y, nullptr, partial);
}

// ---- host ----------------------------------------------------------------------

#define CHECK_CUDA(expr) LANEC_CUDA_CHECK(expr)

__global__ void fill_weights(int8_t* qs, __half* d, size_t n, float scale, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * static_cast<size_t>(blockDim.x)) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    qs[i] = static_cast<int8_t>(static_cast<int>(h % 255) - 127);
    if (i % 32 == 0) d[i / 32] = __float2half(scale * (0.5f + (h >> 24) / 255.0f));
  }
}

Matrix make_matrix(int rows, int k, uint32_t seed, std::vector<void*>& owned) {
  const size_t n = static_cast<size_t>(rows) * k;
  int8_t* qs;
  __half* d;
  CHECK_CUDA(cudaMalloc(&qs, n));
  CHECK_CUDA(cudaMalloc(&d, n / 32 * sizeof(__half)));
  owned.push_back(qs), owned.push_back(d);
  fill_weights<<<1024, 256>>>(qs, d, n, 1.0f / (127.0f * std::sqrt(static_cast<float>(k))), seed);
  CHECK_CUDA(cudaGetLastError());
  return {qs, d, rows, k};
}

float* make_floats(size_t n, float value, std::vector<void*>& owned) {
  std::vector<float> host(n, value);
  float* p;
  CHECK_CUDA(cudaMalloc(&p, n * sizeof(float)));
  owned.push_back(p);
  CHECK_CUDA(cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  return p;
}

// Every block's stream of the stages' matrices (matrices[s] for stages[s]),
// packed on the device, and the parameters the streamed kernels take.
StreamParams build_stream(const std::vector<StreamStage>& stages, const std::vector<const Matrix*>& matrices, int grid,
                          std::vector<void*>& owned) {
  std::vector<size_t> base(grid), cursor(grid);
  size_t total = 0;
  for (int b = 0; b < grid; ++b) {
    base[b] = total;
    for (const StreamStage& st : stages) total += stage_stream_bytes(st, b, grid);
  }
  char* stream;
  size_t* d_cursor;
  size_t* d_base;
  StreamStage* d_stages;
  CHECK_CUDA(cudaMalloc(&stream, total));
  CHECK_CUDA(cudaMalloc(&d_cursor, grid * sizeof(size_t)));
  CHECK_CUDA(cudaMalloc(&d_base, grid * sizeof(size_t)));
  CHECK_CUDA(cudaMalloc(&d_stages, stages.size() * sizeof(StreamStage)));
  owned.push_back(stream), owned.push_back(d_cursor), owned.push_back(d_base), owned.push_back(d_stages);
  CHECK_CUDA(cudaMemcpy(d_base, base.data(), grid * sizeof(size_t), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_stages, stages.data(), stages.size() * sizeof(StreamStage), cudaMemcpyHostToDevice));
  cursor = base;
  for (size_t s = 0; s < stages.size(); ++s) {
    CHECK_CUDA(cudaMemcpy(d_cursor, cursor.data(), grid * sizeof(size_t), cudaMemcpyHostToDevice));
    pack_stage<<<grid, 256>>>(*matrices[s], stages[s].pair, stream, d_cursor);
    CHECK_CUDA(cudaGetLastError());
    for (int b = 0; b < grid; ++b) cursor[b] += stage_stream_bytes(stages[s], b, grid);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  return {d_stages, static_cast<int>(stages.size()), stream, d_base};
}

// The CPU value of row group `g` of the check GEMV: the same int8 input
// (quantized on the host exactly as form_input does) in double.
double cpu_row(const std::vector<int8_t>& qs, const std::vector<__half>& d, const std::vector<int8_t>& xq,
               const std::vector<float>& xd, int k, size_t row) {
  double s = 0.0;
  for (int b = 0; b < k / 32; ++b) {
    int dot = 0;
    for (int i = 0; i < 32; ++i) dot += qs[row * k + b * 32 + i] * xq[b * 32 + i];
    s += static_cast<double>(dot) * __half2float(d[row * (k / 32) + b]) * xd[b];
  }
  return s;
}

// Worst relative error of the GEMV stage (plain and pairs) against the CPU on
// random inputs, over the grid the step uses.
double check_gemv(int grid, int stream_grid, int rows, int k, uint32_t seed) {
  std::vector<void*> owned;
  const Matrix m = make_matrix(rows, k, seed, owned);
  std::vector<float> x(k);
  uint32_t s = seed;
  for (float& v : x) s = s * 1664525u + 1013904223u, v = static_cast<float>(s >> 8) / 8388608.0f - 1.0f;
  float* dy = make_floats(rows, 0.0f, owned);
  std::vector<int8_t> qs(static_cast<size_t>(rows) * k), xq(k);
  std::vector<__half> d(static_cast<size_t>(rows) * k / 32);
  std::vector<float> xd(k / 32);
  CHECK_CUDA(cudaMemcpy(qs.data(), m.qs, qs.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(d.data(), m.d, d.size() * sizeof(__half), cudaMemcpyDeviceToHost));
  for (int b = 0; b < k / 32; ++b) {
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    xd[b] = amax / 127.0f;
    for (int i = 0; i < 32; ++i) xq[b * 32 + i] = static_cast<int8_t>(std::nearbyint(xd[b] > 0 ? x[b * 32 + i] / xd[b] : 0));
  }
  int8_t* dxq;
  CHECK_CUDA(cudaMalloc(&dxq, k));
  owned.push_back(dxq);
  CHECK_CUDA(cudaMemcpy(dxq, xq.data(), k, cudaMemcpyHostToDevice));
  float* dxd = make_floats(k / 32, 0.0f, owned);
  CHECK_CUDA(cudaMemcpy(dxd, xd.data(), xd.size() * sizeof(float), cudaMemcpyHostToDevice));
  double worst = 0.0;
  for (const bool pair : {false, true})
    for (const bool streamed : {false, true}) {
    CHECK_CUDA(cudaMemset(dy, 0xff, rows * sizeof(float)));  // NaN where a row is not written
    if (streamed) {
      const StreamParams sp = build_stream({{rows, k, pair}}, {&m}, stream_grid, owned);
      streamed_check_kernel<<<stream_grid, kStreamThreads + 32, kStreamSmemBytes>>>(sp, dxq, dxd, dy);
    } else {
      gemv_check_kernel<<<grid, kThreads>>>(m, dxq, dxd, dy, pair);
    }
    CHECK_CUDA(cudaGetLastError());
    std::vector<float> y(rows);
    CHECK_CUDA(cudaMemcpy(y.data(), dy, rows * sizeof(float), cudaMemcpyDeviceToHost));
    double scale = 1e-30;
    std::vector<double> want(pair ? rows / 2 : rows);
    for (size_t g = 0; g < want.size(); ++g) {
      if (pair) {
        const double gate = cpu_row(qs, d, xq, xd, k, 2 * g), up = cpu_row(qs, d, xq, xd, k, 2 * g + 1);
        want[g] = gate / (1.0 + std::exp(-gate)) * up;
      } else {
        want[g] = cpu_row(qs, d, xq, xd, k, g);
      }
      scale = std::max(scale, std::fabs(want[g]));
    }
    for (size_t g = 0; g < want.size(); ++g)
      worst = std::isfinite(y[g]) ? std::max(worst, std::fabs(y[g] - want[g]) / scale) : INFINITY;
  }
  for (void* p : owned) CHECK_CUDA(cudaFree(p));
  return worst;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string want = argc > 1 ? argv[1] : "0.6b";
  const Shape* shape = nullptr;
  for (const Shape& s : kShapes)
    if (want == s.name) shape = &s;
  if (shape == nullptr) {
    std::fprintf(stderr, "persistent_step: unknown shape '%s' (0.6b, 1.7b or 8b)\n", want.c_str());
    return 2;
  }
  if (std::max({shape->d, shape->q(), shape->f}) > kMaxK) {
    std::fprintf(stderr, "persistent_step: qwen3-%s has GEMV inputs longer than PS_MAX_K=%d\n", shape->name, kMaxK);
    return 2;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, step_kernel, kThreads, 0));
  if (per_sm < 1) {
    std::fprintf(stderr, "persistent_step: the step kernel does not fit an SM\n");
    return 1;
  }
  const int grid = prop.multiProcessorCount * std::min(per_sm, kBlocksPerSm);
  // The streamed kernels: one block an SM, the largest shared memory (the
  // ring is most of it).
  const int stream_grid = prop.multiProcessorCount;
  for (const void* fn : {reinterpret_cast<const void*>(streamed_step_kernel), reinterpret_cast<const void*>(streamed_check_kernel)})
    CHECK_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(prop.sharedMemPerBlockOptin)));

  // The GEMV stage first: Q/K/V-like (few warps a row group) and down-like
  // (split over a block's warps) shapes, plain and pairs, fresh seeds.
  const uint32_t seed = static_cast<uint32_t>(time(nullptr));
  const double err = std::max(check_gemv(grid, stream_grid, 4096, 1024, seed), check_gemv(grid, stream_grid, 1024, 3072, seed + 1));
  const double tolerance = 1e-4;  // f32 sums of exact int32 block dots (and __expf) against double

  std::vector<void*> owned;
  std::vector<Layer> layers(shape->layers);
  size_t weight_bytes = 0;
  uint32_t s = seed;
  for (Layer& L : layers) {
    L.qkv = make_matrix(shape->q() + 2 * shape->kv(), shape->d, ++s, owned);
    L.o = make_matrix(shape->d, shape->q(), ++s, owned);
    L.gate_up = make_matrix(2 * shape->f, shape->d, ++s, owned);
    L.down = make_matrix(shape->d, shape->f, ++s, owned);
    L.attn_norm = make_floats(shape->d, 1.0f, owned);
    L.ffn_norm = make_floats(shape->d, 1.0f, owned);
    for (const Matrix* m : {&L.qkv, &L.o, &L.gate_up, &L.down})
      weight_bytes += static_cast<size_t>(m->rows) * m->k * 17 / 16;
  }
  const Matrix logits_w = make_matrix(shape->vocab, shape->d, ++s, owned);
  weight_bytes += static_cast<size_t>(logits_w.rows) * logits_w.k * 17 / 16;
  Layer* d_layers;
  CHECK_CUDA(cudaMalloc(&d_layers, layers.size() * sizeof(Layer)));
  owned.push_back(d_layers);
  CHECK_CUDA(cudaMemcpy(d_layers, layers.data(), layers.size() * sizeof(Layer), cudaMemcpyHostToDevice));

  StepParams p{};
  p.layers = d_layers;
  p.n_layers = shape->layers;
  p.logits_w = logits_w;
  p.out_norm = make_floats(shape->d, 1.0f, owned);
  p.h = make_floats(shape->d, 0.5f, owned);
  p.qkv = make_floats(shape->q() + 2 * shape->kv(), 0.0f, owned);
  p.attn = make_floats(shape->q(), 0.0f, owned);
  p.act = make_floats(shape->f, 0.0f, owned);
  p.logits = make_floats(shape->vocab, 0.0f, owned);
  CHECK_CUDA(cudaMalloc(&p.counter, sizeof(unsigned)));
  owned.push_back(p.counter);
  CHECK_CUDA(cudaMemset(p.counter, 0, sizeof(unsigned)));
  p.n_head = shape->n_head;
  p.n_kv = shape->n_kv;

  // The streamed step's weights: the same matrices, packed into block streams.
  std::vector<const Matrix*> stage_matrices;
  for (const Layer& L : layers)
    for (const Matrix* m : {&L.qkv, &L.o, &L.gate_up, &L.down}) stage_matrices.push_back(m);
  stage_matrices.push_back(&logits_w);
  const StreamParams sp = build_stream(stream_stages(*shape), stage_matrices, stream_grid, owned);

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  unsigned epoch = 0;
  auto launch = [&](int mode) {
    const bool streamed = mode == kStreamed;
    const int blocks = streamed ? stream_grid : grid;
    p.mode = mode;
    p.epoch = epoch;
    epoch += static_cast<unsigned>(barriers_per_step(shape->layers)) * blocks;
    if (streamed) {
      StreamParams spl = sp;
      void* args[] = {&p, &spl};
      CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(streamed_step_kernel), blocks, kStreamThreads + 32,
                                             args, kStreamSmemBytes, stream));
    } else {
      void* args[] = {&p};
      CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(step_kernel), blocks, kThreads, args, 0, stream));
    }
  };
  // The same logits from the three GEMV modes, from the same starting h; the
  // streamed step's (other summation order, so int8 roundings of the
  // intermediate vectors may differ) within a tolerance of them.
  std::vector<float> h0(shape->d, 0.5f);
  std::vector<float> logits[5];
  for (int mode : {kPersistent, kPrefetch, kPreload, kStreamed}) {
    CHECK_CUDA(cudaMemcpy(p.h, h0.data(), h0.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(p.logits, 0xff, shape->vocab * sizeof(float)));
    launch(mode);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    logits[mode].resize(shape->vocab);
    CHECK_CUDA(cudaMemcpy(logits[mode].data(), p.logits, shape->vocab * sizeof(float), cudaMemcpyDeviceToHost));
  }
  bool finite = true;
  for (int mode : {kPersistent, kStreamed})
    for (float v : logits[mode]) finite = finite && std::isfinite(v);
  const size_t logit_bytes = shape->vocab * sizeof(float);
  const bool same = std::memcmp(logits[kPersistent].data(), logits[kPrefetch].data(), logit_bytes) == 0 &&
                    std::memcmp(logits[kPersistent].data(), logits[kPreload].data(), logit_bytes) == 0;
  double logit_scale = 1e-30, streamed_diff = 0.0;
  for (int i = 0; i < shape->vocab; ++i) {
    logit_scale = std::max(logit_scale, static_cast<double>(std::fabs(logits[kPersistent][i])));
    const double diff = std::fabs(static_cast<double>(logits[kStreamed][i]) - logits[kPersistent][i]);
    streamed_diff = std::isfinite(diff) ? std::max(streamed_diff, diff) : INFINITY;
  }
  const double streamed_rel = streamed_diff / logit_scale;
  // A few int8 roundings of intermediate vectors flip over the layers (up to
  // 0.02 of the largest logit measured on the Qwen3 shapes); a wrong tile
  // or a stale slot moves them by their whole size.
  const double streamed_tolerance = 5e-2;

  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  constexpr int kSteps = 20;
  float us[5];
  for (int mode : {kPersistent, kPrefetch, kStagesOnly, kPreload, kStreamed}) {
    for (int i = 0; i < 3; ++i) launch(mode);
    std::vector<float> runs;
    for (int r = 0; r < 7; ++r) {
      CHECK_CUDA(cudaEventRecord(start, stream));
      for (int i = 0; i < kSteps; ++i) launch(mode);
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float ms = 0.0f;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
      runs.push_back(ms * 1000.0f / kSteps);
    }
    us[mode] = median(runs);
  }
  std::printf(
      "{\"shape\": \"qwen3-%s\", \"sms\": %d, \"blocks\": %d, \"threads\": %d, \"barriers_per_step\": %d, "
      "\"weight_bytes\": %zu, \"gemv_check_worst_rel_err\": %.3g, \"gemv_check_tolerance\": %.1g, "
      "\"logits_finite\": %s, \"modes_same_logits\": %s, \"persistent_us\": %.2f, "
      "\"persistent_prefetch_us\": %.2f, \"persistent_preload_us\": %.2f, \"stages_only_us\": %.2f, "
      "\"persistent_tb_s\": %.3f, \"streamed_consumer_warps\": %d, \"streamed_slots\": %d, \"streamed_slot_bytes\": %d, "
      "\"streamed_logits_rel_diff\": %.3g, \"streamed_logits_tolerance\": %.1g, \"streamed_us\": %.2f, "
      "\"streamed_tb_s\": %.3f}\n",
      shape->name, prop.multiProcessorCount, grid, kThreads, barriers_per_step(shape->layers), weight_bytes, err,
      tolerance, finite ? "true" : "false", same ? "true" : "false", us[kPersistent], us[kPrefetch], us[kPreload], us[kStagesOnly],
      weight_bytes / (us[kPersistent] * 1e-6) / 1e12, kStreamWarps, kSlots, kSlotBytes, streamed_rel, streamed_tolerance,
      us[kStreamed], weight_bytes / (us[kStreamed] * 1e-6) / 1e12);
  for (void* ptr : owned) CHECK_CUDA(cudaFree(ptr));
  return err <= tolerance && finite && same && streamed_rel <= streamed_tolerance ? 0 : 1;
}
