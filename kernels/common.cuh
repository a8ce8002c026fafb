// Shared pieces of the lanec kernel library: error checking, warp and block
// reductions, f16/bf16 conversions, the weight/cache format enums and the
// per-element dequantizers used by the gather kernels. Every kernel family
// (kernels/<family>.cuh) includes this file; the emitted program includes
// kernels/lanec_kernels.cuh, which includes all families.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "blocks.h"

// Checks a CUDA runtime call (or a launch_<family> result); on failure prints
// the call, file and line and exits: an emitted program cannot continue with
// a failed launch, and every CUDA call it makes goes through this.
#define LANEC_CUDA_CHECK(expr)                                                          \
  do {                                                                                  \
    cudaError_t lanec_err_ = (expr);                                                    \
    if (lanec_err_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "CUDA error %s (%s) in %s at %s:%d\n", cudaGetErrorName(lanec_err_), \
                   cudaGetErrorString(lanec_err_), #expr, __FILE__, __LINE__);          \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace lanec::kernels {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Weight element formats the kernels read. q8_0 is the GGUF block layout;
// q8_0_split is lanec's repacked layout (blocks.h) that GEMV streams.
enum class WeightFormat { f32, f16, bf16, q8_0, q8_0_split, q4_0, q4_k, q6_k };
// Element type of KV caches.
enum class CachePrecision { f32, f16 };

// Launchers return this for a shape or pointer the kernel cannot take, so the
// caller's LANEC_CUDA_CHECK names the failing launch instead of running it.
inline cudaError_t invalid_launch() { return cudaErrorInvalidValue; }
inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }
inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
// Whether the n floats at a and at b share any element.
inline bool overlaps(const float* a, const float* b, int n) { return a != nullptr && b != nullptr && a < b + n && b < a + n; }

// ---- programmatic dependent launch (PDL) ----------------------------------------
// On sm_90+ a kernel launched with programmatic stream serialization may start
// (be scheduled, run its prologue) while the previous kernel in the stream is
// still finishing; the decode graph is a few hundred small launch-bound kernels,
// so this hides part of each launch. Correctness rests on pdl_wait(): every
// kernel calls it before touching global memory that an earlier launch may
// write (constants, such as the GEMV's first weight chunk and the norms'
// weights, may load before), and the wait returns
// only once the previous grid has completed and its writes are visible: the
// same ordering as a plain launch. Build with -DLANEC_PDL=0 for plain launches
// and no waits.
#ifndef LANEC_PDL
#define LANEC_PDL 1
#endif

#ifndef LANEC_PDL_TRIGGER
#define LANEC_PDL_TRIGGER 1
#endif

// Blocks until the grid this one depends on has completed and flushed its
// memory, then lets the next kernel of the stream launch: its blocks get
// scheduled while this grid runs and wait here in turn, so the gap between
// two launches shrinks to the completion signal (measured: 1058 -> 1151
// tok/s on Qwen3-0.6B, bench/variants.sh). The wait always means full
// completion of the previous grid (the trigger only allows an early launch),
// so ordering is the same as plain launches. Triggering after the wait keeps
// at most one grid waiting behind the running one (a kernel that triggers
// early, pdl_trigger_early below, lets one more start). A no-op below sm_90, with
// PDL off, or for a plain launch; -DLANEC_PDL_TRIGGER=0 keeps the wait only.
// ---- chain stamps (-DLANEC_CHAIN_STAMPS; --profile's in-graph table) ------------
// Where a replayed step's time goes, launch by launch, in the chain itself
// (timing launches one by one adds each one's own launch gap): block 0 of
// every launch stamps the global timer when its wait returns, which is when
// the launch before it has completed. Stamp i+1 minus stamp i is what launch
// i costs the chain: its work after the wait, its slowest block and its
// completion. Every kernel's block 0 passes pdl_wait() exactly once, so the
// stamps count the launches in stream order. Off by default (an atomic and
// a store per launch).
#ifdef LANEC_CHAIN_STAMPS
constexpr unsigned kChainStampCapacity = 8192;
__device__ unsigned long long g_chain_stamps[kChainStampCapacity];
__device__ unsigned int g_chain_count;

__device__ __forceinline__ void chain_stamp() {
  if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0 &&
      threadIdx.z == 0) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    const unsigned i = atomicAdd(&g_chain_count, 1u);
    if (i < kChainStampCapacity) g_chain_stamps[i] = now;
  }
}
#else
__device__ __forceinline__ void chain_stamp() {}
#endif

