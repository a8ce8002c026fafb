// Whether the GEMVs would stream faster with their weights fetched by the
// copy engine of each SM (cp.async.bulk into shared memory, completion on an
// mbarrier) than by the library's register loop, measured before any library
// or planner work (docs/performance.md).
//
// The library GEMV (kernels/gemv.cuh, q8_0_split weights, two-word int8
// activations, one row a warp) keeps one 16-byte chunk of each row a lane in
// flight: 64 warps an SM, 32 KB an SM, and the first chunk loads before the
// wait. The bulk GEMV gives each block R consecutive rows (R = warps / split):
// before the wait, thread 0 asks for the block's R rows of weights and their
// scales (contiguous in q8_0_split) with two bulk copies into shared memory;
// after the wait, the warps read their activation chunks (as the library
// does), wait on the mbarrier and take the weights from shared memory. So a
// block's whole share of the matrix is in flight from its start, and the
// first wave's share is requested while the previous launch still runs.
//
// Each figure is µs a GEMV in a chain of 36 launches over distinct weights
// (more than the L2), each GEMV preceded by a one-block launch standing in
// for the norm or quantize launch of the generated programs (it rewrites the
// activations, unchanged), all with programmatic dependent launch, captured
// once as a CUDA graph; the median over 15 replays, less the chain of the
// stand-ins alone, over 36. Both GEMVs are checked against a CPU dot product
// first (relative error at most 1e-4). Prints one JSON object.
// The optional argument is the stand-in's spin in ns after its wait (0).
//   nvcc -std=c++17 -O2 -arch=sm_90 -o gemv_bulk bench/gemv_bulk.cu && ./gemv_bulk [SPIN_NS]
#include <cuda/ptx>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../kernels/lanec_kernels.cuh"
#include "chain_bench.cuh"

namespace {

namespace ptx = cuda::ptx;
using namespace lanec::kernels;

constexpr int kLayers = 36;
constexpr int kReplays = 15;

struct Activations {
  int8_t* qs;
  int8_t* lo;
  float* d;
};

struct BulkParams {
  const uint8_t* w;  // q8_0_split: rows * k int8, then rows * k/32 f16 scales
  float* y;
  Activations x;
  int rows;
  int k;
};

// Block: Warps warps, R = Warps / Split rows; warp w takes row w / Split and
// K slice w % Split, lane l the chunks c = slice*32 + l + j*32*Split.
template <int Warps, int Split>
__global__ void __launch_bounds__(Warps * kWarpSize) gemv_bulk_kernel(const __grid_constant__ BulkParams p) {
  constexpr int kRows = Warps / Split;
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ __align__(8) uint64_t bar;
  __shared__ float partial[Warps];
  const int row0 = static_cast<int>(blockIdx.x) * kRows;
  const int rows = min(kRows, p.rows - row0);
  const uint32_t qs_bytes = static_cast<uint32_t>(rows) * p.k;
  const uint32_t scale_bytes = static_cast<uint32_t>(rows) * (p.k / kQ8Block) * 2;
  uint8_t* s_qs = smem;
  const uint16_t* s_scale = reinterpret_cast<const uint16_t*>(smem + static_cast<size_t>(kRows) * p.k);
  if (threadIdx.x == 0) {  // weights are constants: before the wait
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, qs_bytes + scale_bytes);
    const uint8_t* scales = p.w + static_cast<size_t>(p.rows) * p.k;
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, s_qs, p.w + static_cast<size_t>(row0) * p.k, qs_bytes, &bar);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, smem + static_cast<size_t>(kRows) * p.k,
                       scales + static_cast<size_t>(row0) * (p.k / kQ8Block) * 2, scale_bytes, &bar);
  }
  __syncthreads();  // the barrier is initialized before anyone waits on it
  pdl_wait();
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize, lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int r = warp / Split, slice = warp % Split;
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  float acc = 0.0f;
  if (r < rows) {
    const int n_chunks = p.k / 16;
    const uint8_t* row = s_qs + static_cast<size_t>(r) * p.k;
    const uint16_t* row_scale = s_scale + static_cast<size_t>(r) * (p.k / kQ8Block);
    for (int c = slice * kWarpSize + lane; c < n_chunks; c += kWarpSize * Split) {
      // The library's chunk arithmetic, on the same activation loads.
      gemv_detail::XChunk<WeightFormat::q8_0_split, Activation::int8x2> x;
      x.q = __ldg(reinterpret_cast<const int4*>(p.x.qs) + c);
      x.lo = __ldg(reinterpret_cast<const int4*>(p.x.lo) + c);
      x.d = __ldg(p.x.d + c / 2);
      const gemv_detail::WChunk w{*reinterpret_cast<const int4*>(row + static_cast<size_t>(c) * 16), row_scale[c / 2]};
      acc += gemv_detail::dot_chunk<WeightFormat::q8_0_split, Activation::int8x2>(w, x);
    }
  }
  acc = warp_sum(acc);
  if constexpr (Split > 1) {
    if (lane == 0) partial[warp] = acc;
    __syncthreads();
    if (slice == 0) {
      acc = 0.0f;
      for (int j = 0; j < Split; ++j) acc += partial[warp + j];
    }
  }
  if (lane == 0 && slice == 0 && r < rows) p.y[row0 + r] = acc;
}

