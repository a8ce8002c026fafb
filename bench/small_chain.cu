// What the library's small launches cost a dependent chain by themselves,
// outside a model: N launches of one kernel, each reading what the one
// before wrote, captured once as a CUDA graph with PDL and replayed; µs a
// step, the median of 15 replays. Against bench/launch_floor.cu's floor (a
// dependent launch with one read and one write) it says how much of a small
// launch's place in the chain (docs/performance.md, the chain profiles:
// 1.9 µs for a norm on Qwen3-0.6B, 1.7 for the SwiGLU) is the kernel's own
// work. The kernels, as the generated programs run them:
//   rms_norm   residual add and the int8 output in the two-word form, with
//              and without the early trigger; and the f32 output instead,
//              which says what the int8 tail after the block sum costs;
//   swiglu     the quantize launch forming silu(gate) * up in the two-word
//              int8 form (here also in f32: the next launch's input), with
//              and without the early trigger.
// Lengths: the norms at n = 1024, 2048 and 4096 and the SwiGLU at 3072, 6144
// and 12288 (Qwen3 0.6B, 1.7B and 8B). Build it twice to time a kernel switch
// alone, e.g.
//   for m in 0 1; do nvcc -std=c++17 -O2 -arch=sm_90 -DLANEC_NORM_PRELOAD=$m \
//     -o small_chain$m bench/small_chain.cu && ./small_chain$m [N]; done
// Prints one JSON object.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "chain_bench.cuh"

