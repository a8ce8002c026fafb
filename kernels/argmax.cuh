// Greedy token choice that also advances the decode state on the device:
//   token = argmax(logits) (lowest index on ties; NaN never wins; all -inf/NaN: 0)
//   *token_slot = token; *pos += 1; ring[*ring_count % ring_capacity] = token; *ring_count += 1
// so the next replay of the captured step graph reads the new token and
// position with no host round trip; the host drains the ring when it likes.
//
// One kernel over n_blocks blocks: block b reduces a slice of the logits and
// publishes its winner (value, index) to the workspace; the last block to
// finish (atomic counter) reduces the n_blocks winners, does the advance and
// sets the counter back to zero, so the next replay of the graph starts from
// zero again (the program zero-fills its buffers once, at allocation).
//
// Finish form (rule gemv_argmax, p.best set): the logits GEMV has already
// folded every block's winner into one 64-bit key (argmax_key, atomicMax;
// kernels/gemv.cuh's Argmax forms), so the launch is one thread that decodes
// the key, does the advance and sets the key back to zero for the next
// replay: the logits are not read again.
#pragma once

#include "common.cuh"
#include "limits.h"

namespace lanec::kernels {

struct ArgmaxParams {
  const float* logits;  // [n_vocab]
  int* token;           // device token slot (read by the embedding gather)
  int* pos;             // device position, incremented
  int* ring;            // [ring_capacity] generated tokens
  int* ring_count;      // total tokens appended so far
  int n_vocab;
  int ring_capacity;
  int n_blocks;         // grid size of the full form, >= 1 (the planner takes min(SMs, ceil(n_vocab / 1024)))
  float* block_value;   // workspace [n_blocks]: each block's largest logit (n_blocks > 1 only)
  int* block_index;     // workspace [n_blocks]: its lowest index (n_vocab: none)
  int* done;            // workspace [1]: blocks finished this launch; zero between launches
  unsigned long long* best;  // finish form: the GEMV's folded key (argmax_key); zero between launches.
                             // nullptr: the kernel reduces the logits itself
};

// The greedy order as one unsigned 64-bit key, so atomicMax picks the
// winner: the value's bits made monotonic in the high word (-0 counts as +0,
// as the float comparison does), the complement of the index in the low word
// (the lowest index wins a tie). NaN gives 0, below every other key, so it
// never wins; 0 also stands for "no key yet".
__device__ __forceinline__ unsigned long long argmax_key(float v, int index) {
  if (v != v) return 0ull;
  if (v == 0.0f) v = 0.0f;
  const unsigned u = __float_as_uint(v);
  const unsigned ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // -inf gives 0x007fffff, never 0
  return (static_cast<unsigned long long>(ordered) << 32) | static_cast<unsigned>(~static_cast<unsigned>(index));
}

// The index a key stands for; `none` for key 0 (every logit NaN).
__device__ __forceinline__ int argmax_key_index(unsigned long long key, int none) {
  return key == 0ull ? none : static_cast<int>(~static_cast<unsigned>(key & 0xffffffffull));
}

// Thread mapping: block b of kArgmaxThreads threads takes the slice
// [b*slice, (b+1)*slice) with slice = ceil(n_vocab / n_blocks) rounded up to
// a multiple of 4, so every slice starts 16-byte aligned when the logits do;
// thread t scans float4 t, t+blockDim, ... (scalars when the logits are not
// aligned), keeping (value, index); warps reduce with shuffles, then warp 0
// reduces the per-warp winners. kArgmaxThreads and kArgmaxMinPerBlock (the
// planner's grid size divides n_vocab by it) are in limits.h.

__device__ __forceinline__ void argmax_merge(float& v, int& i, float ov, int oi) {
  if (ov > v || (ov == v && oi < i)) {
    v = ov;
    i = oi;
  }
}

// Reduces every thread's (best, best_i) over the block; thread 0 gets the
// winner. `sm_v`/`sm_i` are 32 entries of shared memory.
__device__ __forceinline__ void argmax_block_reduce(float& best, int& best_i, int none, float* sm_v, int* sm_i) {
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off >>= 1)
    argmax_merge(best, best_i, __shfl_xor_sync(kFullMask, best, off), __shfl_xor_sync(kFullMask, best_i, off));
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  if (lane == 0) {
    sm_v[warp] = best;
    sm_i[warp] = best_i;
  }
  __syncthreads();
  if (warp == 0) {
    const int n_warps = blockDim.x / kWarpSize;
    best = lane < n_warps ? sm_v[lane] : -INFINITY;
    best_i = lane < n_warps ? sm_i[lane] : none;
#pragma unroll
    for (int off = kWarpSize / 2; off > 0; off >>= 1)
      argmax_merge(best, best_i, __shfl_xor_sync(kFullMask, best, off), __shfl_xor_sync(kFullMask, best_i, off));
  }
}

// The decode state argmax_advance updates, loaded before any store: the
// compiler cannot tell the stores from these loads, so a load after a store
// waits for it, and the update took three L2 round trips where it takes one.
struct ArgmaxState {
  int pos;
  int ring_count;
};

