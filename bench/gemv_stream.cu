// Whether a GEMV whose warps each stream a fixed share of whole rows through
// a software pipeline (D weight chunks a lane in flight, across row ends)
// beats the library's register GEMV in the chain, measured before any
// library or planner work (docs/performance.md).
//
// The library GEMV (kernels/gemv.cuh, q8_0_split weights, two-word int8
// activations) gives each warp one row (or a slice of one, split > 1) and
// walks it one 16-byte chunk a lane per trip; a large grid runs in waves of
// warps, so the launch ends with a partly filled last wave. The stream GEMV
// sizes the grid to one wave: each warp takes RW = ceil(rows / resident
// warps) consecutive rows and loads their 512-byte segments in order, D
// segments ahead of the one it sums, the first E of them before the wait
// (weights are constants). Every warp has the same work, so they all start
// and end together, and the pipeline keeps D chunks a lane in flight
// through each row's warp reduction.
//
// Each figure is µs a GEMV in a chain of 36 launches over distinct weights
// (more than the L2), each GEMV preceded by a one-block launch standing in
// for the norm, rope or SwiGLU launch of the generated programs (it waits,
// spins SPIN_NS, and rewrites one activation word as it is), all with
// programmatic dependent launch, captured once as a CUDA graph; the median
// over 15 replays, less the chain of the stand-ins alone, over 36. Every
// GEMV is checked against a CPU dot product first (relative error at most
// 1e-4). Prints one JSON object.
//   nvcc -std=c++17 -O3 -arch=sm_90 -o gemv_stream bench/gemv_stream.cu && ./gemv_stream [SPIN_NS]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../kernels/lanec_kernels.cuh"
#include "chain_bench.cuh"