// A small launch's early trigger (rule early_trigger; the norm, quantize
// and rope kernels' EarlyTrigger): it lets the next launch start before its
// own wait, so the GEMV after a norm or quantize loads its first chunks while
// the launch before the norm still runs. The next launch may then start
// before the launch two back has completed: verify_schedule checks what it
// reads before its wait against that launch too. pdl_wait() triggers again
// (a no-op the second time).
template <bool Early>
__device__ __forceinline__ void pdl_trigger_early() {
#if LANEC_PDL && LANEC_PDL_TRIGGER && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Early) cudaTriggerProgrammaticLaunchCompletion();
#endif
}

__device__ __forceinline__ void pdl_wait() {
#if LANEC_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#if LANEC_PDL_TRIGGER
  cudaTriggerProgrammaticLaunchCompletion();
#endif
#endif
  chain_stamp();
}

// Whether every architecture this translation unit was compiled for is sm_90+,
// so that whichever code the device runs has the sm_90 instructions (the
// pdl_wait() instruction, thread-block clusters). A compute_80 PTX
// JIT-compiled on an H200 would not wait, and a PDL launch of it could read
// its producer's output early: such builds launch plainly.
constexpr bool all_compiled_archs_sm90() {
#if defined(__CUDA_ARCH_LIST__)
  constexpr int archs[] = {__CUDA_ARCH_LIST__};
  for (int a : archs)
    if (a < 900) return false;
  return true;
#else
  return false;
#endif
}
constexpr bool all_compiled_archs_have_pdl() { return LANEC_PDL && all_compiled_archs_sm90(); }

// Whether the current device (asked once; the program uses one device) is
// compute capability 9 or newer.
inline bool device_is_sm90() {
  static const bool sm90 = [] {
    int device = 0;
    int major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    return major >= 9;
  }();
  return sm90;
}

// Whether launches use PDL: on at compile time and an sm_90+ device.
inline bool pdl_launches_enabled() { return all_compiled_archs_have_pdl() && device_is_sm90(); }

// Whether a kernel may be launched as thread-block clusters (sm_90+ code on
// an sm_90+ device).
inline bool cluster_launches_enabled() { return all_compiled_archs_sm90() && device_is_sm90(); }

// The launch attribute that makes a launch clusters of `cluster` blocks.
inline cudaLaunchAttribute cluster_dimension_attribute(dim3 cluster) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster.x;
  attr.val.clusterDim.y = cluster.y;
  attr.val.clusterDim.z = cluster.z;
  return attr;
}

// How many blocks of `kernel` (`threads` a block, no dynamic shared memory)
// the current device holds at once, at least 1: a one-wave grid's size.
// Host-side queries, legal during stream capture.
template <typename Params>
int resident_blocks(void (*kernel)(Params), int threads) {
  int per_sm = 0, device = 0, sms = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) != cudaSuccess) (void)cudaGetLastError();
  (void)cudaGetDevice(&device);
  (void)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return (per_sm > 0 ? per_sm : 1) * (sms > 0 ? sms : 1);
}

// Thread-block cluster operations (attention.cuh's merge, ffn.cuh's split
// sums). They exist in sm_90+ code only; other code never runs a cluster
// kernel (the launchers ask cluster_launches_enabled()) and traps here.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#else
  __trap();
#endif
}
// A split barrier: every block arrives early and waits before its first
// write to another block's shared memory (by then all have started).
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait;" ::: "memory");
#else
  __trap();
#endif
}
// Element `index` of the shared array `base` of block `rank` of this cluster.
__device__ __forceinline__ float* cluster_shared(float* base, int index, int rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(base + index, rank);
#else
  (void)index, (void)rank;
  __trap();
  return base;
#endif
}

