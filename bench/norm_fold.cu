// Whether the RMS norm between a GEMV that writes the residual stream and the
// GEMV that reads its int8 form can be folded into the two GEMVs, measured on
// Qwen3-0.6B's shapes before any planner work (docs/performance.md, "Where
// the next gains have to come from": it cannot, by this measurement):
//
//   separate   (what the generated programs run) per layer: the attention
//              output GEMV (1024 x 2048, two-word int8, split 2) writes
//              attn_out; rms_norm adds the residual, writes h and the
//              two-word int8 form of g * h / rms(h); the Q/K/V GEMV
//              (4096 x 1024, split 1) reads it. Three launches.
//   folded     the output GEMV adds the residual, writes h, and, over a
//              thread-block cluster covering each 32-row int8 block, the
//              int8 form of g * h (no rms: the int8 form is scale
//              invariant) and the block's sum of h^2; the Q/K/V GEMV sums
//              those partials next to its own loads and multiplies its dot
//              products by 1 / rms(h). Two launches. Clusters of 8, 4
//              and 2 blocks (4, 8 and 16 rows a block).
//   floor      the folded pair without the cluster exchange: each block
//              writes its own rows' bytes and one sum, which is not the
//              norm; it bounds what any cross-block exchange could save.
//
// Both chains run 28 layers of distinct weights (191 MB, more than the L2)
// with programmatic dependent launch, captured once as a CUDA graph and
// replayed; the figure is µs a layer, the median over the replays. The
// folded chain is checked against the separate one first (the same h; the
// Q/K/V outputs within int8 rounding). Prints one JSON object.
//   nvcc -std=c++17 -O2 -arch=sm_90 -o norm_fold bench/norm_fold.cu && ./norm_fold
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "../kernels/lanec_kernels.cuh"
#include "chain_bench.cuh"

