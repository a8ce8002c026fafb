// Whether the SwiGLU feed-forward block runs faster as one launch
// (kernels/ffn.cuh: each block forms 32 Chunks intermediate values and adds
// its whole share of the down projection to the residual stream with
// atomics) than as the chain the generated programs run, measured on the
// three Qwen3 shapes before any planner work:
//
//   chain   per layer: rms_norm (int8 words of the residual stream), the
//           gate/up GEMV, the SwiGLU quantize, the down GEMV adding the
//           residual in place; each launch as the H200 plan has it (splits,
//           early triggers, the ahead form).
//   fused   per layer: rms_norm, launch_ffn<Chunks, Warps>.
//
// Layers of distinct weights (more than the L2), programmatic dependent
// launch, one CUDA graph replayed; the figure is µs a layer, the median over
// the replays, and the weights' bytes over that time. One layer of each
// form is first checked against the chain from the same input (the terms
// are the same; only the order of the sum differs). Prints one JSON object.
//   nvcc -std=c++17 -O3 -arch=sm_90 -o ffn_fold bench/ffn_fold.cu && ./ffn_fold
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../kernels/ffn.cuh"
#include "../kernels/lanec_kernels.cuh"
#include "chain_bench.cuh"

namespace {

using namespace lanec::kernels;
using namespace lanec::bench;

constexpr WeightFormat kF = WeightFormat::q8_0_split;
constexpr Activation kA = Activation::int8x2;

struct Shape {
  const char* name;
  int hidden, ffn, layers;
  bool norm_early, quantize_early;  // the H200 plan's early triggers
  int down_split;
  bool down_ahead;
};

// GGUF Q8_0 blocks with random values and scales in [0.002, 0.006).
__global__ void fix_gguf_scales(uint8_t* blocks, size_t n_blocks, uint32_t seed) {
  for (size_t b = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; b < n_blocks;
       b += gridDim.x * blockDim.x) {
    const float v = 0.002f + 0.004f * static_cast<float>(hash(static_cast<uint32_t>(b) ^ seed) & 0xffff) / 65536.0f;
    const uint16_t h = __half_as_ushort(__float2half(v));
    blocks[b * sizeof(BlockQ8_0)] = static_cast<uint8_t>(h & 0xff);
    blocks[b * sizeof(BlockQ8_0) + 1] = static_cast<uint8_t>(h >> 8);
  }
}

struct Layer {
  uint8_t* gate;       // q8_0_split [ffn, hidden]
  uint8_t* up;         // q8_0_split [ffn, hidden]
  uint8_t* down;       // q8_0_split [hidden, ffn]
  uint8_t* down_cols;  // q8_0_cols [hidden, ffn]
  float* norm_w;
};

struct Model {
  Shape shape;
  std::vector<Layer> layers;
  float* h;      // the residual stream
  float* h0;     // its initial value
  Int8x2 xq;     // the norm's int8 words
  float *g, *u;  // the chain's gate and up outputs
  Int8x2 aq;     // the chain's SwiGLU words
  double bytes_a_layer;
};

uint8_t* q8_0_matrix(int rows, int k, uint32_t seed, uint8_t* gguf, cudaStream_t s, bool cols) {
  uint8_t* out = device_alloc<uint8_t>(q8_0_split_bytes(rows, k));
  const size_t n_blocks = static_cast<size_t>(rows) * (k / kQ8Block);
  fill_bytes<<<1024, 256, 0, s>>>(reinterpret_cast<int8_t*>(gguf), n_blocks * sizeof(BlockQ8_0), seed);
  fix_gguf_scales<<<1024, 256, 0, s>>>(gguf, n_blocks, seed * 3u + 1u);
  if (cols)
    check_cuda(launch_repack_q8_0_cols({gguf, out, rows, k}, s), "repack cols");
  else
    check_cuda(launch_repack_q8_0({gguf, out, rows, k}, s), "repack");
  return out;
}

Model make_model(const Shape& sh, cudaStream_t s) {
  Model m{};
  m.shape = sh;
  uint8_t* gguf = device_alloc<uint8_t>(static_cast<size_t>(sh.hidden) * sh.ffn / kQ8Block * sizeof(BlockQ8_0));
  for (int l = 0; l < sh.layers; ++l) {
    Layer L{};
    const uint32_t seed = 1000u * (l + 1);
    L.gate = q8_0_matrix(sh.ffn, sh.hidden, seed + 1, gguf, s, false);
    L.up = q8_0_matrix(sh.ffn, sh.hidden, seed + 2, gguf, s, false);
    L.down = q8_0_matrix(sh.hidden, sh.ffn, seed + 3, gguf, s, false);
    // The same down weights in the cols layout: the generator is deterministic.
    L.down_cols = q8_0_matrix(sh.hidden, sh.ffn, seed + 3, gguf, s, true);
    L.norm_w = device_alloc<float>(sh.hidden);
    fill_floats<<<64, 256, 0, s>>>(L.norm_w, sh.hidden, seed + 4, 0.5f, 1.5f);
    m.layers.push_back(L);
  }
  check_cuda(cudaStreamSynchronize(s), "weights");
  check_cuda(cudaFree(gguf), "free");
  m.h = device_alloc<float>(sh.hidden);
  m.h0 = device_alloc<float>(sh.hidden);
  fill_floats<<<64, 256, 0, s>>>(m.h0, sh.hidden, 7u, -1.0f, 1.0f);
  m.xq = device_int8x2(sh.hidden);
  m.g = device_alloc<float>(sh.ffn);
  m.u = device_alloc<float>(sh.ffn);
  m.aq = device_int8x2(sh.ffn);
  m.bytes_a_layer = 3.0 * q8_0_split_bytes(sh.ffn, sh.hidden);
  check_cuda(cudaStreamSynchronize(s), "inputs");
  return m;
}

void norm(const Model& m, int l, cudaStream_t s) {
  RmsNormParams n{};
  n.x = m.h;
  n.w = m.layers[l].norm_w;
  n.out_qs = m.xq.qs;
  n.out_lo = m.xq.lo;
  n.out_d = m.xq.d;
  n.eps = 1e-6f;
  n.n = m.shape.hidden;
  const cudaError_t e = m.shape.norm_early ? launch_rms_norm<false, true, true>(n, s)
                                           : launch_rms_norm<false, true, false>(n, s);
  check_cuda(e, "rms_norm");
}

void chain_layer(const Model& m, int l, cudaStream_t s) {
  const Shape& sh = m.shape;
  const Layer& L = m.layers[l];
  norm(m, l, s);
  GemvParams gu = int8x2_gemv(m.xq, sh.hidden, 1);
  gu.parts[0] = {L.gate, m.g, nullptr, nullptr, sh.ffn};
  gu.parts[1] = {L.up, m.u, nullptr, nullptr, sh.ffn};
  gu.n_parts = 2;
  check_cuda(launch_gemv<kF, kA, 1, false>(gu, s), "gate/up gemv");
  QuantizeParams q{};
  q.x = m.g;
  q.up = m.u;
  q.out_qs = m.aq.qs;
  q.out_lo = m.aq.lo;
  q.out_d = m.aq.d;
  q.n = sh.ffn;
  check_cuda(sh.quantize_early ? launch_quantize_q8<true, true>(q, s) : launch_quantize_q8<true, false>(q, s),
             "quantize");
  GemvParams dn = int8x2_gemv(m.aq, sh.ffn, sh.down_split);
  dn.parts[0] = {L.down, m.h, nullptr, m.h, sh.hidden};
  dn.n_parts = 1;
  dn.residual_early = true;
  check_cuda(sh.down_ahead ? launch_gemv<kF, kA, 1, false, false, true>(dn, s) : launch_gemv<kF, kA, 1, false>(dn, s),
             "down gemv");
}

template <int Chunks, int Warps, int MinBlocks = 1, bool PreloadDown = true, int Ahead = 1, int Split = 1>
void fused_layer(const Model& m, int l, cudaStream_t s) {
  norm(m, l, s);
  FfnParams p{};
  p.gate = m.layers[l].gate;
  p.up = m.layers[l].up;
  p.down = m.layers[l].down_cols;
  p.x_qs = m.xq.qs;
  p.x_lo = m.xq.lo;
  p.x_d = m.xq.d;
  p.y = m.h;
  p.hidden = m.shape.hidden;
  p.ffn = m.shape.ffn;
  check_cuda(launch_ffn<Chunks, Warps, MinBlocks, PreloadDown, Ahead, Split>(p, s), "ffn");
}

using LayerFn = void (*)(const Model&, int, cudaStream_t);

// h after `layers` layers of `fn` from h0.
std::vector<float> run(const Model& m, LayerFn fn, int layers, cudaStream_t s) {
  check_cuda(cudaMemcpyAsync(m.h, m.h0, m.shape.hidden * sizeof(float), cudaMemcpyDeviceToDevice, s), "reset");
  for (int l = 0; l < layers; ++l) fn(m, l, s);
  std::vector<float> h(m.shape.hidden);
  check_cuda(cudaMemcpyAsync(h.data(), m.h, h.size() * sizeof(float), cudaMemcpyDeviceToHost, s), "h");
  check_cuda(cudaStreamSynchronize(s), "run");
  return h;
}

// Largest difference over the largest |change| the layer made to h.
double worst_rel(const std::vector<float>& ref, const std::vector<float>& got, const std::vector<float>& before) {
  double scale = 0.0, worst = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, std::fabs(static_cast<double>(ref[i]) - before[i]));
    worst = std::max(worst, std::fabs(static_cast<double>(ref[i]) - got[i]));
  }
  return scale > 0.0 ? worst / scale : worst;
}