namespace {

using namespace lanec::kernels;

constexpr int kLayers = 36;
constexpr int kReplays = 15;
constexpr int kStreamWarps = 8;    // a block
constexpr int kSegmentChunks = 32; // a warp-wide load: 32 lanes x 16 bytes of one row

struct Activations {
  int8_t* qs;
  int8_t* lo;
  float* d;
};

struct StreamParams {
  const uint8_t* w;  // q8_0_split: rows * k int8, then rows * k/32 f16 scales
  float* y;
  Activations x;
  int rows;
  int k;              // a multiple of 512
  int rows_per_warp;
};

using Chunk = gemv_detail::WChunk;
using XChunk = gemv_detail::XChunk<WeightFormat::q8_0_split, Activation::int8x2>;

// The next segment a warp loads: row `row` (of end), segment `seg` of S.
struct Cursor {
  int row, seg;
};

__device__ __forceinline__ void load_next(const StreamParams& p, Cursor& at, int end, int segs, int lane, Chunk& out) {
  if (at.row >= end) return;
  const uint8_t* row_ptr = p.w + static_cast<size_t>(at.row) * p.k;
  const uint16_t* scale_ptr = reinterpret_cast<const uint16_t*>(p.w + static_cast<size_t>(p.rows) * p.k) +
                              static_cast<size_t>(at.row) * (p.k / kQ8Block);
  out = gemv_detail::load_w<WeightFormat::q8_0_split>(row_ptr, scale_ptr, at.seg * kSegmentChunks + lane);
  if (++at.seg == segs) {
    at.seg = 0;
    ++at.row;
  }
}

template <int D, int E>
__global__ void __launch_bounds__(kStreamWarps* kWarpSize) gemv_stream_kernel(const __grid_constant__ StreamParams p) {
  static_assert(E >= 0 && E <= D, "E of the D chunks load before the wait");
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(blockIdx.x) * kStreamWarps + static_cast<int>(threadIdx.x) / kWarpSize;
  const int first = warp * p.rows_per_warp;
  const int end = min(first + p.rows_per_warp, p.rows);
  const int segs = p.k / (kSegmentChunks * 16);
  Cursor ahead{first, 0};
  Chunk buf[D];
#pragma unroll
  for (int j = 0; j < E; ++j) load_next(p, ahead, end, segs, lane, buf[j]);
  pdl_wait();
#pragma unroll
  for (int j = E; j < D; ++j) load_next(p, ahead, end, segs, lane, buf[j]);
  Cursor at{first, 0};
  float acc = 0.0f;
  while (at.row < end) {
#pragma unroll
    for (int j = 0; j < D; ++j) {
      if (at.row < end) {  // warp-uniform
        const int c = at.seg * kSegmentChunks + lane;
        XChunk x;
        x.q = __ldg(reinterpret_cast<const int4*>(p.x.qs) + c);
        x.lo = __ldg(reinterpret_cast<const int4*>(p.x.lo) + c);
        x.d = __ldg(p.x.d + c / 2);
        acc += gemv_detail::dot_chunk<WeightFormat::q8_0_split, Activation::int8x2>(buf[j], x);
        load_next(p, ahead, end, segs, lane, buf[j]);
        if (++at.seg == segs) {
          acc = warp_sum(acc);
          if (lane == 0) p.y[at.row] = acc;
          acc = 0.0f;
          at.seg = 0;
          ++at.row;
        }
      }
    }
  }
}

// Rows a warp for one wave of resident warps on this device.
template <int D, int E>
int stream_rows_per_warp(int rows) {
  static const int resident = resident_blocks(gemv_stream_kernel<D, E>, kStreamWarps * kWarpSize) * kStreamWarps;
  return ceil_div(rows, resident);
}

template <int D, int E>
int stream_registers() {
  cudaFuncAttributes a{};
  cudaFuncGetAttributes(&a, gemv_stream_kernel<D, E>);
  return a.numRegs;
}

template <int D, int E>
cudaError_t launch_stream(StreamParams p, cudaStream_t stream) {
  p.rows_per_warp = stream_rows_per_warp<D, E>(p.rows);
  const int warps = ceil_div(p.rows, p.rows_per_warp);
  return launch_kernel(gemv_stream_kernel<D, E>, dim3(ceil_div(warps, kStreamWarps)), dim3(kStreamWarps * kWarpSize), 0,
                       stream, p);
}

struct Shape {
  const char* name;
  int rows, k;
};

enum class Kind { none, lib_s1, lib_s2, lib_s4, st_2_1, st_4_1, st_4_4, st_8_1, st_8_4, st_8_8 };
constexpr Kind kKinds[] = {Kind::lib_s1, Kind::lib_s2, Kind::lib_s4, Kind::st_2_1, Kind::st_4_1,
                           Kind::st_4_4, Kind::st_8_1, Kind::st_8_4, Kind::st_8_8};
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::lib_s1: return "library_split1";
    case Kind::lib_s2: return "library_split2";
    case Kind::lib_s4: return "library_split4";
    case Kind::st_2_1: return "stream_d2_e1";
    case Kind::st_4_1: return "stream_d4_e1";
    case Kind::st_4_4: return "stream_d4_e4";
    case Kind::st_8_1: return "stream_d8_e1";
    case Kind::st_8_4: return "stream_d8_e4";
    case Kind::st_8_8: return "stream_d8_e8";
    default: return "none";
  }
}
int kind_registers(Kind k) {
  switch (k) {
    case Kind::st_2_1: return stream_registers<2, 1>();
    case Kind::st_4_1: return stream_registers<4, 1>();
    case Kind::st_4_4: return stream_registers<4, 4>();
    case Kind::st_8_1: return stream_registers<8, 1>();
    case Kind::st_8_4: return stream_registers<8, 4>();
    case Kind::st_8_8: return stream_registers<8, 8>();
    default: return 0;
  }
}

struct Setup {
  long long spin_ns;
  Shape shape;
  std::vector<uint8_t*> w;
  std::vector<float*> y;
  Activations x;
};

void launch_library(const Setup& s, int layer, int split, cudaStream_t stream) {
  GemvParams p{};
  p.parts[0].w = s.w[layer];
  p.parts[0].y = s.y[layer];
  p.parts[0].rows = s.shape.rows;
  p.n_parts = 1;
  p.k = s.shape.k;
  p.x_qs = s.x.qs;
  p.x_lo = s.x.lo;
  p.x_d = s.x.d;
  p.split_k = split;
  LANEC_CUDA_CHECK((launch_gemv<WeightFormat::q8_0_split, Activation::int8x2, 1, false>(p, stream)));
}