template <int Warps, int Split>
cudaError_t launch_bulk(const BulkParams& p, cudaStream_t stream) {
  constexpr int kRows = Warps / Split;
  const size_t smem = static_cast<size_t>(kRows) * p.k + static_cast<size_t>(kRows) * (p.k / kQ8Block) * 2;
  static bool attr_set = false;
  if (!attr_set) {
    LANEC_CUDA_CHECK(cudaFuncSetAttribute(gemv_bulk_kernel<Warps, Split>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          226 * 1024));
    attr_set = true;
  }
  return launch_kernel(gemv_bulk_kernel<Warps, Split>, dim3(ceil_div(p.rows, kRows)), dim3(Warps * kWarpSize), smem,
                       stream, p);
}

struct Shape {
  const char* name;
  int rows, k, lib_split;
};

enum class Kind { lib, bulk_w4_s1, bulk_w4_s2, bulk_w4_s4, bulk_w8_s4, bulk_w8_s1, bulk_w16_s1, none };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::lib: return "library";
    case Kind::bulk_w4_s1: return "bulk_4w_split1";
    case Kind::bulk_w4_s2: return "bulk_4w_split2";
    case Kind::bulk_w4_s4: return "bulk_4w_split4";
    case Kind::bulk_w8_s4: return "bulk_8w_split4";
    case Kind::bulk_w8_s1: return "bulk_8w_split1";
    case Kind::bulk_w16_s1: return "bulk_16w_split1";
    default: return "none";
  }
}

struct Setup {
  long long spin_ns;
  Shape shape;
  std::vector<uint8_t*> w;
  std::vector<float*> y;
  Activations x;
};

void launch(const Setup& s, int layer, Kind kind, cudaStream_t stream) {
  LANEC_CUDA_CHECK(launch_kernel(lanec::bench::stand_in_kernel, dim3(1), dim3(32), 0, stream,
                                 lanec::bench::StandInParams{s.x.qs, s.spin_ns}));
  if (kind == Kind::none) return;
  if (kind == Kind::lib) {
    GemvParams p{};
    p.parts[0].w = s.w[layer];
    p.parts[0].y = s.y[layer];
    p.parts[0].rows = s.shape.rows;
    p.n_parts = 1;
    p.k = s.shape.k;
    p.x_qs = s.x.qs;
    p.x_lo = s.x.lo;
    p.x_d = s.x.d;
    p.split_k = s.shape.lib_split;
    LANEC_CUDA_CHECK((launch_gemv<WeightFormat::q8_0_split, Activation::int8x2, 1, false>(p, stream)));
    return;
  }
  const BulkParams p{s.w[layer], s.y[layer], s.x, s.shape.rows, s.shape.k};
  if (kind == Kind::bulk_w4_s1) LANEC_CUDA_CHECK((launch_bulk<4, 1>(p, stream)));
  if (kind == Kind::bulk_w4_s2) LANEC_CUDA_CHECK((launch_bulk<4, 2>(p, stream)));
  if (kind == Kind::bulk_w4_s4) LANEC_CUDA_CHECK((launch_bulk<4, 4>(p, stream)));
  if (kind == Kind::bulk_w8_s4) LANEC_CUDA_CHECK((launch_bulk<8, 4>(p, stream)));
  if (kind == Kind::bulk_w8_s1) LANEC_CUDA_CHECK((launch_bulk<8, 1>(p, stream)));
  if (kind == Kind::bulk_w16_s1) LANEC_CUDA_CHECK((launch_bulk<16, 1>(p, stream)));
}