namespace {

namespace cg = cooperative_groups;
using namespace lanec::kernels;
using namespace lanec::bench;

constexpr int kHidden = 1024;   // residual stream, Q/K/V GEMV k
constexpr int kAttnDim = 2048;  // attention output, output GEMV k
constexpr int kQkvRows = 4096;
constexpr int kLayers = 28;
constexpr float kEps = 1e-6f;
constexpr WeightFormat kF = WeightFormat::q8_0_split;
constexpr Activation kA = Activation::int8x2;

// ---- the folded pair ------------------------------------------------------------

struct NormOutParams {
  GemvParams g;          // one part: w, y (h: the new residual stream), residual
  const float* norm_w;   // [rows] g
  Int8x2 out;            // int8 form of g * h, rows / 32 blocks
  float* out_sumsq;      // [rows / 32] sum of h^2 over each 32-row block
};

// Groups row groups (one row each) a block; a cluster of 32 / Groups blocks
// covers one 32-row int8 block, whose maximum and sum the blocks share
// through distributed shared memory.
template <int Groups, bool Exchange>
__global__ void gemv_norm_out_kernel(const __grid_constant__ NormOutParams p) {
  constexpr int kCluster = kQ8Block / Groups;
  __shared__ float partial[2 * Groups][1];  // split 2: two warps a row group
  __shared__ float s_v[Groups], s_hh[Groups];
  gemv_detail::WarpRows<kF, 1, false> rows;
  gemv_detail::resolve_rows(p.g, rows);
  pdl_wait();
  float acc[1];
  const int group = static_cast<int>(threadIdx.y) / p.g.split_k;
  const int row = static_cast<int>(blockIdx.x) * Groups + group;
  if (gemv_detail::sum_rows<kF, kA, 1, false>(p.g, rows, partial, acc)) {
    const float h = acc[0] + p.g.parts[0].residual[row];
    p.g.parts[0].y[row] = h;
    s_v[group] = p.norm_w[row] * h;
    s_hh[group] = h * h;
  }
  if constexpr (!Exchange) {  // timing floor: no cluster exchange (each block's own rows; not the norm)
    __syncthreads();
    if (threadIdx.y == 0 && static_cast<int>(threadIdx.x) < Groups) {
      const int lane = static_cast<int>(threadIdx.x);
      const int r = static_cast<int>(blockIdx.x) * Groups + lane;
      const float v = s_v[lane];
      p.out.qs[r] = static_cast<int8_t>(v);
      p.out.lo[r] = static_cast<int8_t>(s_hh[lane]);
      if (lane == 0) p.out_sumsq[r / kQ8Block] = s_hh[0];
    }
    return;
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  if (threadIdx.y == 0) {  // lane l: row l of the cluster's 32
    const int lane = static_cast<int>(threadIdx.x);
    const unsigned rank = static_cast<unsigned>(lane / Groups);
    const float v = cluster.map_shared_rank(s_v, rank)[lane % Groups];
    const float hh = cluster.map_shared_rank(s_hh, rank)[lane % Groups];
    const float amax = warp_max(fabsf(v));
    const float sum = warp_sum(hh);
    const int block = static_cast<int>(blockIdx.x) / kCluster;
    if (rank == cluster.block_rank())
      quantize_block_with_max(v, amax, p.out.qs, p.out.d, p.out.lo, block, lane);
    if (cluster.block_rank() == 0 && lane == 0) p.out_sumsq[block] = sum;
  }
  cluster.sync();  // no block leaves while the others read its shared memory
}

struct ScaledParams {
  GemvParams g;          // one part, int8 input = the int8 form of g * h
  const float* sumsq;    // [n_sums] partial sums of h^2
  int n_sums;
  int n;                 // length of h
};

__global__ void gemv_scaled_kernel(const __grid_constant__ ScaledParams p) {
  __shared__ float partial[kGemvMaxWarps][1];
  gemv_detail::WarpRows<kF, 1, false> rows;
  gemv_detail::resolve_rows(p.g, rows);
  pdl_wait();
  float s = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < p.n_sums; i += kWarpSize) s += p.sumsq[i];
  float acc[1];
  const bool holds = gemv_detail::sum_rows<kF, kA, 1, false>(p.g, rows, partial, acc);
  const float inv = rsqrtf(warp_sum(s) / static_cast<float>(p.n) + kEps);
  if (holds && rows.part_of[0] >= 0) p.g.parts[0].y[rows.local_row[0]] = acc[0] * inv;
}

// ---- buffers ----------------------------------------------------------------------

// A q8_0_split matrix [rows, k] of random weights.
uint8_t* random_matrix(int rows, int k, uint32_t seed) {
  uint8_t* w = device_alloc<uint8_t>(q8_0_split_bytes(rows, k));
  fill_q8_0_split(w, rows, k, seed);
  return w;
}

Int8x2 random_int8x2(int n, uint32_t seed) {
  Int8x2 v = device_int8x2(n);
  fill_bytes<<<8, 256>>>(v.qs, n, seed);
  fill_bytes<<<8, 256>>>(v.lo, n, seed + 1);
  fill_floats<<<8, 256>>>(v.d, n / kQ8Block, seed + 2, 0.01f, 0.03f);
  return v;
}

struct Model {
  std::vector<uint8_t*> w_o, w_qkv;
  std::vector<float*> norm_w;
  Int8x2 attn;        // the attention output every layer's output GEMV reads
  float* resid[2];    // residual stream, layer l reads [l % 2] and writes [(l + 1) % 2]
  float* attn_out;    // separate: the output GEMV's product
  Int8x2 xq;          // the Q/K/V GEMV's input
  float* sumsq;       // folded: the partial sums
  float* qkv;         // [kQkvRows]
};

Model make_model() {
  Model m;
  for (int l = 0; l < kLayers; ++l) {
    m.w_o.push_back(random_matrix(kHidden, kAttnDim, 100u + l));
    m.w_qkv.push_back(random_matrix(kQkvRows, kHidden, 200u + l));
    m.norm_w.push_back(device_alloc<float>(kHidden));
    fill_floats<<<4, 256>>>(m.norm_w.back(), kHidden, 300u + l, 0.5f, 1.5f);
  }
  m.attn = random_int8x2(kAttnDim, 400u);
  for (float*& r : m.resid) r = device_alloc<float>(kHidden);
  m.attn_out = device_alloc<float>(kHidden);
  m.xq = device_int8x2(kHidden);
  m.sumsq = device_alloc<float>(kHidden / kQ8Block);
  m.qkv = device_alloc<float>(kQkvRows);
  check_cuda(cudaDeviceSynchronize(), "fill");
  return m;
}

void reset_residual(const Model& m, cudaStream_t s) {
  fill_floats<<<4, 256, 0, s>>>(m.resid[0], kHidden, 500u, -1.0f, 1.0f);
}

// A one-part two-word int8 GEMV y = W x over k.
GemvParams one_part_gemv(const uint8_t* w, float* y, int rows, int k, const Int8x2& x, int split_k) {
  GemvParams g = int8x2_gemv(x, k, split_k);
  g.parts[0] = {w, y, nullptr, nullptr, rows};
  g.n_parts = 1;
  return g;
}

GemvParams output_gemv(const Model& m, int l) { return one_part_gemv(m.w_o[l], m.attn_out, kHidden, kAttnDim, m.attn, 2); }
GemvParams qkv_gemv(const Model& m, int l) { return one_part_gemv(m.w_qkv[l], m.qkv, kQkvRows, kHidden, m.xq, 1); }

void separate_layer(const Model& m, int l, cudaStream_t s) {
  check_cuda(launch_gemv<kF, kA, 1, false>(output_gemv(m, l), s), "output gemv");
  RmsNormParams n{};
  n.x = m.resid[l % 2];
  n.residual = m.attn_out;
  n.h_out = m.resid[(l + 1) % 2];
  n.w = m.norm_w[l];
  n.out_qs = m.xq.qs;
  n.out_lo = m.xq.lo;
  n.out_d = m.xq.d;
  n.eps = kEps;
  n.n = kHidden;
  check_cuda(launch_rms_norm<true, true>(n, s), "rms_norm");
  check_cuda(launch_gemv<kF, kA, 1, false>(qkv_gemv(m, l), s), "qkv gemv");
}

template <int Groups, bool Exchange = true>
void folded_layer(const Model& m, int l, cudaStream_t s) {
  NormOutParams p{};
  p.g = output_gemv(m, l);
  static_assert(2 * Groups <= 32, "a block of at most 32 warps at split 2");
  p.g.parts[0].y = m.resid[(l + 1) % 2];
  p.g.parts[0].residual = m.resid[l % 2];
  p.norm_w = m.norm_w[l];
  p.out = m.xq;
  p.out_sumsq = m.sumsq;
  const dim3 block(kWarpSize, Groups * p.g.split_k);
  check_cuda(launch_kernel(gemv_norm_out_kernel<Groups, Exchange>, kHidden / Groups, block, 0, s, p,
                      dim3(Exchange ? kQ8Block / Groups : 1, 1, 1)),
        "folded output gemv");
  ScaledParams q{};
  q.g = qkv_gemv(m, l);
  q.sumsq = m.sumsq;
  q.n_sums = kHidden / kQ8Block;
  q.n = kHidden;
  const int groups = gemv_groups_per_block(q.g.split_k);
  check_cuda(launch_kernel(gemv_scaled_kernel, kQkvRows / groups, dim3(kWarpSize, groups * q.g.split_k), 0, s, q),
        "scaled qkv gemv");
}

using LayerFn = void (*)(const Model&, int, cudaStream_t);

// One pass of every layer, then h and the last layer's Q/K/V back to the host.
void run_once(const Model& m, LayerFn layer, cudaStream_t s, std::vector<float>& h, std::vector<float>& qkv) {
  reset_residual(m, s);
  for (int l = 0; l < kLayers; ++l) layer(m, l, s);
  h.resize(kHidden);
  qkv.resize(kQkvRows);
  check_cuda(cudaMemcpyAsync(h.data(), m.resid[kLayers % 2], kHidden * sizeof(float), cudaMemcpyDeviceToHost, s), "h");
  check_cuda(cudaMemcpyAsync(qkv.data(), m.qkv, kQkvRows * sizeof(float), cudaMemcpyDeviceToHost, s), "qkv");
  check_cuda(cudaStreamSynchronize(s), "run");
}

double worst_rel(const std::vector<float>& a, const std::vector<float>& b) {
  double scale = 0.0, worst = 0.0;
  for (float v : a) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return scale > 0.0 ? worst / scale : worst;
}

// µs a layer: the chain captured once, replayed, median over the replays.
double time_chain(const Model& m, LayerFn layer, cudaStream_t s, int replays) {
  auto record = [&](cudaStream_t st) {
    for (int l = 0; l < kLayers; ++l) layer(m, l, st);
  };
  return median_replay_us(record, s, replays, kLayers);
}

}  // namespace

