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
//                        no GEMV rows: the step's floor without weights.
// The GEMV stage is first checked against a CPU dot product on random
// inputs; the three GEMV modes must give the same logits bit for bit.
// Prints one JSON object.
//   nvcc -std=c++17 -O2 -arch=sm_90 -o persistent_step bench/persistent_step.cu && ./persistent_step [0.6b|1.7b|8b]
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
constexpr int kMaxK = 12288;  // longest GEMV input (Qwen3-8B's down projection)
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

enum Mode { kPersistent = 0, kPrefetch = 1, kStagesOnly = 2, kPreload = 3 };

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

// A counter that only grows: round r of this launch completes when it holds
// epoch + r * gridDim.x (signed distance, so wrap-around is harmless). A
// block arrives once its writes are done and may load constants (weights)
// before it waits.
__device__ void grid_arrive(unsigned* counter, unsigned& target) {
  __syncthreads();
  target += gridDim.x;
  if (threadIdx.x == 0) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}

__device__ void grid_wait(const unsigned* counter, unsigned target) {
  if (threadIdx.x == 0) {
    unsigned v;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
    } while (static_cast<int>(v - target) < 0);
  }
  __syncthreads();
}

__device__ void grid_barrier(unsigned* counter, unsigned& target) {
  grid_arrive(counter, target);
  grid_wait(counter, target);
}

// x (n <= kMaxK, a multiple of 1024) into its int8 form in shared memory:
// rms_norm with weights g first when g is non-null. Thread t holds elements
// t + 1024 j, so each warp holds whole 32-element blocks.
__device__ void form_input(const float* x, const float* g, int n, int8_t* xq, float* xd, float* red) {
  constexpr int kPer = kMaxK / kThreads;
  const int per = n / kThreads;
  float v[kPer];
  float ss = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    v[j] = j < per ? __ldcg(x + threadIdx.x + j * kThreads) : 0.0f;
    ss += v[j] * v[j];
  }
  float scale = 1.0f;
  if (g != nullptr) {
    ss = warp_sum(ss);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = ss;
    __syncthreads();
    const int lane = threadIdx.x % 32;
    const float total = warp_sum(lane < kWarps ? red[lane] : 0.0f);  // every warp sums the partials itself
    scale = rsqrtf(total / n + kEps);
  }
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    if (j >= per) break;
    const int i = threadIdx.x + j * kThreads;
    float y = v[j] * scale * (g != nullptr ? __ldg(g + i) : 1.0f);
    float amax = fabsf(y);
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float d = amax / 127.0f;
    xq[i] = static_cast<int8_t>(__float2int_rn(d > 0.0f ? y / d : 0.0f));
    if (threadIdx.x % 32 == 0) xd[i / 32] = d;
  }
  __syncthreads();
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

// Attention stand-in: one warp a query head (see the header).
__device__ void attention_stand_in(const StepParams& p) {
  const int warp = blockIdx.x * kWarps + threadIdx.x / 32, lane = threadIdx.x % 32;
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
double check_gemv(int grid, int rows, int k, uint32_t seed) {
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
  for (const bool pair : {false, true}) {
    gemv_check_kernel<<<grid, kThreads>>>(m, dxq, dxd, dy, pair);
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
    for (size_t g = 0; g < want.size(); ++g) worst = std::max(worst, std::fabs(y[g] - want[g]) / scale);
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
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, step_kernel, kThreads, 0));
  if (per_sm < 1) {
    std::fprintf(stderr, "persistent_step: the step kernel does not fit an SM\n");
    return 1;
  }
  const int grid = prop.multiProcessorCount * std::min(per_sm, kBlocksPerSm);

  // The GEMV stage first: Q/K/V-like (few warps a row group) and down-like
  // (split over a block's warps) shapes, plain and pairs, fresh seeds.
  const uint32_t seed = static_cast<uint32_t>(time(nullptr));
  const double err = std::max(check_gemv(grid, 4096, 1024, seed), check_gemv(grid, 1024, 3072, seed + 1));
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

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  unsigned epoch = 0;
  const unsigned per_launch = static_cast<unsigned>(barriers_per_step(shape->layers)) * grid;
  auto launch = [&](int mode) {
    p.mode = mode;
    p.epoch = epoch;
    epoch += per_launch;
    void* args[] = {&p};
    CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(step_kernel), grid, kThreads, args, 0, stream));
  };
  // The same logits from both GEMV modes, from the same starting h.
  std::vector<float> h0(shape->d, 0.5f);
  std::vector<float> logits[4];
  for (int mode : {kPersistent, kPrefetch, kPreload}) {
    CHECK_CUDA(cudaMemcpy(p.h, h0.data(), h0.size() * sizeof(float), cudaMemcpyHostToDevice));
    launch(mode);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    logits[mode].resize(shape->vocab);
    CHECK_CUDA(cudaMemcpy(logits[mode].data(), p.logits, shape->vocab * sizeof(float), cudaMemcpyDeviceToHost));
  }
  bool finite = true;
  for (float v : logits[0]) finite = finite && std::isfinite(v);
  const size_t logit_bytes = shape->vocab * sizeof(float);
  const bool same = std::memcmp(logits[kPersistent].data(), logits[kPrefetch].data(), logit_bytes) == 0 &&
                    std::memcmp(logits[kPersistent].data(), logits[kPreload].data(), logit_bytes) == 0;

  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  constexpr int kSteps = 20;
  float us[4];
  for (int mode : {kPersistent, kPrefetch, kStagesOnly, kPreload}) {
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
      "\"persistent_tb_s\": %.3f}\n",
      shape->name, prop.multiProcessorCount, grid, kThreads, barriers_per_step(shape->layers), weight_bytes, err,
      tolerance, finite ? "true" : "false", same ? "true" : "false", us[kPersistent], us[kPrefetch], us[kPreload], us[kStagesOnly],
      weight_bytes / (us[kPersistent] * 1e-6) / 1e12);
  for (void* ptr : owned) CHECK_CUDA(cudaFree(ptr));
  return err <= tolerance && finite && same ? 0 : 1;
}