void launch(const Setup& s, int layer, Kind kind, cudaStream_t stream) {
  LANEC_CUDA_CHECK(launch_kernel(lanec::bench::stand_in_kernel, dim3(1), dim3(32), 0, stream,
                                 lanec::bench::StandInParams{s.x.qs, s.spin_ns}));
  const StreamParams p{s.w[layer], s.y[layer], s.x, s.shape.rows, s.shape.k, 1};
  switch (kind) {
    case Kind::none: return;
    case Kind::lib_s1: return launch_library(s, layer, 1, stream);
    case Kind::lib_s2: return launch_library(s, layer, 2, stream);
    case Kind::lib_s4: return launch_library(s, layer, 4, stream);
    case Kind::st_2_1: LANEC_CUDA_CHECK((launch_stream<2, 1>(p, stream))); return;
    case Kind::st_4_1: LANEC_CUDA_CHECK((launch_stream<4, 1>(p, stream))); return;
    case Kind::st_4_4: LANEC_CUDA_CHECK((launch_stream<4, 4>(p, stream))); return;
    case Kind::st_8_1: LANEC_CUDA_CHECK((launch_stream<8, 1>(p, stream))); return;
    case Kind::st_8_4: LANEC_CUDA_CHECK((launch_stream<8, 4>(p, stream))); return;
    case Kind::st_8_8: LANEC_CUDA_CHECK((launch_stream<8, 8>(p, stream))); return;
  }
}

// Worst relative error of layer 0's output against a CPU dot product.
double check(const Setup& s, Kind kind, cudaStream_t stream, const std::vector<uint8_t>& w0,
             const std::vector<int8_t>& qs, const std::vector<int8_t>& lo, const std::vector<float>& d) {
  const int rows = s.shape.rows, k = s.shape.k;
  LANEC_CUDA_CHECK(cudaMemsetAsync(s.y[0], 0xff, sizeof(float) * rows, stream));  // NaN where a row is missed
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
    const double err = std::fabs(y[r] - ref) / std::max(mag, 1e-30);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const long long spin_ns = argc > 1 ? std::atoll(argv[1]) : 1500;
  const Shape shapes[] = {
      {"8b_gate_up", 24576, 4096}, {"8b_down", 4096, 12288},    {"8b_qkv", 6144, 4096},
      {"8b_out", 4096, 4096},      {"1.7b_gate_up", 12288, 2048}, {"1.7b_qkv", 4096, 2048},
      {"1.7b_down", 2048, 6144},   {"0.6b_gate_up", 6144, 1024}, {"0.6b_qkv", 4096, 1024},
  };
  cudaStream_t stream;
  LANEC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::mt19937 rng(20261203);
  std::printf("{\"layers\": %d, \"replays\": %d, \"stand_in_spin_ns\": %lld, \"registers\": {", kLayers, kReplays,
              spin_ns);
  bool first_kind = true;
  for (Kind kind : kKinds) {
    if (kind_registers(kind) == 0) continue;
    std::printf("%s\"%s\": %d", first_kind ? "" : ", ", kind_name(kind), kind_registers(kind));
    first_kind = false;
  }
  std::printf("}, \"shapes\": [\n");
  bool first = true, all_ok = true;
  for (const Shape& shape : shapes) {
    Setup s{spin_ns, shape, {}, {}, {}};
    const size_t qs_bytes = static_cast<size_t>(shape.rows) * shape.k;
    const size_t w_bytes = qs_bytes + qs_bytes / 16;
    std::vector<uint8_t> w0(w_bytes);
    for (size_t i = 0; i < qs_bytes; i += 4) {
      const uint32_t r = rng();
      std::memcpy(&w0[i], &r, 4);
    }
    uint16_t* sc = reinterpret_cast<uint16_t*>(w0.data() + qs_bytes);
    std::uniform_real_distribution<float> scale_dist(0.001f, 0.01f);
    for (size_t i = 0; i < qs_bytes / kQ8Block; ++i) sc[i] = __half_as_ushort(__float2half(scale_dist(rng)));
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

    auto replay = [&](Kind kind) {
      auto record = [&](cudaStream_t st) {
        for (int l = 0; l < kLayers; ++l) launch(s, l, kind, st);
      };
      return static_cast<float>(lanec::bench::median_replay_us(record, stream, kReplays, 1));
    };
    const float none_us = replay(Kind::none);
    std::printf("%s  {\"shape\": \"%s\", \"rows\": %d, \"k\": %d, \"mb\": %.2f, \"stand_in_us\": %.3f", first ? "" : ",\n",
                shape.name, shape.rows, shape.k, w_bytes / 1e6, none_us / kLayers);
    first = false;
    for (Kind kind : kKinds) {
      const double err = check(s, kind, stream, w0, qs, lo, d);
      const bool ok = err <= 1e-4;
      all_ok = all_ok && ok;
      const float us = (replay(kind) - none_us) / kLayers;
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
