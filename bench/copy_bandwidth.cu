// Device-to-device copy bandwidth, counted as bytes read + bytes written over
// time (the convention of the roofline figures in docs/performance.md).
// Median of repeats, CUDA events, after warm-up. Prints one JSON object.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../kernels/common.cuh"

int main(int argc, char** argv) {
  const size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4096ull) << 20;  // MiB
  const int repeats = 20;
  void *src = nullptr, *dst = nullptr;
  LANEC_CUDA_CHECK(cudaMalloc(&src, bytes));
  LANEC_CUDA_CHECK(cudaMalloc(&dst, bytes));
  LANEC_CUDA_CHECK(cudaMemset(src, 1, bytes));
  cudaEvent_t start, stop;
  LANEC_CUDA_CHECK(cudaEventCreate(&start));
  LANEC_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) LANEC_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  std::vector<float> ms(repeats);
  for (int i = 0; i < repeats; ++i) {
    LANEC_CUDA_CHECK(cudaEventRecord(start));
    LANEC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
    LANEC_CUDA_CHECK(cudaEventRecord(stop));
    LANEC_CUDA_CHECK(cudaEventSynchronize(stop));
    LANEC_CUDA_CHECK(cudaEventElapsedTime(&ms[i], start, stop));
  }
  std::sort(ms.begin(), ms.end());
  const double median_ms = ms[repeats / 2];
  const double tb_per_s = 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3) / 1e12;
  std::printf("{\"bytes\": %zu, \"median_ms\": %.4f, \"read_write_tb_per_s\": %.3f}\n", bytes,
              median_ms, tb_per_s);
  return 0;
}
