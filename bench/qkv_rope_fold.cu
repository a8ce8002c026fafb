// Whether Qwen3's per-head norm and RoPE (and the K/V cache rows) can move
// into the Q/K/V GEMV's epilogue, measured on the real shapes before any
// planner work (docs/performance.md):
//
//   separate   (what the generated programs run) per layer: rms_norm writes
//              the two-word int8 input; the Q/K/V GEMV (split 1, one row a
//              warp) writes q, k, v; the rope launch norms and rotates q
//              in place, norms, rotates and stores k's cache row, and
//              stores v's. Three launches.
//   folded     one block group covers one head (128 rows): C blocks, a
//              thread-block cluster, of 128 / C rows (one row a warp) or,
//              with C = 1, one block of 32 warps at 4 rows a warp. Each
//              block sums its rows' squares; the cluster shares the sums
//              and the rotation partners (row i pairs with i + 64, NEOX)
//              through distributed shared memory; the block writes its
//              rotated q rows or its k and v cache rows. Two launches.
//
// The chains run every layer's distinct weights (more than the L2) with
// programmatic dependent launch, captured once as a CUDA graph and
// replayed; the figure is µs a layer, the median over the replays. Each
// folded form is checked against the separate chain first (q, the K and
// V cache rows). Prints one JSON object.
//   nvcc -std=c++17 -O2 -arch=sm_90 -o qkv_rope_fold bench/qkv_rope_fold.cu && ./qkv_rope_fold 0.6b
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../kernels/lanec_kernels.cuh"
#include "chain_bench.cuh"

