// The attention launch (with its clusters' merge launch) at the Qwen3 shapes'
// long contexts, timed for each split count: which n_split the planner should
// give a cache past 4k rows (docs/performance.md, "Fewer splits past 4k
// rows"). Each layer reads its own K and V cache, 28 of them (at least 470
// MB), so that a cache does not stay in L2 from one launch to the next;
// the launches of all layers are captured as one graph (PDL as the programs
// launch it) and replayed. Prints µs a layer, the median over the replays.
// Standalone the attention launches follow each other, where in a program a
// GEMV, a norm and a rope sit between two of them: the bench ranks split
// counts, the programs' tg128 (bench/variants.sh) decides.
//   nvcc -std=c++17 -O2 -arch=sm_90 bench/attention_splits.cu -o attention_splits && ./attention_splits
// Args: [LEN ...] key counts (default 4097 8193 16385).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "chain_bench.cuh"

namespace {

namespace k = lanec::kernels;
using k::AttentionParams;
using k::CachePrecision;

constexpr int kHeadDim = 128;
constexpr int kLayers = 28;
constexpr int kReplays = 21;

using lanec::bench::check_cuda;
using lanec::bench::device_alloc;

// One shape's buffers: every layer's K and V cache, and the query, output
// and workspaces the layers share (their launches run in order).
struct Shape {
  const char* name;
  int n_head, n_kv_head;
};

struct Buffers {
  std::vector<uint16_t*> k, v;
  float *q, *out, *part_acc, *part_ml;
  int* done;
  int* pos;
};

Buffers make_buffers(const Shape& s, int n_ctx) {
  Buffers b;
  const size_t cache_n = static_cast<size_t>(s.n_kv_head) * n_ctx * kHeadDim;
  for (int l = 0; l < kLayers; ++l) {
    b.k.push_back(device_alloc<uint16_t>(cache_n));
    b.v.push_back(device_alloc<uint16_t>(cache_n));
    // Scales in [0.002, 0.006): f16 values of the size K and V rows have.
    lanec::bench::fill_scales<<<256, 256>>>(b.k.back(), cache_n, 2u * l + 1u);
    lanec::bench::fill_scales<<<256, 256>>>(b.v.back(), cache_n, 2u * l + 2u);
  }
  const size_t out_n = static_cast<size_t>(s.n_head) * kHeadDim;
  b.q = device_alloc<float>(out_n);
  lanec::bench::fill_floats<<<64, 256>>>(b.q, out_n, 7u, -3.0f, 3.0f);
  b.out = device_alloc<float>(out_n);
  b.part_acc = device_alloc<float>(out_n * k::kAttnMaxSplits);
  b.part_ml = device_alloc<float>(static_cast<size_t>(s.n_head) * k::kAttnMaxSplits * 2);
  b.done = device_alloc<int>(static_cast<size_t>(s.n_head) * k::kAttnClusterSplits);  // zeroed
  b.pos = device_alloc<int>(1);
  check_cuda(cudaDeviceSynchronize(), "fill");
  return b;
}

void free_buffers(Buffers& b) {
  for (uint16_t* p : b.k) check_cuda(cudaFree(p), "cudaFree");
  for (uint16_t* p : b.v) check_cuda(cudaFree(p), "cudaFree");
  for (void* p : {static_cast<void*>(b.q), static_cast<void*>(b.out), static_cast<void*>(b.part_acc),
                  static_cast<void*>(b.part_ml), static_cast<void*>(b.done), static_cast<void*>(b.pos)})
    check_cuda(cudaFree(p), "cudaFree");
}

template <int Group>
double time_layers(const Shape& s, Buffers& b, int n_ctx, int len, int n_split, cudaStream_t stream) {
  const int pos = len - 1;
  check_cuda(cudaMemcpyAsync(b.pos, &pos, sizeof(int), cudaMemcpyHostToDevice, stream), "pos");
  check_cuda(cudaStreamSynchronize(stream), "pos");
  AttentionParams p{};
  p.q = b.q;
  p.out = b.out;
  p.part_acc = b.part_acc;
  p.part_ml = b.part_ml;
  p.done = b.done;
  p.pos = b.pos;
  p.scale = 1.0f / 11.3137085f;  // 1/sqrt(128)
  p.n_head = s.n_head;
  p.n_kv_head = s.n_kv_head;
  p.n_ctx = n_ctx;
  p.n_split = n_split;
  p.merge_launch = 1;  // the programs' long-context step
  auto record = [&](cudaStream_t st) {
    for (int l = 0; l < kLayers; ++l) {
      p.k_cache = b.k[l];
      p.v_cache = b.v[l];
      check_cuda(k::launch_attention<kHeadDim, CachePrecision::f16, Group>(p, st), "launch_attention");
    }
  };
  return lanec::bench::median_replay_us(record, stream, kReplays, kLayers);
}

template <int Group>
void sweep_shape(const Shape& s, const std::vector<int>& lens, cudaStream_t stream) {
  for (int len : lens) {
    const int n_ctx = len + 255;
    Buffers b = make_buffers(s, n_ctx);
    // K and V bytes a layer reads at this length: the bandwidth-bound time.
    const double bytes = 2.0 * s.n_kv_head * len * kHeadDim * sizeof(uint16_t);
    for (int n_split = 32; n_split <= k::kAttnMaxSplits; n_split += k::kAttnClusterSplits) {
      const double us = time_layers<Group>(s, b, n_ctx, len, n_split, stream);
      std::printf("| %s | %d | %d | %d | %.2f | %.0f |\n", s.name, Group, len, n_split, us, bytes / us / 1e3);
    }
    free_buffers(b);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!k::cluster_launches_enabled()) {
    std::printf("attention_splits: needs an sm_90 device\n");
    return 1;
  }
  std::vector<int> lens;
  for (int i = 1; i < argc; ++i) {
    const int len = std::atoi(argv[i]);
    if (len < 129 || len > 65536) {
      std::fprintf(stderr, "attention_splits: key count %s: want 129..65536 (the long-context step)\n", argv[i]);
      return 2;
    }
    lens.push_back(len);
  }
  if (lens.empty()) lens = {4097, 8193, 16385};
  cudaStream_t stream;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  std::printf("| shape | heads a block | keys | n_split (planned) | µs a layer | K+V GB/s |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: |\n");
  sweep_shape<2>({"qwen3-0.6b/1.7b (16/8 heads)", 16, 8}, lens, stream);
  sweep_shape<4>({"qwen3-8b (32/8 heads)", 32, 8}, lens, stream);
  std::printf("(the tensor-core form of 4 heads a block runs at most %d splits: one wave of its clusters)\n",
              k::attention_tc_wave_splits<kHeadDim, CachePrecision::f16, 4>(dim3(8, 64)));
  check_cuda(cudaStreamDestroy(stream), "stream");
  return 0;
}