// µs of one replay of the chain (median).
float chain_us(const Setup& s, Kind kind, cudaStream_t stream) {
  cudaGraph_t graph;
  LANEC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int l = 0; l < kLayers; ++l) launch(s, l, kind, stream);
  LANEC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  LANEC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  LANEC_CUDA_CHECK(cudaGraphDestroy(graph));
  cudaEvent_t a, b;
  LANEC_CUDA_CHECK(cudaEventCreate(&a));
  LANEC_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < kReplays + 3; ++i) {
    LANEC_CUDA_CHECK(cudaEventRecord(a, stream));
    LANEC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    LANEC_CUDA_CHECK(cudaEventRecord(b, stream));
    LANEC_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0.0f;
    LANEC_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    if (i >= 3) ms.push_back(t);
  }
  LANEC_CUDA_CHECK(cudaEventDestroy(a));
  LANEC_CUDA_CHECK(cudaEventDestroy(b));
  LANEC_CUDA_CHECK(cudaGraphExecDestroy(exec));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e3f;
}

// Worst relative error of layer 0's output against a CPU dot product.
double check(const Setup& s, Kind kind, cudaStream_t stream, const std::vector<uint8_t>& w0,
             const std::vector<int8_t>& qs, const std::vector<int8_t>& lo, const std::vector<float>& d) {
  const int rows = s.shape.rows, k = s.shape.k;
  LANEC_CUDA_CHECK(cudaMemsetAsync(s.y[0], 0, sizeof(float) * rows, stream));
  launch(s, 0, kind, stream);
  std::vector<float> y(rows);
  LANEC_CUDA_CHECK(cudaMemcpyAsync(y.data(), s.y[0], sizeof(float) * rows, cudaMemcpyDeviceToHost, stream));
  LANEC_CUDA_CHECK(cudaStreamSynchronize(stream));
  double worst = 0.0;
  const uint16_t* scales = reinterpret_cast<const uint16_t*>(w0.data() + static_cast<size_t>(rows) * k);
  for (int r = 0; r < rows; ++r) {
    double ref = 0.0, mag = 0.0;
    for (int b = 0; b < k / kQ8Block; ++b) {
      const double wd =
          static_cast<double>(__half2float(__ushort_as_half(scales[static_cast<size_t>(r) * (k / kQ8Block) + b])));
      for (int i = b * kQ8Block; i < (b + 1) * kQ8Block; ++i) {
        const double xv = d[i / kQ8Block] * (qs[i] + lo[i] / 254.0);
        const double term = wd * static_cast<int8_t>(w0[static_cast<size_t>(r) * k + i]) * xv;
        ref += term;
        mag += std::fabs(term);
      }
    }
    worst = std::max(worst, std::fabs(y[r] - ref) / std::max(mag, 1e-30));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const long long spin_ns = argc > 1 ? std::atoll(argv[1]) : 0;
  const Shape shapes[] = {
      {"8b_gate_up", 24576, 4096, 1}, {"8b_down", 4096, 12288, 2}, {"8b_qkv", 6144, 4096, 2},
      {"8b_out", 4096, 4096, 2},      {"0.6b_qkv", 4096, 1024, 1}, {"0.6b_gate_up", 6144, 1024, 1},
      {"0.6b_out", 1024, 2048, 4},    {"0.6b_down", 1024, 3072, 4},
  };
  cudaStream_t stream;
  LANEC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::mt19937 rng(20261202);
  std::printf("{\"layers\": %d, \"replays\": %d, \"stand_in_spin_ns\": %lld, \"shapes\": [\n", kLayers, kReplays,
              spin_ns);
  bool first = true, all_ok = true;
  for (const Shape& shape : shapes) {
    Setup s{spin_ns, shape, {}, {}, {}};
    const size_t w_bytes = static_cast<size_t>(shape.rows) * shape.k + static_cast<size_t>(shape.rows) * shape.k / 16;
    std::vector<uint8_t> w0(w_bytes);
    for (size_t i = 0; i < static_cast<size_t>(shape.rows) * shape.k; ++i) w0[i] = static_cast<uint8_t>(rng());
    uint16_t* sc = reinterpret_cast<uint16_t*>(w0.data() + static_cast<size_t>(shape.rows) * shape.k);
    std::uniform_real_distribution<float> scale_dist(0.001f, 0.01f);
    for (size_t i = 0; i < static_cast<size_t>(shape.rows) * shape.k / kQ8Block; ++i)
      sc[i] = __half_as_ushort(__float2half(scale_dist(rng)));
    for (int l = 0; l < kLayers; ++l) {
      uint8_t* w;
      float* y;
      LANEC_CUDA_CHECK(cudaMalloc(&w, w_bytes));
      LANEC_CUDA_CHECK(cudaMalloc(&y, sizeof(float) * shape.rows));
      LANEC_CUDA_CHECK(cudaMemcpy(w, w0.data(), w_bytes, cudaMemcpyHostToDevice));  // same bytes, distinct memory
      s.w.push_back(w);
      s.y.push_back(y);
    }
    std::vector<int8_t> qs(shape.k), lo(shape.k);
    std::vector<float> d(shape.k / kQ8Block);
    for (int i = 0; i < shape.k; ++i) {
      qs[i] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
      lo[i] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    }
    for (float& v : d) v = scale_dist(rng);
    LANEC_CUDA_CHECK(cudaMalloc(&s.x.qs, shape.k));
    LANEC_CUDA_CHECK(cudaMalloc(&s.x.lo, shape.k));
    LANEC_CUDA_CHECK(cudaMalloc(&s.x.d, sizeof(float) * d.size()));
    LANEC_CUDA_CHECK(cudaMemcpy(s.x.qs, qs.data(), shape.k, cudaMemcpyHostToDevice));
    LANEC_CUDA_CHECK(cudaMemcpy(s.x.lo, lo.data(), shape.k, cudaMemcpyHostToDevice));
    LANEC_CUDA_CHECK(cudaMemcpy(s.x.d, d.data(), sizeof(float) * d.size(), cudaMemcpyHostToDevice));

    const float none_us = chain_us(s, Kind::none, stream);
    std::printf("%s  {\"shape\": \"%s\", \"rows\": %d, \"k\": %d, \"mb\": %.2f, \"stand_in_us\": %.3f", first ? "" : ",\n",
                shape.name, shape.rows, shape.k, w_bytes / 1e6, none_us / kLayers);
    first = false;
    for (Kind kind : {Kind::lib, Kind::bulk_w4_s1, Kind::bulk_w4_s2, Kind::bulk_w4_s4, Kind::bulk_w8_s4, Kind::bulk_w8_s1,
                      Kind::bulk_w16_s1}) {
      const double err = check(s, kind, stream, w0, qs, lo, d);
      const bool ok = err <= 1e-4;
      all_ok = all_ok && ok;
      const float us = (chain_us(s, kind, stream) - none_us) / kLayers;
      std::printf(", \"%s\": {\"us\": %.3f, \"tb_s\": %.3f, \"rel_err\": %.2e%s}", kind_name(kind), us,
                  w_bytes / (us * 1e-6) / 1e12, err, ok ? "" : ", \"FAIL\": true");
    }
    std::printf("}");
    std::fflush(stdout);
    for (int l = 0; l < kLayers; ++l) {
      LANEC_CUDA_CHECK(cudaFree(s.w[l]));
      LANEC_CUDA_CHECK(cudaFree(s.y[l]));
    }
    LANEC_CUDA_CHECK(cudaFree(s.x.qs));
    LANEC_CUDA_CHECK(cudaFree(s.x.lo));
    LANEC_CUDA_CHECK(cudaFree(s.x.d));
  }
  std::printf("\n], \"all_checked\": %s}\n", all_ok ? "true" : "false");
  LANEC_CUDA_CHECK(cudaStreamDestroy(stream));
  return all_ok ? 0 : 1;
}