int main(int argc, char** argv) {
  const int replays = argc > 1 ? std::atoi(argv[1]) : 50;
  cudaStream_t s;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  const Model m = make_model();

  std::vector<float> h_sep, qkv_sep;
  run_once(m, separate_layer, s, h_sep, qkv_sep);
  struct Variant {
    const char* name;
    LayerFn fn;
  };
  const Variant folded[] = {{"folded_g4_cluster8", folded_layer<4>},
                            {"folded_g8_cluster4", folded_layer<8>},
                            {"folded_g16_cluster2", folded_layer<16>}};
  std::vector<float> h_floor, qkv_floor;
  run_once(m, folded_layer<4, false>, s, h_floor, qkv_floor);
  std::printf("{\n  \"floor_no_exchange_us_a_layer\": %.3f,\n", time_chain(m, folded_layer<4, false>, s, replays));
  std::printf("  \"layers\": %d,\n  \"separate_us_a_layer\": %.3f", kLayers, time_chain(m, separate_layer, s, replays));
  bool ok = true;
  for (const Variant& v : folded) {
    std::vector<float> h, qkv;
    run_once(m, v.fn, s, h, qkv);
    const double err_h = worst_rel(h_sep, h), err_qkv = worst_rel(qkv_sep, qkv);
    ok = ok && err_h <= 1e-6 && err_qkv <= 2e-2;
    std::printf(",\n  \"%s\": {\"us_a_layer\": %.3f, \"worst_rel_h\": %.2e, \"worst_rel_qkv\": %.2e}", v.name,
                time_chain(m, v.fn, s, replays), err_h, err_qkv);
  }
  std::printf(",\n  \"agree\": %s\n}\n", ok ? "true" : "false");
  return ok ? 0 : 1;
}
