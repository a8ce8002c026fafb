// What one dependent step of a decode chain costs on this GPU, without any
// model work: the floor under the generated programs' launch chain, and the
// price of the alternative a persistent step would pay instead.
//
//   chain_1block       N kernels of 1 block that do nothing, each launched
//                      with programmatic dependent launch (PDL) and waiting
//                      on its predecessor (griddepcontrol.wait, then
//                      launch_dependents: kernels/common.cuh pdl_wait() and
//                      launch_kernel(), as the generated programs launch),
//                      captured once as a CUDA graph and replayed;
//   chain_1block_rw    the same, each kernel reading what the previous one
//                      wrote (one dependent L2 round trip) and writing it back;
//   chain_grid         the same as chain_1block_rw with one block an SM;
//   barrier_grid       one cooperative kernel of one block an SM passing N
//                      grid-wide barriers (a monotonic global counter), the
//                      synchronization a persistent step would use between
//                      dependent stages;
//   graph_boundary     what a graph boundary adds to the chain_grid steps:
//                      R back-to-back replays of an N-step graph (a decode
//                      step a replay, as the generated programs run) against
//                      one replay of the same R * N steps in one graph, the
//                      difference over the R - 1 boundaries; what a graph of
//                      several decode steps could save a token.
// Each figure but the boundary is µs per step: the median over repeats of a
// replay (or a launch) divided by N. Prints one JSON object.
//   nvcc -std=c++17 -O2 -arch=sm_90 -o launch_floor bench/launch_floor.cu && ./launch_floor [N]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../kernels/common.cuh"

namespace {

using lanec::kernels::pdl_wait;

__global__ void empty_step(float*) { pdl_wait(); }

// Block b's thread t reads the value the previous step wrote and writes it
// back incremented: one dependent round trip through L2 a step.
__global__ void read_write_step(float* buf) {
  pdl_wait();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[i] = __ldcg(buf + i) + 1.0f;
}

// Every block arrives on a counter that only grows and waits until all blocks
// of this round have arrived; round r completes at (r + 1) * gridDim.x.
__global__ void barrier_rounds(unsigned* counter, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(counter, 1u);
      const unsigned target = static_cast<unsigned>(r + 1) * gridDim.x;
      while (atomicAdd(counter, 0u) < target) {
      }
      __threadfence();
    }
    __syncthreads();
  }
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

cudaGraphExec_t capture_chain(void (*kernel)(float*), int blocks, int steps, float* buf, cudaStream_t stream) {
  cudaGraph_t graph;
  LANEC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int s = 0; s < steps; ++s)
    LANEC_CUDA_CHECK(lanec::kernels::launch_kernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(128), 0, stream, buf));
  LANEC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  LANEC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  LANEC_CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

// Median µs of `replays` back-to-back launches of exec, after 3 warm-up launches.
float replays_us(cudaGraphExec_t exec, int replays, cudaStream_t stream) {
  cudaEvent_t start, stop;
  LANEC_CUDA_CHECK(cudaEventCreate(&start));
  LANEC_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) LANEC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  std::vector<float> ms(15);
  for (float& m : ms) {
    LANEC_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int r = 0; r < replays; ++r) LANEC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    LANEC_CUDA_CHECK(cudaEventRecord(stop, stream));
    LANEC_CUDA_CHECK(cudaEventSynchronize(stop));
    LANEC_CUDA_CHECK(cudaEventElapsedTime(&m, start, stop));
  }
  LANEC_CUDA_CHECK(cudaEventDestroy(start));
  LANEC_CUDA_CHECK(cudaEventDestroy(stop));
  return median(ms) * 1e3f;
}

// µs a step of a graph of `steps` PDL launches of `kernel` with `blocks` blocks.
float chain_us(void (*kernel)(float*), int blocks, int steps, float* buf, cudaStream_t stream) {
  cudaGraphExec_t exec = capture_chain(kernel, blocks, steps, buf, stream);
  const float us = replays_us(exec, 1, stream);
  LANEC_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return us / static_cast<float>(steps);
}