namespace {

namespace cg = cooperative_groups;
using namespace lanec::kernels;
using namespace lanec::bench;

constexpr int kHeadDim = 128;
constexpr int kCtx = 512;
constexpr int kPos = 300;
constexpr float kEps = 1e-6f;
constexpr float kTheta = 1000000.0f;
constexpr WeightFormat kF = WeightFormat::q8_0_split;
constexpr Activation kA = Activation::int8x2;
constexpr CachePrecision kC = CachePrecision::f16;

struct Shape {
  const char* name;
  int hidden, n_head, n_kv_head, layers;
};
constexpr Shape kShapes[] = {{"0.6b", 1024, 16, 8, 28}, {"1.7b", 2048, 16, 8, 28}, {"8b", 4096, 32, 8, 36}};

// ---- the folded launch ----------------------------------------------------------

struct QkvRopeParams {
  GemvParams g;           // parts Q, K, V (heads of kHeadDim consecutive rows), split 1
  const float* q_norm_w;  // [kHeadDim]
  const float* k_norm_w;
  const int* pos;
  double freq_ratio;
  int n_head, n_kv_head;
  void* k_cache;          // [n_kv_head, kCtx, kHeadDim]
  void* v_cache;
};

// C blocks a head, each of 128 / C rows at Rpw rows a warp.
template <int C, int Rpw>
__global__ void __launch_bounds__(kWarpSize * kHeadDim / C / Rpw) gemv_qkv_rope_kernel(const __grid_constant__ QkvRopeParams p) {
  constexpr int kRows = kHeadDim / C;  // rows a block
  __shared__ float partial[kGemvMaxWarps][Rpw];
  __shared__ float s_val[kRows];
  __shared__ float s_ss;
  const int head = static_cast<int>(blockIdx.x) / C;
  const int rank = static_cast<int>(blockIdx.x) % C;
  const int t = static_cast<int>(threadIdx.y) * kWarpSize + static_cast<int>(threadIdx.x);
  const int i = rank * kRows + t;  // this thread's element of the head (t < kRows)
  const bool is_q = head < p.n_head, is_k = !is_q && head < p.n_head + p.n_kv_head;
  const float* norm_w = is_q ? p.q_norm_w : p.k_norm_w;
  const int pos = *p.pos;  // written two or more launches back (rope.cuh)
  float cs = 1.0f, sn = 0.0f, w_own = 1.0f, w_partner = 1.0f;
  if (t < kRows && (is_q || is_k)) {
    rope_cos_sin(static_cast<double>(pos), rope_inv_freq(p.freq_ratio, i % (kHeadDim / 2)), &cs, &sn);
    w_own = norm_w[i];
    w_partner = norm_w[(i + kHeadDim / 2) % kHeadDim];
  }
  gemv_detail::WarpRows<kF, Rpw, false> rows;
  gemv_detail::resolve_rows(p.g, rows);
  pdl_wait();
  float acc[Rpw];
  if (gemv_detail::sum_rows<kF, kA, Rpw, false>(p.g, rows, partial, acc)) {
#pragma unroll
    for (int r = 0; r < Rpw; ++r) s_val[threadIdx.y * Rpw + r] = acc[r];
  }
  __syncthreads();
  if (threadIdx.y == 0) {
    float ss = 0.0f;
    for (int j = static_cast<int>(threadIdx.x); j < kRows; j += kWarpSize) ss += s_val[j] * s_val[j];
    ss = warp_sum(ss);
    if (threadIdx.x == 0) s_ss = ss;
  }
  cg::cluster_group cluster = cg::this_cluster();
  if constexpr (C > 1) cluster.sync(); else __syncthreads();
  if (t < kRows) {
    const float x = s_val[t];
    if (!is_q && !is_k) {
      store_cache_element<kC>(p.v_cache, cache_index(head - p.n_head - p.n_kv_head, pos, kCtx, kHeadDim, i), x);
    } else {
      float ss = 0.0f;
      const int j = (i + kHeadDim / 2) % kHeadDim;
      float partner;
      if constexpr (C > 1) {
#pragma unroll
        for (int r = 0; r < C; ++r) ss += *cluster.map_shared_rank(&s_ss, r);
        partner = cluster.map_shared_rank(s_val, j / kRows)[j % kRows];
      } else {
        ss = s_ss;
        partner = s_val[j];
      }
      const float inv = rsqrtf(ss / static_cast<float>(kHeadDim) + kEps);
      const float own = x * inv * w_own, other = partner * inv * w_partner;
      const float out = i < kHeadDim / 2 ? own * cs - other * sn : other * sn + own * cs;
      if (is_q)
        p.g.parts[0].y[head * kHeadDim + i] = out;
      else
        store_cache_element<kC>(p.k_cache, cache_index(head - p.n_head, pos, kCtx, kHeadDim, i), out);
    }
  }
  if constexpr (C > 1) cluster.sync();  // no block leaves while the others read its shared memory
}

// ---- buffers ----------------------------------------------------------------------

uint8_t* random_matrix(int rows, int k, uint32_t seed) {
  uint8_t* w = device_alloc<uint8_t>(q8_0_split_bytes(rows, k));
  fill_q8_0_split(w, rows, k, seed);
  return w;
}

struct Model {
  Shape s;
  std::vector<uint8_t*> w_q, w_k, w_v;
  std::vector<float*> attn_norm_w, q_norm_w, k_norm_w;
  float* resid;
  int8_t *x_qs, *x_lo;
  float* x_d;
  float *q, *k, *v;
  void *k_cache, *v_cache;
  int* pos;
};

Model make_model(const Shape& s) {
  Model m;
  m.s = s;
  for (int l = 0; l < s.layers; ++l) {
    m.w_q.push_back(random_matrix(s.n_head * kHeadDim, s.hidden, 100u + l));
    m.w_k.push_back(random_matrix(s.n_kv_head * kHeadDim, s.hidden, 200u + l));
    m.w_v.push_back(random_matrix(s.n_kv_head * kHeadDim, s.hidden, 300u + l));
    for (auto* v : {&m.attn_norm_w, &m.q_norm_w, &m.k_norm_w}) {
      v->push_back(device_alloc<float>(std::max(s.hidden, kHeadDim)));
      fill_floats<<<4, 256>>>(v->back(), std::max(s.hidden, kHeadDim), 400u + l + 97u * v->size(), 0.5f, 1.5f);
    }
  }
  m.resid = device_alloc<float>(s.hidden);
  fill_floats<<<4, 256>>>(m.resid, s.hidden, 500u, -1.0f, 1.0f);
  m.x_qs = device_alloc<int8_t>(s.hidden);
  m.x_lo = device_alloc<int8_t>(s.hidden);
  m.x_d = device_alloc<float>(s.hidden / kQ8Block);
  m.q = device_alloc<float>(s.n_head * kHeadDim);
  m.k = device_alloc<float>(s.n_kv_head * kHeadDim);
  m.v = device_alloc<float>(s.n_kv_head * kHeadDim);
  m.k_cache = device_alloc<__half>(static_cast<size_t>(s.n_kv_head) * kCtx * kHeadDim);
  m.v_cache = device_alloc<__half>(static_cast<size_t>(s.n_kv_head) * kCtx * kHeadDim);
  m.pos = device_alloc<int>(1);
  const int pos = kPos;
  check_cuda(cudaMemcpy(m.pos, &pos, sizeof(pos), cudaMemcpyHostToDevice), "pos");
  check_cuda(cudaDeviceSynchronize(), "fill");
  return m;
}

void norm_launch(const Model& m, int l, cudaStream_t s) {
  RmsNormParams n{};
  n.x = m.resid;
  n.w = m.attn_norm_w[l];
  n.out_qs = m.x_qs;
  n.out_lo = m.x_lo;
  n.out_d = m.x_d;
  n.eps = kEps;
  n.n = m.s.hidden;
  check_cuda(launch_rms_norm<false, true>(n, s), "rms_norm");
}

GemvParams qkv_gemv(const Model& m, int l) {
  GemvParams g{};
  g.parts[0] = {m.w_q[l], m.q, nullptr, nullptr, m.s.n_head * kHeadDim};
  g.parts[1] = {m.w_k[l], m.k, nullptr, nullptr, m.s.n_kv_head * kHeadDim};
  g.parts[2] = {m.w_v[l], m.v, nullptr, nullptr, m.s.n_kv_head * kHeadDim};
  g.n_parts = 3;
  g.k = m.s.hidden;
  g.x_qs = m.x_qs;
  g.x_lo = m.x_lo;
  g.x_d = m.x_d;
  g.split_k = 1;
  return g;
}

void separate_layer(const Model& m, int l, cudaStream_t s) {
  norm_launch(m, l, s);
  check_cuda(launch_gemv<kF, kA, 1, false>(qkv_gemv(m, l), s), "qkv gemv");
  RopeParams r{};
  r.parts[0] = {m.q, m.q_norm_w[l], m.s.n_head, nullptr, false};
  r.parts[1] = {m.k, m.k_norm_w[l], m.s.n_kv_head, m.k_cache, true};
  r.n_parts = 2;
  r.pos = m.pos;
  r.head_dim = kHeadDim;
  r.rope_dims = kHeadDim;
  r.theta_base = kTheta;
  r.eps = kEps;
  r.v = m.v;
  r.v_cache = m.v_cache;
  r.n_v_head = m.s.n_kv_head;
  r.n_ctx = kCtx;
  check_cuda(launch_rope<RopeMode::neox, kC>(r, s), "rope");
}

template <int C, int Rpw>
void folded_layer(const Model& m, int l, cudaStream_t s) {
  norm_launch(m, l, s);
  QkvRopeParams p{};
  p.g = qkv_gemv(m, l);
  p.q_norm_w = m.q_norm_w[l];
  p.k_norm_w = m.k_norm_w[l];
  p.pos = m.pos;
  p.freq_ratio = rope_freq_ratio(kTheta, kHeadDim);
  p.n_head = m.s.n_head;
  p.n_kv_head = m.s.n_kv_head;
  p.k_cache = m.k_cache;
  p.v_cache = m.v_cache;
  const int heads = m.s.n_head + 2 * m.s.n_kv_head;
  const dim3 block(kWarpSize, kHeadDim / C / Rpw);
  check_cuda(launch_kernel(gemv_qkv_rope_kernel<C, Rpw>, heads * C, block, 0, s, p, dim3(C, 1, 1)), "folded qkv gemv");
}

using LayerFn = void (*)(const Model&, int, cudaStream_t);

struct Result {
  std::vector<float> q;
  std::vector<__half> k_row, v_row;
};

Result run_once(const Model& m, LayerFn layer, cudaStream_t s) {
  const size_t kv = static_cast<size_t>(m.s.n_kv_head) * kCtx * kHeadDim;
  check_cuda(cudaMemsetAsync(m.k_cache, 0, kv * sizeof(__half), s), "clear");
  check_cuda(cudaMemsetAsync(m.v_cache, 0, kv * sizeof(__half), s), "clear");
  for (int l = 0; l < m.s.layers; ++l) layer(m, l, s);
  Result r;
  r.q.resize(static_cast<size_t>(m.s.n_head) * kHeadDim);
  std::vector<__half> k(kv), v(kv);
  check_cuda(cudaMemcpyAsync(r.q.data(), m.q, r.q.size() * sizeof(float), cudaMemcpyDeviceToHost, s), "q");
  check_cuda(cudaMemcpyAsync(k.data(), m.k_cache, kv * sizeof(__half), cudaMemcpyDeviceToHost, s), "k");
  check_cuda(cudaMemcpyAsync(v.data(), m.v_cache, kv * sizeof(__half), cudaMemcpyDeviceToHost, s), "v");
  check_cuda(cudaStreamSynchronize(s), "run");
  r.k_row = k;
  r.v_row = v;
  return r;
}

double worst_rel(const std::vector<float>& a, const std::vector<float>& b) {
  double scale = 0.0, worst = 0.0;
  for (float v : a) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return scale > 0.0 ? worst / scale : worst;
}

std::vector<float> to_float(const std::vector<__half>& h) {
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = __half2float(h[i]);
  return f;
}

double time_chain(const Model& m, LayerFn layer, cudaStream_t s, int replays) {
  auto record = [&](cudaStream_t st) {
    for (int l = 0; l < m.s.layers; ++l) layer(m, l, st);
  };
  return median_replay_us(record, s, replays, m.s.layers);
}

}  // namespace