namespace {

using lanec::bench::device_alloc;
using lanec::bench::fill_floats;
using lanec::bench::median_replay_us;
using lanec::kernels::launch_quantize_q8;
using lanec::kernels::launch_rms_norm;
using lanec::kernels::QuantizeParams;
using lanec::kernels::RmsNormParams;

constexpr int kMaxN = 12288;
constexpr int kReplays = 15;

// The vectors the chains work on. The norms' residual stream ping-pongs
// between two buffers (in place would make the norm one block): step s reads
// res[s % 2] and writes res[(s + 1) % 2], so every step depends on the last.
struct ChainBuffers {
  float* x = nullptr;  // the "GEMV output" added each step (constant)
  float* res[2] = {nullptr, nullptr};
  float* w = nullptr;
  float* out = nullptr;  // the f32 form
  int8_t* qs = nullptr;
  int8_t* lo = nullptr;
  float* d = nullptr;
  // The SwiGLU's: up ping-pongs (step s reads up[s % 2] and writes
  // silu(gate) * up to up[(s + 1) % 2]); gate is the constant g with
  // silu(g) = 1, so the values neither grow nor vanish over the chain.
  float* gate = nullptr;
  float* up[2] = {nullptr, nullptr};
};

// g with g / (1 + e^-g) = 1 (Newton's method).
float silu_one() {
  double g = 1.0;
  for (int i = 0; i < 50; ++i) {
    const double e = std::exp(-g), f = g / (1.0 + e) - 1.0, df = (1.0 + e + g * e) / ((1.0 + e) * (1.0 + e));
    g -= f / df;
  }
  return static_cast<float>(g);
}

// kMaxN floats in [lo, hi] on the device (hi == lo: all lo).
float* floats(float lo, float hi, uint32_t seed) {
  float* p = device_alloc<float>(kMaxN);
  fill_floats<<<64, 256>>>(p, kMaxN, seed, lo, hi);
  return p;
}

ChainBuffers make_buffers() {
  ChainBuffers b;
  b.x = floats(-0.01f, 0.01f, 1);
  b.res[0] = floats(-1.0f, 1.0f, 2);
  b.res[1] = floats(-1.0f, 1.0f, 3);
  b.w = floats(0.5f, 1.5f, 4);
  b.out = device_alloc<float>(kMaxN);
  b.qs = device_alloc<int8_t>(kMaxN);
  b.lo = device_alloc<int8_t>(kMaxN);
  b.d = device_alloc<float>(kMaxN / 32);
  const float g = silu_one();
  b.gate = floats(g, g, 5);
  b.up[0] = floats(-1.0f, 1.0f, 6);
  b.up[1] = floats(-1.0f, 1.0f, 7);
  LANEC_CUDA_CHECK(cudaDeviceSynchronize());
  return b;
}

void free_buffers(ChainBuffers& b) {
  for (void* p : {static_cast<void*>(b.x), static_cast<void*>(b.res[0]), static_cast<void*>(b.res[1]),
                  static_cast<void*>(b.w), static_cast<void*>(b.out), static_cast<void*>(b.qs),
                  static_cast<void*>(b.lo), static_cast<void*>(b.d), static_cast<void*>(b.gate),
                  static_cast<void*>(b.up[0]), static_cast<void*>(b.up[1])})
    LANEC_CUDA_CHECK(cudaFree(p));
}

enum class Form { kInt8, kInt8EarlyTrigger, kF32, kSwiglu, kSwigluEarlyTrigger };

cudaError_t launch_swiglu_step(const ChainBuffers& b, bool early_trigger, int n, int s, cudaStream_t stream) {
  QuantizeParams p{};
  p.x = b.gate;
  p.up = b.up[s % 2];
  p.out = b.up[(s + 1) % 2];
  p.out_qs = b.qs;
  p.out_d = b.d;
  p.out_lo = b.lo;
  p.n = n;
  return early_trigger ? launch_quantize_q8<true, true>(p, stream) : launch_quantize_q8<true, false>(p, stream);
}

cudaError_t launch_step(const ChainBuffers& b, Form form, int n, int s, cudaStream_t stream) {
  if (form == Form::kSwiglu || form == Form::kSwigluEarlyTrigger)
    return launch_swiglu_step(b, form == Form::kSwigluEarlyTrigger, n, s, stream);
  RmsNormParams p{};
  p.x = b.x;
  p.residual = b.res[s % 2];
  p.h_out = b.res[(s + 1) % 2];
  p.w = b.w;
  p.eps = 1e-6f;
  p.n = n;
  if (form == Form::kF32) {
    p.out = b.out;
    return launch_rms_norm<true, false>(p, stream);
  }
  p.out_qs = b.qs;
  p.out_d = b.d;
  p.out_lo = b.lo;
  return form == Form::kInt8 ? launch_rms_norm<true, true, false>(p, stream)
                             : launch_rms_norm<true, true, true>(p, stream);
}

// µs a step of a replayed graph of `steps` launches of one form.
float chain_us(const ChainBuffers& b, Form form, int n, int steps, cudaStream_t stream) {
  const auto record = [&](cudaStream_t s) {
    for (int i = 0; i < steps; ++i) LANEC_CUDA_CHECK(launch_step(b, form, n, i, s));
  };
  return static_cast<float>(median_replay_us(record, stream, kReplays, steps));
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 256;
  if (steps < 1) {
    std::fprintf(stderr, "small_chain: N must be a positive step count\n");
    return 2;
  }
  cudaStream_t stream;
  LANEC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ChainBuffers b = make_buffers();
  std::string json = "{\"steps\": " + std::to_string(steps) + ", \"rms_norm_us\": {";
  const int norm_lengths[] = {1024, 2048, 4096};
  for (int i = 0; i < 3; ++i) {
    const int n = norm_lengths[i];
    char cell[160];
    std::snprintf(cell, sizeof cell, "%s\"%d\": {\"int8\": %.3f, \"int8_early_trigger\": %.3f, \"f32\": %.3f}",
                  i ? ", " : "", n, chain_us(b, Form::kInt8, n, steps, stream),
                  chain_us(b, Form::kInt8EarlyTrigger, n, steps, stream), chain_us(b, Form::kF32, n, steps, stream));
    json += cell;
  }
  json += "}, \"swiglu_us\": {";
  const int swiglu_lengths[] = {3072, 6144, 12288};
  for (int i = 0; i < 3; ++i) {
    const int n = swiglu_lengths[i];
    char cell[128];
    std::snprintf(cell, sizeof cell, "%s\"%d\": {\"int8\": %.3f, \"int8_early_trigger\": %.3f}", i ? ", " : "", n,
                  chain_us(b, Form::kSwiglu, n, steps, stream), chain_us(b, Form::kSwigluEarlyTrigger, n, steps, stream));
    json += cell;
  }
  std::printf("%s}}\n", json.c_str());
  free_buffers(b);
  LANEC_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
