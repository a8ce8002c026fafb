// Bandwidth bench of the decode GEMV, attention and argmax kernels (not part of the
// CMake build): prints time per launch and effective GB/s of weight / cache
// bytes for each knob, so the planner's defaults can be chosen from data.
//   nvcc -std=c++17 -O2 -arch=sm_90 -I. tests/kernels/kernel_bench.cu -o kernel_bench && ./kernel_bench
#include <cstdio>
#include <vector>

#include "kernels/argmax.cuh"
#include "kernels/attention.cuh"
#include "kernels/gemv.cuh"

using namespace lanec::kernels;

namespace {

template <typename Launch>
float time_us(Launch launch, int iters = 50) {
  for (int i = 0; i < 5; ++i) LANEC_CUDA_CHECK(launch());
  cudaEvent_t a, b;
  LANEC_CUDA_CHECK(cudaEventCreate(&a));
  LANEC_CUDA_CHECK(cudaEventCreate(&b));
  LANEC_CUDA_CHECK(cudaEventRecord(a));
  for (int i = 0; i < iters; ++i) LANEC_CUDA_CHECK(launch());
  LANEC_CUDA_CHECK(cudaEventRecord(b));
  LANEC_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  LANEC_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1000.0f / static_cast<float>(iters);
}

template <WeightFormat F, Activation A, int R>
void bench_gemv(const char* name, int k, int rows, void* w, float* x, int8_t* xq, float* xd, float* y) {
  const double bytes = F == WeightFormat::q8_0_split ? q8_0_split_bytes(rows, k) : weight_row_bytes(F, k) * static_cast<double>(rows);
  for (int split : {1, 2, 4, 8}) {
    GemvParams p{};
    p.parts[0] = {w, y, nullptr, nullptr, rows};
    p.n_parts = 1;
    p.k = k;
    p.x = x;
    p.x_qs = xq;
    p.x_d = xd;
    p.split_k = split;
    const float us = time_us([&] { return launch_gemv<F, A, R, false>(p, nullptr); });
    std::printf("gemv %-22s k=%5d rows=%6d rpw=%d split=%d  %8.2f us  %7.1f GB/s\n", name, k, rows, R, split, us,
                bytes / us * 1e-3);
  }
}

template <WeightFormat F, Activation A>
void bench_gemv_shapes(const char* name, void* w, float* x, int8_t* xq, float* xd, float* y) {
  const int shapes[][2] = {{4096, 4096}, {4096, 12288}, {12288, 4096}, {1024, 1024}, {4096, 151936}};
  for (auto& s : shapes) {
    bench_gemv<F, A, 1>(name, s[0], s[1], w, x, xq, xd, y);
    bench_gemv<F, A, 2>(name, s[0], s[1], w, x, xq, xd, y);
    bench_gemv<F, A, 4>(name, s[0], s[1], w, x, xq, xd, y);
  }
}

// Attention parameters over the benchmark's buffers (done is zeroed once;
// every launch leaves it zero).
AttentionParams attention_params(void* kc, void* vc, float* q, float* out, float* acc, float* ml, int* done,
                                 int* pos_dev, int n_head, int n_kv, int n_ctx, int n_split) {
  AttentionParams p{};
  p.q = q;
  p.k_cache = kc;
  p.v_cache = vc;
  p.out = out;
  p.part_acc = acc;
  p.part_ml = ml;
  p.done = done;
  p.pos = pos_dev;
  p.scale = 0.088f;
  p.n_head = n_head;
  p.n_kv_head = n_kv;
  p.n_ctx = n_ctx;
  p.n_split = n_split;
  return p;
}

template <CachePrecision C>
void bench_attention(void* kc, void* vc, float* q, float* out, float* acc, float* ml, int* done, int* pos_dev) {
  const int n_head = 32, n_kv = 8, n_ctx = 32768;
  for (int len : {512, 4096, 32768}) {
    const int pos = len - 1;
    LANEC_CUDA_CHECK(cudaMemcpy(pos_dev, &pos, sizeof(int), cudaMemcpyHostToDevice));
    for (int split : {1, 4, 16, 64}) {
      const AttentionParams p = attention_params(kc, vc, q, out, acc, ml, done, pos_dev, n_head, n_kv, n_ctx, split);
      constexpr int kGroup = attention_heads_per_block(32 / 8, 128);
      const float us = time_us([&] { return launch_attention<128, C, kGroup>(p, nullptr); });
      const double bytes = 2.0 * n_kv * len * 128 * (C == CachePrecision::f32 ? 4 : 2);
      std::printf("attention %s heads=32/8 hd=128 len=%5d splits=%2d  %8.2f us  %7.1f GB/s (K+V once)\n",
                  C == CachePrecision::f32 ? "f32" : "f16", len, split, us, bytes / us * 1e-3);
    }
  }
}

// Qwen3-0.6B's attention (16 query / 8 kv heads, head_dim 128, f16 cache)
// with the planner's maximum of 33 splits, at the lengths of a short and a
// long context: the kernel uses min(33, ceil(len / 16)) of them.
void bench_attention_small(void* kc, void* vc, float* q, float* out, float* acc, float* ml, int* done, int* pos_dev) {
  for (int len : {2, 64, 512, 1000, 4096}) {
    const int pos = len - 1;
    LANEC_CUDA_CHECK(cudaMemcpy(pos_dev, &pos, sizeof(int), cudaMemcpyHostToDevice));
    const AttentionParams p = attention_params(kc, vc, q, out, acc, ml, done, pos_dev, 16, 8, 4352, 33);
    const float us = time_us([&] { return launch_attention<128, CachePrecision::f16, 2>(p, nullptr); });
    std::printf("attention f16 heads=16/8 hd=128 len=%5d splits=33 (uses %2d)  %8.2f us\n", len,
                attention_effective_splits(len, 33), us);
  }
}

// Argmax over Qwen3's 151,936 logits for several grid sizes (the planner
// takes min(SMs, ceil(n_vocab / 1024))).
void bench_argmax(float* logits, int* slots, float* block_value, int* block_index, int* done) {
  for (int n_blocks : {1, 32, 66, 132}) {
    ArgmaxParams p{};
    p.logits = logits;
    p.token = slots;
    p.pos = slots + 1;
    p.ring_count = slots + 2;
    p.ring = slots + 4;
    p.n_vocab = 151936;
    p.ring_capacity = 16;
    p.n_blocks = n_blocks;
    p.block_value = block_value;
    p.block_index = block_index;
    p.done = done;
    const float us = time_us([&] { return launch_argmax(p, nullptr); });
    std::printf("argmax n_vocab=151936 blocks=%3d  %8.2f us\n", n_blocks, us);
  }
}

}  // namespace