int main(int argc, char** argv) {
  const char* want = argc > 1 ? argv[1] : "0.6b";
  const int replays = argc > 2 ? std::atoi(argv[2]) : 50;
  const Shape* shape = nullptr;
  for (const Shape& s : kShapes)
    if (std::strcmp(s.name, want) == 0) shape = &s;
  if (shape == nullptr) {
    std::fprintf(stderr, "qkv_rope_fold: unknown shape '%s' (0.6b, 1.7b, 8b)\n", want);
    return 2;
  }
  cudaStream_t s;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  const Model m = make_model(*shape);
  const Result ref = run_once(m, separate_layer, s);
  struct Variant {
    const char* name;
    LayerFn fn;
  };
  const Variant folded[] = {{"folded_cluster4", folded_layer<4, 1>},
                            {"folded_cluster8", folded_layer<8, 1>},
                            {"folded_block_rpw4", folded_layer<1, 4>},
                            {"folded_cluster2_rpw2", folded_layer<2, 2>}};
  std::printf("{\n  \"shape\": \"%s\",\n  \"layers\": %d,\n  \"separate_us_a_layer\": %.3f", shape->name,
              shape->layers, time_chain(m, separate_layer, s, replays));
  bool ok = true;
  for (const Variant& v : folded) {
    const Result r = run_once(m, v.fn, s);
    const double eq = worst_rel(ref.q, r.q), ek = worst_rel(to_float(ref.k_row), to_float(r.k_row)),
                 ev = worst_rel(to_float(ref.v_row), to_float(r.v_row));
    ok = ok && eq <= 1e-4 && ek <= 2e-3 && ev <= 2e-3;
    std::printf(",\n  \"%s\": {\"us_a_layer\": %.3f, \"worst_rel_q\": %.2e, \"worst_rel_k\": %.2e, \"worst_rel_v\": %.2e}",
                v.name, time_chain(m, v.fn, s, replays), eq, ek, ev);
  }
  std::printf(",\n  \"agree\": %s\n}\n", ok ? "true" : "false");
  return ok ? 0 : 1;
}