// µs one graph boundary adds between back-to-back replays of `steps` grid steps.
float graph_boundary_us(int blocks, int steps, int replays, float* buf, cudaStream_t stream) {
  cudaGraphExec_t one = capture_chain(read_write_step, blocks, steps, buf, stream);
  cudaGraphExec_t all = capture_chain(read_write_step, blocks, steps * replays, buf, stream);
  const float separate = replays_us(one, replays, stream);
  const float joined = replays_us(all, 1, stream);
  LANEC_CUDA_CHECK(cudaGraphExecDestroy(one));
  LANEC_CUDA_CHECK(cudaGraphExecDestroy(all));
  return (separate - joined) / static_cast<float>(replays - 1);
}

// µs a barrier of one cooperative grid of `blocks` blocks passing `rounds` barriers.
float barrier_us(int blocks, int rounds, cudaStream_t stream) {
  unsigned* counter = nullptr;
  LANEC_CUDA_CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  cudaEvent_t start, stop;
  LANEC_CUDA_CHECK(cudaEventCreate(&start));
  LANEC_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms(15);
  for (size_t i = 0; i < ms.size() + 3; ++i) {
    LANEC_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned), stream));
    void* args[] = {&counter, &rounds};
    LANEC_CUDA_CHECK(cudaEventRecord(start, stream));
    LANEC_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(barrier_rounds), dim3(blocks), dim3(128), args, 0,
                                           stream));
    LANEC_CUDA_CHECK(cudaEventRecord(stop, stream));
    LANEC_CUDA_CHECK(cudaEventSynchronize(stop));
    if (i >= 3) LANEC_CUDA_CHECK(cudaEventElapsedTime(&ms[i - 3], start, stop));
  }
  LANEC_CUDA_CHECK(cudaEventDestroy(start));
  LANEC_CUDA_CHECK(cudaEventDestroy(stop));
  LANEC_CUDA_CHECK(cudaFree(counter));
  return median(ms) * 1e3f / static_cast<float>(rounds);
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 256;
  if (steps < 1) {
    std::fprintf(stderr, "launch_floor: N must be a positive step count\n");
    return 2;
  }
  int device = 0, sms = 0, major = 0;
  LANEC_CUDA_CHECK(cudaGetDevice(&device));
  LANEC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  LANEC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9) std::fprintf(stderr, "launch_floor: compute capability %d: PDL waits are no-ops here\n", major);
  cudaStream_t stream;
  LANEC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float* buf = nullptr;
  LANEC_CUDA_CHECK(cudaMalloc(&buf, static_cast<size_t>(sms) * 128 * sizeof(float)));
  LANEC_CUDA_CHECK(cudaMemset(buf, 0, static_cast<size_t>(sms) * 128 * sizeof(float)));
  const float empty = chain_us(empty_step, 1, steps, buf, stream);
  const float rw = chain_us(read_write_step, 1, steps, buf, stream);
  const float grid = chain_us(read_write_step, sms, steps, buf, stream);
  const float barrier = barrier_us(sms, steps, stream);
  constexpr int kBoundaryReplays = 16;
  const float boundary = graph_boundary_us(sms, steps, kBoundaryReplays, buf, stream);
  std::printf("{\"steps\": %d, \"sms\": %d, \"chain_1block_us\": %.3f, \"chain_1block_rw_us\": %.3f, "
              "\"chain_grid_us\": %.3f, \"barrier_grid_us\": %.3f, \"graph_boundary_us\": %.3f, "
              "\"graph_boundary_replays\": %d}\n",
              steps, sms, empty, rw, grid, barrier, boundary, kBoundaryReplays);
  LANEC_CUDA_CHECK(cudaFree(buf));
  LANEC_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