int main() {
  const size_t w_bytes = static_cast<size_t>(4096) * 151936 * 4;  // largest f32 matrix
  void* w;
  float *x, *y, *xd;
  int8_t* xq;
  LANEC_CUDA_CHECK(cudaMalloc(&w, w_bytes));
  LANEC_CUDA_CHECK(cudaMemset(w, 0, w_bytes));
  LANEC_CUDA_CHECK(cudaMalloc(&x, 12288 * 4));
  LANEC_CUDA_CHECK(cudaMemset(x, 0, 12288 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&xq, 12288));
  LANEC_CUDA_CHECK(cudaMemset(xq, 0, 12288));
  LANEC_CUDA_CHECK(cudaMalloc(&xd, 12288 / 32 * 4));
  LANEC_CUDA_CHECK(cudaMemset(xd, 0, 12288 / 32 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&y, 151936 * 4));
  bench_gemv_shapes<WeightFormat::q8_0_split, Activation::int8>("q8_0_split/int8", w, x, xq, xd, y);
  bench_gemv_shapes<WeightFormat::q8_0_split, Activation::f32>("q8_0_split/f32", w, x, xq, xd, y);
  bench_gemv_shapes<WeightFormat::f16, Activation::f32>("f16", w, x, xq, xd, y);
  bench_gemv_shapes<WeightFormat::bf16, Activation::f32>("bf16", w, x, xq, xd, y);

  const size_t cache_bytes = static_cast<size_t>(8) * 32768 * 128 * 4;
  void *kc, *vc;
  float *q, *out, *acc, *ml;
  int *pos, *done;
  LANEC_CUDA_CHECK(cudaMalloc(&kc, cache_bytes));
  LANEC_CUDA_CHECK(cudaMalloc(&vc, cache_bytes));
  LANEC_CUDA_CHECK(cudaMemset(kc, 0, cache_bytes));
  LANEC_CUDA_CHECK(cudaMemset(vc, 0, cache_bytes));
  LANEC_CUDA_CHECK(cudaMalloc(&q, 32 * 128 * 4));
  LANEC_CUDA_CHECK(cudaMemset(q, 0, 32 * 128 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&out, 32 * 128 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&acc, 32 * 64 * 128 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&ml, 32 * 64 * 2 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&pos, 4));
  LANEC_CUDA_CHECK(cudaMalloc(&done, 32 * 4));
  LANEC_CUDA_CHECK(cudaMemset(done, 0, 32 * 4));
  bench_attention<CachePrecision::f16>(kc, vc, q, out, acc, ml, done, pos);
  bench_attention<CachePrecision::f32>(kc, vc, q, out, acc, ml, done, pos);
  bench_attention_small(kc, vc, q, out, acc, ml, done, pos);

  int *slots, *block_index, *argmax_done;
  float* block_value;
  LANEC_CUDA_CHECK(cudaMalloc(&slots, 32 * 4));
  LANEC_CUDA_CHECK(cudaMemset(slots, 0, 32 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&block_value, 1024 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&block_index, 1024 * 4));
  LANEC_CUDA_CHECK(cudaMalloc(&argmax_done, 4));
  LANEC_CUDA_CHECK(cudaMemset(argmax_done, 0, 4));
  bench_argmax(y, slots, block_value, block_index, argmax_done);
  return 0;
}