// How many clusters of `cluster` blocks of `kernel` (`block` threads, no
// dynamic shared memory) the device holds at once, or 0 if the occupancy
// calculator cannot say. Legal during a graph capture: the query runs in
// relaxed capture mode, and the thread's mode is restored after.
template <typename Params>
int max_active_clusters(void (*kernel)(Params), dim3 grid, dim3 block, dim3 cluster) {
  cudaLaunchAttribute attr = cluster_dimension_attribute(cluster);
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.attrs = &attr;
  config.numAttrs = 1;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  int n = 0;
  const cudaError_t err = cudaOccupancyMaxActiveClusters(&n, kernel, &config);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

// Launches `kernel(p)` on `stream`: with the programmatic-stream-serialization
// attribute when PDL is enabled, and as clusters of `cluster` blocks when that
// is not 1x1x1 (the caller checks cluster_launches_enabled()); else as
// kernel<<<grid, block, smem, stream>>>(p). Returns the launch status, as
// every launch_<family> does.
template <typename Params>
cudaError_t launch_kernel(void (*kernel)(Params), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          const Params& p, dim3 cluster = dim3(1, 1, 1)) {
  const bool pdl = pdl_launches_enabled();
  const bool clustered = cluster.x * cluster.y * cluster.z > 1;
  if (pdl || clustered) {
    cudaLaunchAttribute attr[2] = {};
    unsigned n = 0;
    if (pdl) {
      attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (clustered) attr[n++] = cluster_dimension_attribute(cluster);
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = n;
    const cudaError_t err = cudaLaunchKernelEx(&config, kernel, p);
    const cudaError_t last = cudaGetLastError();  // clears it, as the plain path does
    return err != cudaSuccess ? err : last;
  }
  kernel<<<grid, block, smem, stream>>>(p);
  return cudaGetLastError();
}

// ---- last-block handoff -------------------------------------------------------
// For kernels whose blocks each finish a part and one block combines them
// (argmax's block winners, attention's splits). Every thread of the block
// calls it after its own stores of the part. Returns, to every thread,
// whether this block arrived last of `expected` on `counter`; that block then
// sees the other blocks' stores (read them with __ldcg, never a stale L1 line)
// and sets the counter back to 0 once done, for the next launch.
__device__ __forceinline__ bool arrived_last(int* counter, int expected) {
  __shared__ bool last;
  // The barrier orders every thread's stores before thread 0's count, and
  // one acquire-release add at device scope publishes them and, for the last
  // block, makes the others' visible: no sequentially consistent fence in
  // every thread (measured: +0.7 % on Qwen3-0.6B at 4k context, whose
  // attention merges 64 splits through the counters; docs/performance.md).
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    int old;
    asm volatile("atom.add.acq_rel.gpu.s32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
    last = old == expected - 1;
  }
  __syncthreads();
  return last;
}

// ---- streamed loads ------------------------------------------------------------
// Read-only data a block reads once (GEMV weight rows, attention K/V rows).
// Kinds: plain __ldg (0), or no L1 allocation (1), which leaves L1 to what
// the block reuses, such as the GEMV's activation chunks. Below sm_80 both
// are __ldg. (L2 fetches of 256-byte units on top measured no faster,
// docs/performance.md.)
enum StreamKind { kStreamCached = 0, kStreamNoL1 = 1 };

template <int Kind, typename W>
__device__ __forceinline__ W load_streamed(const W* p) {
  static_assert(sizeof(W) == 16 || sizeof(W) == 8 || sizeof(W) == 4, "16-, 8- or 4-byte words");
  static_assert(Kind == kStreamCached || Kind == kStreamNoL1, "a stream kind is 0 (__ldg) or 1 (no L1)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (Kind == kStreamNoL1) {
    W v;
    if constexpr (sizeof(W) == 16) {
      int4& u = reinterpret_cast<int4&>(v);
      asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w) : "l"(p));
    } else if constexpr (sizeof(W) == 8) {
      int2& u = reinterpret_cast<int2&>(v);
      asm volatile("ld.global.nc.L1::no_allocate.v2.s32 {%0, %1}, [%2];" : "=r"(u.x), "=r"(u.y) : "l"(p));
    } else {
      int& u = reinterpret_cast<int&>(v);
      asm volatile("ld.global.nc.L1::no_allocate.s32 %0, [%1];" : "=r"(u) : "l"(p));
    }
    return v;
  }
#endif
  return __ldg(p);
}

// ---- reductions -------------------------------------------------------------

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off >>= 1) v += __shfl_xor_sync(kFullMask, v, off);
  return v;
}

