// Checks a GGUF against the weights and metadata a program was planned for,
// then uploads the weights into the program's weight allocation (Q8_0
// matrices repacked into q8_0_split, or q8_0_cols where planned, on the
// device through one staging buffer). The GGUF is memory-mapped by lib/gguf's GgufFile.
#pragma once

#include <unistd.h>

#include <cstdio>

#include "kernels/lanec_kernels.cuh"
#include "kernels/runtime/model_check.h"
#include "kernels/runtime/spec.h"
#include "lib/gguf/gguf_file.h"

namespace lanec::runtime {

// Uploads every planned weight to `weights` (the carved allocation). Shows
// progress on stderr when it is a terminal. Call after model_differences
// came back empty.
inline void upload_weights(const GgufFile& file, const ProgramSpec& spec, uint8_t* weights, bool progress) {
  progress = progress && isatty(STDERR_FILENO);
  uint64_t staging_bytes = 0;
  for (size_t i = 0; i < spec.n_weights; ++i)
    if (spec.weights[i].ggml_type == kGgmlQ8_0 && spec.weights[i].bytes > staging_bytes)
      staging_bytes = spec.weights[i].bytes;
  void* staging = nullptr;
  if (staging_bytes > 0) LANEC_CUDA_CHECK(cudaMalloc(&staging, staging_bytes));
  uint64_t done = 0;
  int last_percent = -1;
  for (size_t i = 0; i < spec.n_weights; ++i) {
    const PlannedWeight& w = spec.weights[i];
    const GgufTensorInfo& t = file.tensor(w.gguf_name);
    uint8_t* dst = weights + w.offset;
    if (w.ggml_type == kGgmlQ8_0) {
      LANEC_CUDA_CHECK(cudaMemcpy(staging, t.data, w.bytes, cudaMemcpyHostToDevice));
      int64_t rows = 1;
      for (size_t d = 1; d < w.n_dims; ++d) rows *= w.ne[d];
      if (w.cols) {
        const kernels::RepackQ8_0ColsParams p{staging, dst, static_cast<int>(rows), static_cast<int>(w.ne[0])};
        LANEC_CUDA_CHECK(kernels::launch_repack_q8_0_cols(p, nullptr));
      } else {
        const kernels::RepackQ8_0Params p{staging, dst, static_cast<int>(rows), static_cast<int>(w.ne[0])};
        LANEC_CUDA_CHECK(kernels::launch_repack_q8_0(p, nullptr));
      }
      LANEC_CUDA_CHECK(cudaDeviceSynchronize());  // the staging buffer is reused by the next tensor
    } else {
      LANEC_CUDA_CHECK(cudaMemcpy(dst, t.data, w.bytes, cudaMemcpyHostToDevice));
    }
    done += w.bytes;
    const int percent = spec.weight_bytes ? static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(spec.weight_bytes)) : 100;
    if (progress && percent != last_percent) {
      std::fprintf(stderr, "\rloading weights: %3d%% (%.1f / %.1f MiB)", percent, static_cast<double>(done) / 1048576.0,
                   static_cast<double>(spec.weight_bytes) / 1048576.0);
      last_percent = percent;
    }
  }
  if (progress) std::fprintf(stderr, "\n");
  if (staging != nullptr) LANEC_CUDA_CHECK(cudaFree(staging));
}

}  // namespace lanec::runtime
