// What one dependent step of a decode chain costs on this GPU, without any
// model work: the floor under the generated programs' launch chain, and the
// price of the alternative a persistent step would pay instead.
//
//   chain_1block       N kernels of 1 block that do nothing, each launched
//                      with programmatic dependent launch (PDL) and waiting
//                      on its predecessor (griddepcontrol.wait, then
//                      launch_dependents, as kernels/common.cuh pdl_wait()),
//                      captured once as a CUDA graph and replayed;
//   chain_1block_rw    the same, each kernel reading what the previous one
//                      wrote (one dependent L2 round trip) and writing it back;
//   chain_grid         the same as chain_1block_rw with one block an SM;
//   barrier_grid       one cooperative kernel of one block an SM passing N
//                      grid-wide barriers (a monotonic global counter), the
//                      synchronization a persistent step would use between
//                      dependent stages.
// Each figure is µs per step: the median over repeats of a replay (or a
// launch) divided by N. Prints one JSON object.
//   nvcc -std=c++17 -O2 -arch=sm_90 -o launch_floor bench/launch_floor.cu && ./launch_floor [N]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define BENCH_NAME "launch_floor"
#include "check_cuda.h"

namespace {

__device__ __forceinline__ void wait_then_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

__global__ void empty_step(float*) { wait_then_trigger(); }

// Block b's thread t reads the value the previous step wrote and writes it
// back incremented: one dependent round trip through L2 a step.
__global__ void read_write_step(float* buf) {
  wait_then_trigger();
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

// µs a step of a graph of `steps` PDL launches of `kernel` with `blocks` blocks.
float chain_us(void (*kernel)(float*), int blocks, int steps, float* buf, cudaStream_t stream) {
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int s = 0; s < steps; ++s) {
    cudaLaunchAttribute attr[1] = {};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(128);
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = 1;
    CHECK_CUDA(cudaLaunchKernelEx(&config, kernel, buf));
  }
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) CHECK_CUDA(cudaGraphLaunch(exec, stream));
  std::vector<float> ms(15);
  for (float& m : ms) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    CHECK_CUDA(cudaEventElapsedTime(&m, start, stop));
  }
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return median(ms) * 1e3f / static_cast<float>(steps);
}

// µs a barrier of one cooperative grid of `blocks` blocks passing `rounds` barriers.
float barrier_us(int blocks, int rounds, cudaStream_t stream) {
  unsigned* counter = nullptr;
  CHECK_CUDA(cudaMalloc(&counter, sizeof(unsigned)));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<float> ms(15);
  for (size_t i = 0; i < ms.size() + 3; ++i) {
    CHECK_CUDA(cudaMemsetAsync(counter, 0, sizeof(unsigned), stream));
    void* args[] = {&counter, &rounds};
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(barrier_rounds), dim3(blocks), dim3(128), args, 0,
                                           stream));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    if (i >= 3) CHECK_CUDA(cudaEventElapsedTime(&ms[i - 3], start, stop));
  }
  CHECK_CUDA(cudaFree(counter));
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
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9) std::fprintf(stderr, "launch_floor: compute capability %d: PDL waits are no-ops here\n", major);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float* buf = nullptr;
  CHECK_CUDA(cudaMalloc(&buf, static_cast<size_t>(sms) * 128 * sizeof(float)));
  CHECK_CUDA(cudaMemset(buf, 0, static_cast<size_t>(sms) * 128 * sizeof(float)));
  const float empty = chain_us(empty_step, 1, steps, buf, stream);
  const float rw = chain_us(read_write_step, 1, steps, buf, stream);
  const float grid = chain_us(read_write_step, sms, steps, buf, stream);
  const float barrier = barrier_us(sms, steps, stream);
  std::printf("{\"steps\": %d, \"sms\": %d, \"chain_1block_us\": %.3f, \"chain_1block_rw_us\": %.3f, "
              "\"chain_grid_us\": %.3f, \"barrier_grid_us\": %.3f}\n",
              steps, sms, empty, rw, grid, barrier);
  CHECK_CUDA(cudaFree(buf));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
