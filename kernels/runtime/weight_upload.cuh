// Checks a GGUF against the weights and metadata a program was planned for,
// then uploads the weights into the program's weight allocation (Q8_0
// matrices repacked into q8_0_split on the device through one staging
// buffer). The GGUF is memory-mapped by lib/gguf's GgufFile.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/lanec_kernels.cuh"
#include "kernels/runtime/spec.h"
#include "lib/gguf/ggml_types.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_value.h"

namespace lanec::runtime {

constexpr uint32_t kGgmlQ8_0 = 8;

inline std::string ne_text(const int64_t* ne, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

inline std::string type_text(uint32_t id) {
  const GgmlTypeTraits* t = ggml_type_traits(id);
  return t != nullptr ? t->name : "type " + std::to_string(id);
}

// Every way `file` differs from the plan, one line each (empty: it matches).
inline std::vector<std::string> model_differences(const GgufFile& file, const ProgramSpec& spec) {
  std::vector<std::string> diffs;
  for (size_t i = 0; i < spec.n_metadata; ++i) {
    const PlannedKey& k = spec.metadata[i];
    const GgufValue* v = file.find(k.key);
    if (v == nullptr) {
      diffs.push_back(std::string("metadata ") + k.key + ": missing (planned " + k.value + ")");
      continue;
    }
    const std::string got = gguf_value_summary(*v, 4096);
    if (got != k.value) diffs.push_back(std::string("metadata ") + k.key + ": planned " + k.value + ", file has " + got);
  }
  for (size_t i = 0; i < spec.n_weights; ++i) {
    const PlannedWeight& w = spec.weights[i];
    const GgufTensorInfo* t = file.find_tensor(w.gguf_name);
    if (t == nullptr) {
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": missing");
      continue;
    }
    if (static_cast<uint32_t>(t->type) != w.ggml_type)
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": planned " + type_text(w.ggml_type) + ", file has " +
                      type_text(static_cast<uint32_t>(t->type)));
    std::vector<int64_t> ne(t->ne.begin(), t->ne.end());
    if (ne.size() != w.n_dims || !std::equal(ne.begin(), ne.end(), w.ne))
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": planned shape (ne) " + ne_text(w.ne, w.n_dims) +
                      ", file has " + ne_text(ne.data(), ne.size()));
    else if (t->n_bytes != w.bytes)
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": planned " + std::to_string(w.bytes) +
                      " bytes, file has " + std::to_string(t->n_bytes));
  }
  return diffs;
}

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
      kernels::RepackQ8_0Params p{};
      p.src = staging;
      p.dst = dst;
      p.rows = static_cast<int>(rows);
      p.k = static_cast<int>(w.ne[0]);
      LANEC_CUDA_CHECK(kernels::launch_repack_q8_0(p, nullptr));
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
