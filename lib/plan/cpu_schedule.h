// The CPU schedule executor: runs a planned Schedule on the CPU, launch by
// launch, over the planned buffers, with the same wiring the emitter uses:
// every operand is looked up by its buffer name, views resolve to their
// storage and offset, KV caches are head-major in their planned precision,
// int8 activation forms are real int8 values with per-32 scales, and each
// launch kind implements its kernel's math (fused norms, bias/residual
// epilogues, SwiGLU pairs, in-place RoPE with optional per-head norm and
// cache row writes). A planner wiring bug (a wrong view offset, a missing
// epilogue, a launch in the wrong place) therefore changes the logits, and
// the tests comparing against the reference executor catch it.
//
// Numerics: f32 math with double accumulation, like the kernels' references.
// int8 GEMVs use the exact per-block products sum_b d_x[b] * sum_j W[r,j] q_x[j]
// with W dequantized (d_w * q_w is exact in f32). f16 caches round on write.
//
// Weights come from a WeightStore (dequantized once); planning never reads
// them, this executor does.
//
// Threads: GEMV rows are spread over `threads` (0 = all cores). Each row's
// sum is computed by one thread in a fixed order, so the results are
// bit-identical for any thread count.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/plan/schedule.h"
#include "lib/ref/weights.h"

namespace lanec {

struct CpuGemvInput;  // a GEMV's input as doubles (the .cpp)

class CpuScheduleExecutor {
 public:
  CpuScheduleExecutor(const Schedule& schedule, WeightStore& weights, unsigned threads = 0);

  // Runs one step of `token` at `pos`; returns the logits (the schedule's
  // first f32 output).
  std::vector<float> step(int32_t token, int32_t pos);
  // The i32 output (argmax) of the last step.
  int32_t next_token() const;
  // f32 values of a buffer (resolved through views), for tests.
  std::vector<float> values(const std::string& buffer) const;

 private:
  struct Storage {
    std::vector<float> f32;    // f32 activations, caches (values rounded to their type), workspaces
    std::vector<int32_t> i32;  // params, i32 outputs
    std::vector<int8_t> qs;    // int8 forms (the high word of two-word forms)
    std::vector<int8_t> ql;    // two-word int8 forms: the low word; empty otherwise
    std::vector<float> qd;     // int8 forms' block scales
  };

  float* f32(const std::string& name, int64_t elements);
  const float* f32_in(const std::string& name, int64_t elements);
  int32_t* i32(const std::string& name);
  Storage& q8(const std::string& name);
  const std::vector<float>& weight(const std::string& name);
  // n values from `first` of a cache, rounded to its element type.
  void store_cache_row(const std::string& cache, size_t first, const float* row, int64_t n);

  void run(const Launch& launch);
  void run(const EmbedLaunch& l);
  void run(const RmsNormLaunch& l);
  void run(const QuantizeLaunch& l);
  // The int8 form of x[n] into q (both words for a two-word form).
  void quantize_into(Storage& q, const float* x, int64_t n);
  void run(const GemvLaunch& l);
  void run(const RopeLaunch& l);
  void run(const KvWriteLaunch& l);
  void run(const AttentionLaunch& l);
  void run(const ElementwiseLaunch& l, LaunchKind kind);
  void run(const ArgmaxLaunch& l);
  void run(const FfnLaunch& l);
  // Products of a [rows, k] weight with an input
  // plus an optional bias, rows spread over the threads.
  std::vector<float> products(const std::string& weight, int64_t rows, int64_t k, const CpuGemvInput& in,
                              const float* bias);

  const Schedule& schedule_;
  WeightStore& weights_;
  unsigned threads_;
  std::map<std::string, Storage> storage_;  // by owning buffer name
  std::string logits_, next_token_, token_, pos_;
};

// Quantizes x (n a multiple of 32) as the kernels do: d = m/127 per block
// of max m = max|x|, q = round(x r) with r = 127/m (half away from zero), 0
// for a block whose m is 0 or below blocks.h's kQ8MinMax. With `lo`, also
// the low words of the two-word form (activations: two-pass-int8):
// round((x - q d) 254 r) clamped to +-127. The math is
// the kernel library's own plain C++ reference (kernels/reference/numeric.h).
void quantize_q8_blocks(const float* x, int64_t n, int8_t* qs, float* d, int8_t* lo = nullptr);

}  // namespace lanec