__device__ __forceinline__ ArgmaxState load_argmax_state(const ArgmaxParams& p) { return {*p.pos, *p.ring_count}; }

__device__ __forceinline__ void argmax_advance(const ArgmaxParams& p, int best_i, ArgmaxState s) {
  const int token = best_i < p.n_vocab ? best_i : 0;  // all -inf/NaN logits: token 0
  *p.token = token;
  *p.pos = s.pos + 1;
  p.ring[s.ring_count % p.ring_capacity] = token;
  *p.ring_count = s.ring_count + 1;
}

__global__ void __launch_bounds__(kArgmaxThreads) argmax_kernel(const __grid_constant__ ArgmaxParams p) {
  pdl_wait();  // before any global memory access (see common.cuh)
  // Thread 0 of every block loads it with its first logits: which block
  // advances (the only one, or the last to arrive) is known only at the end,
  // and two L2 loads a block in flight with the logits add no round trip.
  const ArgmaxState state = threadIdx.x == 0 ? load_argmax_state(p) : ArgmaxState{};
  __shared__ float sm_v[kWarpSize];
  __shared__ int sm_i[kWarpSize];
  const int per_block = (p.n_vocab + p.n_blocks - 1) / p.n_blocks;
  const int slice = (per_block + 3) / 4 * 4;
  const int begin = min(p.n_vocab, static_cast<int>(blockIdx.x) * slice);
  const int end = min(p.n_vocab, begin + slice);
  float best = -INFINITY;
  int best_i = p.n_vocab;  // sentinel that loses every tie
  if ((reinterpret_cast<uintptr_t>(p.logits) & 15u) == 0) {
    // begin is a multiple of 4: float4 loads up to the last whole group, then scalars.
    const float4* v4 = reinterpret_cast<const float4*>(p.logits);
    const int end4 = begin + (end - begin) / 4 * 4;
    for (int i = begin + 4 * static_cast<int>(threadIdx.x); i < end4; i += 4 * kArgmaxThreads) {
      const float4 x = v4[i / 4];
      argmax_merge(best, best_i, x.x, i);
      argmax_merge(best, best_i, x.y, i + 1);
      argmax_merge(best, best_i, x.z, i + 2);
      argmax_merge(best, best_i, x.w, i + 3);
    }
    for (int i = end4 + static_cast<int>(threadIdx.x); i < end; i += kArgmaxThreads)
      argmax_merge(best, best_i, p.logits[i], i);
  } else {
    for (int i = begin + static_cast<int>(threadIdx.x); i < end; i += kArgmaxThreads)
      argmax_merge(best, best_i, p.logits[i], i);
  }
  argmax_block_reduce(best, best_i, p.n_vocab, sm_v, sm_i);
  if (p.n_blocks == 1) {
    if (threadIdx.x == 0) argmax_advance(p, best_i, state);
    return;
  }
  // Publish this block's winner; the last block to arrive merges them all.
  if (threadIdx.x == 0) {
    p.block_value[blockIdx.x] = best;
    p.block_index[blockIdx.x] = best_i;
  }
  if (!arrived_last(p.done, p.n_blocks)) return;
  best = -INFINITY;
  best_i = p.n_vocab;
  // __ldcg reads L2, never a stale line of this SM's L1.
  for (int b = static_cast<int>(threadIdx.x); b < p.n_blocks; b += kArgmaxThreads)
    argmax_merge(best, best_i, __ldcg(p.block_value + b), __ldcg(p.block_index + b));
  __syncthreads();  // sm_v/sm_i are reused
  argmax_block_reduce(best, best_i, p.n_vocab, sm_v, sm_i);
  if (threadIdx.x == 0) {
    argmax_advance(p, best_i, state);
    *p.done = 0;  // ready for the next launch (graph replay)
  }
}

// Finish form: one thread (see the top of the file).
__global__ void argmax_finish_kernel(const __grid_constant__ ArgmaxParams p) {
  pdl_wait();  // the GEMV before has folded every block's key
  const ArgmaxState state = load_argmax_state(p);
  const unsigned long long key = __ldcg(p.best);
  argmax_advance(p, argmax_key_index(key, p.n_vocab), state);
  *p.best = 0ull;  // ready for the next replay's GEMV
}

inline cudaError_t launch_argmax(const ArgmaxParams& p, cudaStream_t stream) {
  if (p.n_vocab <= 0 || p.ring_capacity <= 0) return invalid_launch();
  if (!p.token || !p.pos || !p.ring || !p.ring_count) return invalid_launch();
  if (p.best != nullptr) return launch_kernel(argmax_finish_kernel, 1u, 1u, 0, stream, p);
  if (p.n_blocks < 1 || p.n_blocks > p.n_vocab || !p.logits) return invalid_launch();
  if (p.n_blocks > 1 && (!p.block_value || !p.block_index || !p.done)) return invalid_launch();
  return launch_kernel(argmax_kernel, static_cast<unsigned>(p.n_blocks), kArgmaxThreads, 0, stream, p);
}

}  // namespace lanec::kernels