// warp_sum of each of a thread's N values (N a power of two up to 32), every
// lane getting all N totals, in 2N + 4 - log2(N) shuffles where N warp_sums
// take 5N: each round halves the values a lane holds, lanes with bit `off`
// set keeping the upper half and sending the lower (the one value a lane
// has left is then the one whose index adds up the halves it kept), plain
// rounds sum over the remaining lane bits, and each total is read back from
// a lane that holds it. Another summation order than warp_sum's: totals may differ from
// it in the last bits.
template <int N>
__device__ __forceinline__ void warp_sum_each(float (&v)[N]) {
  static_assert(N >= 1 && N <= kWarpSize && (N & (N - 1)) == 0, "N is a power of two up to 32");
  const int lane = threadIdx.x % kWarpSize;
  int off = kWarpSize / 2;
#pragma unroll
  for (int count = N; count > 1; count >>= 1, off >>= 1) {
    const int half = count / 2;
    const bool upper = (lane & off) != 0;
#pragma unroll
    for (int i = 0; i < half; ++i) {
      const float send = upper ? v[i] : v[i + half];
      const float keep = upper ? v[i + half] : v[i];
      v[i] = keep + __shfl_xor_sync(kFullMask, send, off);
    }
  }
#pragma unroll
  for (; off > 0; off >>= 1) v[0] += __shfl_xor_sync(kFullMask, v[0], off);
  const float mine = v[0];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    // The lane whose kept offsets add up to j: bit (16 >> r) for each round r
    // whose half (N >> (r + 1)) is set in j.
    int src = 0;
#pragma unroll
    for (int r = 0, h = N / 2; h >= 1; ++r, h >>= 1)
      if (j & h) src |= (kWarpSize / 2) >> r;
    v[j] = __shfl_sync(kFullMask, mine, src);
  }
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, off));
  return v;
}

// warp_max of each of a thread's N values, the N reductions side by side
// (one chain of shuffle rounds, not N in a row).
template <int N>
__device__ __forceinline__ void warp_max_each(float (&v)[N]) {
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off >>= 1)
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = fmaxf(v[j], __shfl_xor_sync(kFullMask, v[j], off));
}

// Sum over a 1-D block (blockDim.x a multiple of 32, at most 1024); every
// thread gets the total. `scratch` is 32 floats of shared memory; the call
// starts with a barrier so it may be used twice in a row.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int n_warps = blockDim.x / kWarpSize;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = lane < n_warps ? scratch[lane] : 0.0f;
  return warp_sum(total);
}

// ---- 16-bit floats ------------------------------------------------------------

__device__ __forceinline__ float f16_bits_to_f32(uint16_t bits) {
  return __half2float(__ushort_as_half(bits));
}
__device__ __forceinline__ float bf16_bits_to_f32(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}
__device__ __forceinline__ uint16_t f32_to_f16_bits(float x) {
  return __half_as_ushort(__float2half_rn(x));
}

// silu(x) = x / (1 + e^-x), the divide an approximate one (2 ulp, a
// reciprocal and a multiply): an IEEE divide here sat on the chain of every
// SwiGLU launch. Where 1 + e^-x is past 2^126 (x < -87) it gives 0, as
// silu's value there is.
__device__ __forceinline__ float silu(float x) { return __fdividef(x, 1.0f + expf(-x)); }

// ---- per-element dequantization (gather kernels) ------------------------------
// `row` points at the first byte of a GGUF row; `i` is the element index in it.
// Byte loads only: rows of block formats are not aligned beyond 2 bytes.

__device__ __forceinline__ float load_f16_unaligned(const uint8_t* p) {
  return f16_bits_to_f32(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}

// Q4_K sub-block j (0..7): 6-bit scale and min from the packed scales[12].
__device__ __forceinline__ void q4_k_scale_min(const uint8_t* scales, int j, int* sc, int* mn) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *mn = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 15) | ((scales[j - 4] >> 6) << 4);
    *mn = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