double time_layers(const Model& m, LayerFn fn, cudaStream_t s, int replays) {
  auto record = [&](cudaStream_t st) {
    for (int l = 0; l < m.shape.layers; ++l) fn(m, l, st);
  };
  return median_replay_us(record, s, replays, m.shape.layers);
}

struct Variant {
  const char* name;
  LayerFn fn;
};

}  // namespace

int main(int argc, char** argv) {
  const int replays = argc > 1 ? std::atoi(argv[1]) : 30;
  cudaStream_t s;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  const Shape shapes[] = {{"qwen3-0.6b", 1024, 3072, 28, true, true, 4, true},
                          {"qwen3-1.7b", 2048, 6144, 28, true, false, 4, false},
                          {"qwen3-8b", 4096, 12288, 8, false, true, 2, false}};
  const Variant variants[] = {{"fused_c1_w8", fused_layer<1, 8>},
                              {"fused_c1_w8_nd", fused_layer<1, 8, 1, false>},
                              {"fused_c1_w8_nd_m4", fused_layer<1, 8, 4, false>},
                              {"fused_c1_w16", fused_layer<1, 16>},
                              {"fused_c1_w16_nd", fused_layer<1, 16, 1, false>},
                              {"fused_c1_w16_nd_m2", fused_layer<1, 16, 2, false>},
                              {"fused_c2_w16", fused_layer<2, 16>},
                              {"fused_c2_w16_nd", fused_layer<2, 16, 1, false>},
                              {"fused_c2_w16_nd_m2", fused_layer<2, 16, 2, false>},
                              // Fewer, fatter thread blocks: 8B's 12,288 intermediate values as
                              // 128 blocks of 3 (one an SM) or 96 of 4, against 192 of 2.
                              {"fused_c3_w16_nd", fused_layer<3, 16, 1, false>},
                              {"fused_c4_w16_nd", fused_layer<4, 16, 1, false>},
                              // Two gate/up trips a lane before the wait (all of 0.6B's).
                              {"fused_c1_w16_a2", fused_layer<1, 16, 1, true, 2>},
                              {"fused_c2_w16_a2", fused_layer<2, 16, 1, true, 2>},
                              {"fused_c2_w16_nd_a2", fused_layer<2, 16, 1, false, 2>},
                              // Clusters of two blocks sharing the intermediate blocks, each
                              // on half the gate/up chunks and half the down rows.
                              {"fused_c1_w16_s2", fused_layer<1, 16, 1, true, 1, 2>},
                              {"fused_c1_w16_a2_s2", fused_layer<1, 16, 1, true, 2, 2>},
                              {"fused_c2_w16_s2", fused_layer<2, 16, 1, true, 1, 2>},
                              {"fused_c2_w16_nd_s2", fused_layer<2, 16, 1, false, 1, 2>},
                              // 8 warps capped at 128 registers, so that two blocks fit an SM
                              // (16 warps take its whole register file): 192 blocks then run as
                              // one wave (0.6B split, 1.7B, 8B at 2 blocks of 32 a thread block).
                              {"fused_c1_w8_m2", fused_layer<1, 8, 2, true>},
                              {"fused_c2_w8_m2_nd", fused_layer<2, 8, 2, false>},
                              {"fused_c1_w8_m2_s2", fused_layer<1, 8, 2, true, 1, 2>},
                              {"fused_c2_w8_m2_nd_s2", fused_layer<2, 8, 2, false, 1, 2>}};
  bool ok = true;
  std::printf("{\n");
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); ++i) {
    const Shape& sh = shapes[i];
    Model m = make_model(sh, s);
    const std::vector<float> before = run(m, chain_layer, 0, s);
    const std::vector<float> ref = run(m, chain_layer, 1, s);
    const double chain_us = time_layers(m, chain_layer, s, replays);
    std::printf("  \"%s\": {\"layers\": %d, \"ffn_weight_bytes_a_layer\": %.0f,\n", sh.name, sh.layers,
                m.bytes_a_layer);
    std::printf("    \"chain\": {\"us_a_layer\": %.3f, \"GB_s\": %.1f}", chain_us, m.bytes_a_layer / chain_us / 1e3);
    for (const Variant& v : variants) {
      const double err = worst_rel(ref, run(m, v.fn, 1, s), before);
      const double us = time_layers(m, v.fn, s, replays);
      ok = ok && err <= 1e-5;
      std::printf(",\n    \"%s\": {\"us_a_layer\": %.3f, \"GB_s\": %.1f, \"vs_chain\": %.3f, \"worst_rel\": %.2e}",
                  v.name, us, m.bytes_a_layer / us / 1e3, chain_us / us, err);
    }
    std::printf("\n  },\n");
    for (const Layer& L : m.layers) {
      for (const void* p : {static_cast<const void*>(L.gate), static_cast<const void*>(L.up),
                            static_cast<const void*>(L.down), static_cast<const void*>(L.down_cols),
                            static_cast<const void*>(L.norm_w)})
        check_cuda(cudaFree(const_cast<void*>(p)), "free");
    }
  }
  std::printf("  \"agree\": %s\n}\n", ok ? "true" : "false");
  return ok ? 0 : 1;
}