template <WeightFormat F>
__device__ __forceinline__ float dequant_element(const uint8_t* row, int i) {
  if constexpr (F == WeightFormat::f32) {
    return reinterpret_cast<const float*>(row)[i];
  } else if constexpr (F == WeightFormat::f16) {
    return f16_bits_to_f32(reinterpret_cast<const uint16_t*>(row)[i]);
  } else if constexpr (F == WeightFormat::bf16) {
    return bf16_bits_to_f32(reinterpret_cast<const uint16_t*>(row)[i]);
  } else if constexpr (F == WeightFormat::q8_0) {
    const uint8_t* blk = row + (i / kQ8Block) * sizeof(BlockQ8_0);
    const int8_t q = static_cast<int8_t>(blk[2 + i % kQ8Block]);
    return load_f16_unaligned(blk) * static_cast<float>(q);
  } else if constexpr (F == WeightFormat::q4_0) {
    const uint8_t* blk = row + (i / kQ8Block) * sizeof(BlockQ4_0);
    const int j = i % kQ8Block;
    const int nib = j < 16 ? (blk[2 + j] & 15) : (blk[2 + j - 16] >> 4);
    return load_f16_unaligned(blk) * static_cast<float>(nib - 8);
  } else if constexpr (F == WeightFormat::q4_k) {
    const uint8_t* blk = row + (i / kKSuperBlock) * sizeof(BlockQ4_K);
    const int r = i % kKSuperBlock;
    const int group = r / 64;  // 64 elements share 32 bytes of qs: low nibbles then high
    const int within = r % 64;
    const uint8_t* qs = blk + 16 + 32 * group;
    const int sub = 2 * group + (within >= 32 ? 1 : 0);
    const int q = within < 32 ? (qs[within] & 15) : (qs[within - 32] >> 4);
    int sc, mn;
    q4_k_scale_min(blk + 4, sub, &sc, &mn);
    const float d = load_f16_unaligned(blk) * static_cast<float>(sc);
    const float m = load_f16_unaligned(blk + 2) * static_cast<float>(mn);
    return d * static_cast<float>(q) - m;
  } else if constexpr (F == WeightFormat::q6_k) {
    const uint8_t* blk = row + (i / kKSuperBlock) * sizeof(BlockQ6_K);
    const int r = i % kKSuperBlock;
    const int half = r / 128;  // each 128 elements use 64 bytes of ql, 32 of qh, 8 scales
    const int quad = (r % 128) / 32;
    const int l = r % 32;
    const uint8_t* ql = blk + 64 * half;
    const uint8_t* qh = blk + 128 + 32 * half;
    const int8_t* scales = reinterpret_cast<const int8_t*>(blk + 192) + 8 * half;
    const uint8_t lo_byte = ql[l + (quad & 1) * 32];
    const int lo = quad < 2 ? (lo_byte & 15) : (lo_byte >> 4);
    const int hi = (qh[l] >> (2 * quad)) & 3;
    const int q = (lo | (hi << 4)) - 32;
    const float d = load_f16_unaligned(blk + 208);
    return d * static_cast<float>(scales[l / 16 + 2 * quad]) * static_cast<float>(q);
  } else {
    static_assert(F != WeightFormat::q8_0_split,
                  "q8_0_split rows are not self-contained: read them with dequant_q8_0_split");
    return 0.0f;
  }
}

// One element of a q8_0_split matrix [rows, k] stored at `base`.
__device__ __forceinline__ float dequant_q8_0_split(const uint8_t* base, int rows, int k, int row, int i) {
  const int8_t q = reinterpret_cast<const int8_t*>(base)[static_cast<size_t>(row) * k + i];
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(base + static_cast<size_t>(rows) * k);
  return f16_bits_to_f32(scales[static_cast<size_t>(row) * (k / kQ8Block) + i / kQ8Block]) *
         static_cast<float>(q);
}

// Bytes of one GGUF row of `n` elements (n a multiple of the block size).
__host__ __device__ constexpr size_t weight_row_bytes(WeightFormat f, int n) {
  switch (f) {
    case WeightFormat::f32: return static_cast<size_t>(n) * 4;
    case WeightFormat::f16:
    case WeightFormat::bf16: return static_cast<size_t>(n) * 2;
    case WeightFormat::q8_0: return static_cast<size_t>(n / kQ8Block) * sizeof(BlockQ8_0);
    case WeightFormat::q4_0: return static_cast<size_t>(n / kQ8Block) * sizeof(BlockQ4_0);
    case WeightFormat::q4_k: return static_cast<size_t>(n / kKSuperBlock) * sizeof(BlockQ4_K);
    case WeightFormat::q6_k: return static_cast<size_t>(n / kKSuperBlock) * sizeof(BlockQ6_K);
    case WeightFormat::q8_0_split: return static_cast<size_t>(n) + static_cast<size_t>(n / kQ8Block) * 2;
  }
  return 0;
}

// Elements per block of a format (1 for plain formats).
__host__ __device__ constexpr int weight_block_elems(WeightFormat f) {
  switch (f) {
    case WeightFormat::q8_0:
    case WeightFormat::q8_0_split:
    case WeightFormat::q4_0: return kQ8Block;
    case WeightFormat::q4_k:
    case WeightFormat::q6_k: return kKSuperBlock;
    default: return 1;
  }
}

}  // namespace lanec::kernels
