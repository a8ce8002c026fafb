// GPU numerics sweep of the lanec kernel library (not part of the CMake build;
// scripts/kernel_sweep.sh builds and runs it on a machine with a GPU).
//
// For every kernel family it builds random inputs from a fresh seed (printed;
// `--seed N` repeats a run; `--only FAMILY` runs one family, e.g. gemv_argmax,
// or one part of a family: attention_tc, gemv_ahead),
// runs the kernel, compares with the plain C++
// references in kernels/reference/, and passes an element when
// |got - ref| <= atol + |ref| * rtol (some checks scale atol per element by the
// sum of |terms| behind it, stated where used). One line per kernel/shape;
// on failure the worst element and the first few failing pairs; invalid
// parameter combinations are launched and must be refused. Ends with
// "N passed, M failed"; the exit status is 1 when anything failed.
#include <algorithm>
#include <cstdarg>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/lanec_kernels.cuh"
#include "kernels/reference/ops.h"

using namespace lanec::kernels;

namespace {

int g_passed = 0;
int g_failed = 0;
std::mt19937_64 g_rng;

// ---- device buffers -------------------------------------------------------------

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) { LANEC_CUDA_CHECK(cudaMalloc(&ptr_, std::max<size_t>(n, 1) * sizeof(T))); }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void upload(const std::vector<T>& host) {
    LANEC_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    LANEC_CUDA_CHECK(cudaDeviceSynchronize());
    LANEC_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
  size_t n_;
};

// ---- random data -------------------------------------------------------------

std::vector<float> random_floats(size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(g_rng);
  return v;
}

int random_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_rng); }

// ---- comparison --------------------------------------------------------------

template <typename T>
std::vector<float> to_float(const std::vector<T>& v) {
  return std::vector<float>(v.begin(), v.end());
}

// Passes when every |got - ref| <= atol * atol_scale[i] + |ref| * rtol
// (atol_scale empty: 1). Prints one summary line; on failure the worst
// element and the first failing pairs.
bool check(const std::string& name, const std::vector<float>& got, const std::vector<float>& ref, double atol,
           double rtol, const std::vector<float>& atol_scale = {}) {
  if (got.size() != ref.size()) {
    std::printf("FAIL  %-62s size %zu != %zu\n", name.c_str(), got.size(), ref.size());
    ++g_failed;
    return false;
  }
  size_t worst = 0, n_bad = 0;
  double worst_ratio = -1.0, worst_err = 0.0;
  std::vector<size_t> bad;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
    const double tol = atol * (atol_scale.empty() ? 1.0 : atol_scale[i]) + std::fabs(ref[i]) * rtol;
    const double ratio = std::isnan(err) ? INFINITY : (tol > 0 ? err / tol : (err > 0 ? INFINITY : 0.0));
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
      worst_err = err;
    }
    if (!(err <= tol)) {
      ++n_bad;
      if (bad.size() < 6) bad.push_back(i);
    }
  }
  const bool ok = n_bad == 0;
  std::printf("%s  %-62s max_err=%.3g at [%zu] (err/tol=%.3g)\n", ok ? "PASS" : "FAIL", name.c_str(), worst_err,
              worst, worst_ratio);
  if (!ok) {
    std::printf("      %zu of %zu elements out of tolerance (atol=%g rtol=%g); worst [%zu] got=%.9g ref=%.9g\n", n_bad,
                got.size(), atol, rtol, worst, static_cast<double>(got[worst]), static_cast<double>(ref[worst]));
    for (size_t i : bad)
      std::printf("      [%zu] got=%.9g ref=%.9g\n", i, static_cast<double>(got[i]), static_cast<double>(ref[i]));
  }
  (ok ? g_passed : g_failed)++;
  return ok;
}

// An illegal parameter combination must be refused by the launcher.
void expect_refused(const std::string& name, cudaError_t err) {
  const bool ok = err == cudaErrorInvalidValue;
  std::printf("%s  invalid combination refused: %-33s (%s)\n", ok ? "PASS" : "FAIL", name.c_str(),
              cudaGetErrorName(err));
  (ok ? g_passed : g_failed)++;
  cudaGetLastError();  // clear
}

void expect_ok(const std::string& name, cudaError_t err) {
  if (err != cudaSuccess) {
    std::printf("FAIL  %s: launch returned %s\n", name.c_str(), cudaGetErrorName(err));
    ++g_failed;
    std::exit(1);
  }
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list args;
  va_start(args, f);
  std::vsnprintf(buf, sizeof buf, f, args);
  va_end(args);
  return buf;
}

// ---- weights in every format ----------------------------------------------------

const char* format_name(WeightFormat f) {
  switch (f) {
    case WeightFormat::f32: return "f32";
    case WeightFormat::f16: return "f16";
    case WeightFormat::bf16: return "bf16";
    case WeightFormat::q8_0: return "q8_0";
    case WeightFormat::q8_0_split: return "q8_0_split";
    case WeightFormat::q4_0: return "q4_0";
    case WeightFormat::q4_k: return "q4_k";
    case WeightFormat::q6_k: return "q6_k";
  }
  return "?";
}

void put_f16(uint8_t* p, float v) {
  const uint16_t h = ref::f32_to_f16(v);
  p[0] = static_cast<uint8_t>(h & 0xff);
  p[1] = static_cast<uint8_t>(h >> 8);
}

struct HostWeights {
  std::vector<uint8_t> bytes;  // the format's layout (GGUF rows; q8_0_split: repacked planes)
  std::vector<float> values;   // [rows, k] dequantized by the reference
};

// GGUF Q8_0 rows -> q8_0_split planes (the host model of launch_repack_q8_0).
std::vector<uint8_t> split_q8_0(const std::vector<uint8_t>& raw, int rows, int k) {
  std::vector<uint8_t> out(q8_0_split_bytes(rows, k));
  const size_t n_blocks = static_cast<size_t>(rows) * (k / kQ8Block);
  for (size_t b = 0; b < n_blocks; ++b) {
    std::memcpy(&out[b * kQ8Block], &raw[b * 34 + 2], kQ8Block);
    std::memcpy(&out[q8_0_split_scale_offset(rows, k) + 2 * b], &raw[b * 34], 2);
  }
  return out;
}

// Random weights: plain formats from uniform values in [-1, 1]; block formats
// from random bytes with their f16 scales replaced by small finite values.
HostWeights make_weights(WeightFormat f, int rows, int k) {
  HostWeights w;
  const size_t n = static_cast<size_t>(rows) * k;
  w.values.resize(n);
  if (f == WeightFormat::f32) {
    w.values = random_floats(n, -1.0f, 1.0f);
    w.bytes.resize(n * 4);
    std::memcpy(w.bytes.data(), w.values.data(), n * 4);
    return w;
  }
  if (f == WeightFormat::f16 || f == WeightFormat::bf16) {
    const auto src = random_floats(n, -1.0f, 1.0f);
    w.bytes.resize(n * 2);
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = f == WeightFormat::f16 ? ref::f32_to_f16(src[i])
                                                : static_cast<uint16_t>(ref::f32_to_bits(src[i]) >> 16);
      std::memcpy(&w.bytes[2 * i], &h, 2);
      w.values[i] = f == WeightFormat::f16 ? ref::f16_to_f32(h) : ref::bf16_to_f32(h);
    }
    return w;
  }
  const WeightFormat gguf = f == WeightFormat::q8_0_split ? WeightFormat::q8_0 : f;
  const size_t row_bytes = weight_row_bytes(gguf, k);
  const size_t block_bytes = row_bytes / (k / weight_block_elems(gguf));
  w.bytes.resize(row_bytes * rows);
  for (auto& b : w.bytes) b = static_cast<uint8_t>(random_int(0, 255));
  for (size_t off = 0; off < w.bytes.size(); off += block_bytes) {
    uint8_t* blk = &w.bytes[off];
    switch (gguf) {
      case WeightFormat::q8_0:
      case WeightFormat::q4_0: put_f16(blk, random_floats(1, -0.05f, 0.05f)[0]); break;
      case WeightFormat::q4_k:
        put_f16(blk, random_floats(1, 0.0f, 0.01f)[0]);
        put_f16(blk + 2, random_floats(1, 0.0f, 0.01f)[0]);
        break;
      case WeightFormat::q6_k: put_f16(blk + 208, random_floats(1, -0.002f, 0.002f)[0]); break;
      default: break;
    }
  }
  for (int r = 0; r < rows; ++r) {
    const uint8_t* row = &w.bytes[row_bytes * r];
    float* out = &w.values[static_cast<size_t>(r) * k];
    switch (gguf) {
      case WeightFormat::q8_0: ref::dequant_q8_0_row(row, k, out); break;
      case WeightFormat::q4_0: ref::dequant_q4_0_row(row, k, out); break;
      case WeightFormat::q4_k: ref::dequant_q4_k_row(row, k, out); break;
      case WeightFormat::q6_k: ref::dequant_q6_k_row(row, k, out); break;
      default: break;
    }
  }
  if (f == WeightFormat::q8_0_split) w.bytes = split_q8_0(w.bytes, rows, k);
  return w;
}

// ---- embed -------------------------------------------------------------------------

template <WeightFormat F, bool Norm>
void sweep_embed_case(int n_rows, int dim) {
  const HostWeights w = make_weights(F, n_rows, dim);
  const int token = random_int(0, n_rows - 1);
  const auto norm_w = random_floats(static_cast<size_t>(dim), 0.5f, 1.5f);
  DeviceBuffer<uint8_t> table(w.bytes);
  DeviceBuffer<int> d_token(std::vector<int>{token});
  DeviceBuffer<float> d_w(norm_w), out(static_cast<size_t>(dim));
  EmbedParams p{};
  p.table = table.get();
  p.token = d_token.get();
  p.out = out.get();
  p.norm_w = d_w.get();
  p.eps = 1e-6f;
  p.n_rows = n_rows;
  p.dim = dim;
  expect_ok("embed", launch_embed<F, Norm>(p, nullptr));
  std::vector<float> ref(w.values.begin() + static_cast<long>(token) * dim,
                         w.values.begin() + static_cast<long>(token + 1) * dim);
  if (Norm) ref = ref::rms_norm(ref, norm_w, p.eps);
  check(fmt("embed%s %s rows=%d dim=%d token=%d", Norm ? "_norm" : "", format_name(F), n_rows, dim, token),
        out.download(), ref, Norm ? 1e-6 : 0.0, Norm ? 2e-6 : 0.0);
}

template <WeightFormat F>
void sweep_embed_format() {
  for (int dim : {256, 1024, 3584, 4096}) {
    if (dim % weight_block_elems(F) != 0) {
      std::printf("SKIP  embed %s dim=%d: not a multiple of the %d-element block (invalid shape)\n", format_name(F),
                  dim, weight_block_elems(F));
      continue;
    }
    sweep_embed_case<F, false>(37, dim);
    sweep_embed_case<F, true>(37, dim);
  }
}

void sweep_embed() {
  sweep_embed_format<WeightFormat::f32>();
  sweep_embed_format<WeightFormat::f16>();
  sweep_embed_format<WeightFormat::bf16>();
  sweep_embed_format<WeightFormat::q8_0>();
  sweep_embed_format<WeightFormat::q8_0_split>();
  sweep_embed_format<WeightFormat::q4_0>();
  sweep_embed_format<WeightFormat::q4_k>();
  sweep_embed_format<WeightFormat::q6_k>();
  // An out-of-range token id gathers zeros.
  DeviceBuffer<float> table(random_floats(64 * 4, -1, 1)), out(64);
  DeviceBuffer<int> token(std::vector<int>{4});
  EmbedParams p{};
  p.table = table.get();
  p.token = token.get();
  p.out = out.get();
  p.n_rows = 4;
  p.dim = 64;
  expect_ok("embed", launch_embed<WeightFormat::f32, false>(p, nullptr));
  check("embed f32 token out of range -> zeros", out.download(), std::vector<float>(64, 0.0f), 0.0, 0.0);
  p.dim = 48;
  expect_refused("embed q8_0 dim=48", launch_embed<WeightFormat::q8_0, false>(p, nullptr));
}

// The two-word int8 form of x as the reference quantizes it.
struct Int8Words {
  std::vector<int8_t> qs, lo;
  std::vector<float> d;
};

Int8Words reference_words(const std::vector<float>& x) {
  const int n = static_cast<int>(x.size());
  Int8Words w{std::vector<int8_t>(x.size()), std::vector<int8_t>(x.size()),
              std::vector<float>(x.size() / kQ8Block)};
  ref::quantize_q8(x.data(), n, w.qs.data(), w.d.data());
  ref::quantize_q8_low(x.data(), n, w.qs.data(), w.d.data(), w.lo.data());
  return w;
}

// A launch's words and scales against `want`, exactly: the same IEEE
// divisions (d and its reciprocal), products, fused multiply-add and
// rounding on both sides.
void check_words(const std::string& tag, const Int8Words& want, const DeviceBuffer<int8_t>& qs,
                 const DeviceBuffer<int8_t>& lo, const DeviceBuffer<float>& d) {
  check(tag + " d", d.download(), want.d, 0.0, 0.0);
  check(tag + " qs", to_float(qs.download()), to_float(want.qs), 0.0, 0.0);
  check(tag + " low words", to_float(lo.download()), to_float(want.lo), 0.0, 0.0);
}

// The SwiGLU formed by the quantize launch (where glu_pair declines): the f32
// value within float rounding of silu(gate) * up (expf against exp), and its
// words exactly the quantization of the launch's own f32 values; int8-only too.
void sweep_swiglu_quantize() {
  for (int n : {32, 3072, 12288}) {
    const auto gate = random_floats(static_cast<size_t>(n), -6.0f, 6.0f);
    const auto up = random_floats(static_cast<size_t>(n), -3.0f, 3.0f);
    DeviceBuffer<float> d_gate(gate), d_up(up), d_out(static_cast<size_t>(n)), d_d(static_cast<size_t>(n / kQ8Block));
    DeviceBuffer<int8_t> d_qs(static_cast<size_t>(n)), d_lo(static_cast<size_t>(n));
    QuantizeParams p{d_gate.get(), d_qs.get(), d_d.get(), n, d_lo.get(), d_up.get(), d_out.get()};
    expect_ok("swiglu quantize", launch_quantize_q8<true>(p, nullptr));
    std::vector<float> want(static_cast<size_t>(n));
    for (size_t i = 0; i < want.size(); ++i) want[i] = ref::silu(gate[i]) * up[i];
    const std::vector<float> got = d_out.download();
    check(fmt("swiglu quantize n=%d f32", n), got, want, 1e-6, 2e-6);
    const Int8Words words = reference_words(got);
    check_words(fmt("swiglu quantize n=%d", n), words, d_qs, d_lo, d_d);
    // int8 only: the same words without the f32 form.
    DeviceBuffer<int8_t> d_qs2(static_cast<size_t>(n)), d_lo2(static_cast<size_t>(n));
    DeviceBuffer<float> d_d2(static_cast<size_t>(n / kQ8Block));
    QuantizeParams q = p;
    q.out = nullptr;
    q.out_qs = d_qs2.get();
    q.out_lo = d_lo2.get();
    q.out_d = d_d2.get();
    expect_ok("swiglu quantize int8 only", launch_quantize_q8<true>(q, nullptr));
    check_words(fmt("swiglu quantize n=%d int8 only", n), words, d_qs2, d_lo2, d_d2);
  }
  QuantizeParams missing_up{};
  missing_up.n = 32;
  expect_refused("swiglu quantize without an up vector", launch_quantize_q8<true>(missing_up, nullptr));
}

// ---- rms norm / quantize ------------------------------------------------------------

template <bool AddResidual, bool Quantize>
void sweep_rms_norm_case(int n) {
  const auto x = random_floats(static_cast<size_t>(n), -2.0f, 2.0f);
  const auto res = random_floats(static_cast<size_t>(n), -2.0f, 2.0f);
  const auto w = random_floats(static_cast<size_t>(n), 0.5f, 1.5f);
  DeviceBuffer<float> d_x(x), d_res(res), d_w(w), h(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  DeviceBuffer<float> d_d(static_cast<size_t>(n / kQ8Block));
  DeviceBuffer<int8_t> d_qs(static_cast<size_t>(n));
  RmsNormParams p{};
  p.x = d_x.get();
  p.residual = d_res.get();
  p.h_out = h.get();
  p.w = d_w.get();
  p.out = out.get();
  p.out_qs = d_qs.get();
  p.out_d = d_d.get();
  p.eps = 1e-5f;
  p.n = n;
  expect_ok("rms_norm", launch_rms_norm<AddResidual, Quantize>(p, nullptr));
  std::vector<float> h_ref = x;
  if (AddResidual)
    for (int i = 0; i < n; ++i) h_ref[i] = x[i] + res[i];
  const auto y_ref = ref::rms_norm(h_ref, w, p.eps);
  const std::string tag = fmt("rms_norm%s%s n=%d", AddResidual ? "+residual" : "", Quantize ? "+int8" : "", n);
  check(tag + " y", out.download(), y_ref, 1e-6, 2e-6);
  if (AddResidual) {
    check(tag + " h", h.download(), h_ref, 0.0, 0.0);
    // In place (h over x): blocks past the first would read what one wrote.
    DeviceBuffer<float> x_in_place(x), out_in_place(static_cast<size_t>(n));
    RmsNormParams q = p;
    q.x = q.h_out = x_in_place.get();
    q.out = out_in_place.get();
    q.out_qs = nullptr;
    q.out_d = nullptr;
    expect_ok("rms_norm in place", launch_rms_norm<AddResidual, false>(q, nullptr));
    check(tag + " in place: h", x_in_place.download(), h_ref, 0.0, 0.0);
    check(tag + " in place: y", out_in_place.download(), y_ref, 1e-6, 2e-6);
  } else {
    // In place (y over x).
    DeviceBuffer<float> x_in_place(x);
    RmsNormParams q = p;
    q.x = q.out = x_in_place.get();
    q.out_qs = nullptr;
    q.out_d = nullptr;
    expect_ok("rms_norm in place", launch_rms_norm<AddResidual, false>(q, nullptr));
    check(tag + " in place: y", x_in_place.download(), y_ref, 1e-6, 2e-6);
  }
  if (Quantize) {
    std::vector<int8_t> qs_ref(static_cast<size_t>(n));
    std::vector<float> d_ref(static_cast<size_t>(n / kQ8Block));
    ref::quantize_q8(y_ref.data(), n, qs_ref.data(), d_ref.data());
    check(tag + " d", d_d.download(), d_ref, 0.0, 2e-6);
    // y within float rounding of the reference may round to the neighbouring step.
    check(tag + " qs", to_float(d_qs.download()), to_float(qs_ref), 1.0, 0.0);
    // The two-word form: the same high words, and the low words of the kernel's own y.
    const auto y = out.download();
    const auto qs_one_word = to_float(d_qs.download());
    DeviceBuffer<int8_t> d_lo(static_cast<size_t>(n));
    p.out_lo = d_lo.get();
    expect_ok("rms_norm two words", launch_rms_norm<AddResidual, Quantize>(p, nullptr));
    std::vector<int8_t> qs_y(static_cast<size_t>(n)), lo_ref(static_cast<size_t>(n));
    std::vector<float> d_y(static_cast<size_t>(n / kQ8Block));
    ref::quantize_q8(y.data(), n, qs_y.data(), d_y.data());
    ref::quantize_q8_low(y.data(), n, qs_y.data(), d_y.data(), lo_ref.data());
    check(tag + " two words: qs", to_float(d_qs.download()), qs_one_word, 0.0, 0.0);
    check(tag + " two words: low words", to_float(d_lo.download()), to_float(lo_ref), 0.0, 0.0);
    // The int8 form alone (out = nullptr, as the planner emits it): the same bits.
    const auto d_two_words = d_d.download();
    p.out = nullptr;
    expect_ok("rms_norm int8 only", launch_rms_norm<AddResidual, Quantize>(p, nullptr));
    check(tag + " int8 only: qs", to_float(d_qs.download()), qs_one_word, 0.0, 0.0);
    check(tag + " int8 only: d", d_d.download(), d_two_words, 0.0, 0.0);
  }
}

void sweep_rms_norm() {
  // 1..16 elements a thread (the launcher's PerThread steps), blocks of 32 to
  // 1024 threads (two elements a thread up to 1024), and the largest vector.
  for (int n : {64, 96, 896, 1000, 1024, 1056, 4096, 5120, 9728, 16384}) {
    sweep_rms_norm_case<false, false>(n);
    sweep_rms_norm_case<true, false>(n);
    if (n % kQ8Block != 0) {
      std::printf("SKIP  rms_norm+int8 n=%d: not a multiple of 32 (invalid shape, refused below)\n", n);
      RmsNormParams p{};
      p.n = n;
      expect_refused(fmt("rms_norm+int8 n=%d", n), launch_rms_norm<false, true>(p, nullptr));
      continue;
    }
    sweep_rms_norm_case<false, true>(n);
    sweep_rms_norm_case<true, true>(n);
  }
  {
    RmsNormParams p{};
    p.n = 16384 + 32;
    expect_refused("rms_norm n=16416 (more than 16 elements a thread)", launch_rms_norm<false, false>(p, nullptr));
  }
  for (int n : {32, 1024, 9728}) {
    const auto x = random_floats(static_cast<size_t>(n), -3.0f, 3.0f);
    DeviceBuffer<float> d_x(x), d_d(static_cast<size_t>(n / kQ8Block));
    DeviceBuffer<int8_t> d_qs(static_cast<size_t>(n));
    DeviceBuffer<int8_t> d_lo(static_cast<size_t>(n));
    QuantizeParams p{d_x.get(), d_qs.get(), d_d.get(), n, d_lo.get(), nullptr, nullptr};
    expect_ok("quantize", launch_quantize_q8(p, nullptr));
    check_words(fmt("quantize_q8 n=%d", n), reference_words(x), d_qs, d_lo, d_d);
  }
  {
    // Blocks at the reciprocal's edges (blocks.h kQ8MinMax): all zero, a max
    // below the bound (zero words, d 0), just above it, and near the f32 range.
    const float block_scale[] = {0.0f, 1e-30f, 2e-29f, 1e-20f, 1.0f, 1e37f};
    std::vector<float> x;
    for (float s : block_scale) {
      const auto r = random_floats(kQ8Block, -1.0f, 1.0f);
      for (float v : r) x.push_back(v * s);
    }
    const int n = static_cast<int>(x.size());
    DeviceBuffer<float> d_x(x), d_d(static_cast<size_t>(n / kQ8Block));
    DeviceBuffer<int8_t> d_qs(static_cast<size_t>(n));
    DeviceBuffer<int8_t> d_lo(static_cast<size_t>(n));
    QuantizeParams p{d_x.get(), d_qs.get(), d_d.get(), n, d_lo.get(), nullptr, nullptr};
    expect_ok("quantize edge blocks", launch_quantize_q8(p, nullptr));
    check_words("quantize_q8 edge blocks (0, 1e-30 .. 1e37)", reference_words(x), d_qs, d_lo, d_d);
  }
  sweep_swiglu_quantize();
}

// ---- repack ------------------------------------------------------------------------

void sweep_repack() {
  for (auto [rows, k] : {std::pair{1, 32}, std::pair{67, 256}, std::pair{1000, 1024}}) {
    const HostWeights raw = make_weights(WeightFormat::q8_0, rows, k);
    DeviceBuffer<uint8_t> src(raw.bytes), dst(q8_0_split_bytes(rows, k));
    expect_ok("repack", launch_repack_q8_0({src.get(), dst.get(), rows, k}, nullptr));
    check(fmt("repack_q8_0 rows=%d k=%d (bytes)", rows, k), to_float(dst.download()),
          to_float(split_q8_0(raw.bytes, rows, k)), 0.0, 0.0);
  }
}

// ---- gemv --------------------------------------------------------------------------

// Lowest index of the largest non-NaN value; 0 when every value is NaN (the
// kernel's rule: NaN never wins, all -inf picks index 0 by the tie rule).
int argmax_skipping_nan(const std::vector<float>& v) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(v.size()); ++i)
    if (!std::isnan(v[i]) && (best < 0 || v[i] > v[best])) best = i;
  return best < 0 ? 0 : best;
}

// The decode state an argmax launch advances (token slot, position, the ring
// of generated tokens and its count) on the device, and the checks of what
// it must hold after each launch of a run.
struct DecodeState {
  static constexpr int kRingCapacity = 4;
  DecodeState(int first_pos, int first_count)
      : pos0(first_pos), count0(first_count), token(std::vector<int>{-1}), pos(std::vector<int>{first_pos}),
        ring(std::vector<int>(kRingCapacity, -1)), count(std::vector<int>{first_count}), ring_ref(kRingCapacity, -1) {}
  void bind(ArgmaxParams& p, int n_vocab) const {
    p.token = token.get();
    p.pos = pos.get();
    p.ring = ring.get();
    p.ring_count = count.get();
    p.n_vocab = n_vocab;
    p.ring_capacity = kRingCapacity;
  }
  // After launch `step` (0 for the first of the run), which chose `want`.
  void check_after(const std::string& tag, int step, int want) {
    ring_ref[static_cast<size_t>((count0 + step) % kRingCapacity)] = want;
    check(tag + " token", to_float(token.download()), {static_cast<float>(want)}, 0.0, 0.0);
    check(tag + " pos", to_float(pos.download()), {static_cast<float>(pos0 + step + 1)}, 0.0, 0.0);
    check(tag + " ring", to_float(ring.download()), to_float(ring_ref), 0.0, 0.0);
    check(tag + " ring_count", to_float(count.download()), {static_cast<float>(count0 + step + 1)}, 0.0, 0.0);
  }
  int pos0, count0;
  DeviceBuffer<int> token, pos, ring, count;
  std::vector<int> ring_ref;
};

// *_early: the residual loads before the kernel's wait (GemvParams::residual_early).
enum class Epilogue { plain, bias, residual, parts3_bias, swiglu, swiglu_bias_residual, residual_early, swiglu_residual_early };

const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::plain: return "plain";
    case Epilogue::bias: return "bias";
    case Epilogue::residual: return "residual";
    case Epilogue::parts3_bias: return "3parts+bias";
    case Epilogue::swiglu: return "swiglu";
    case Epilogue::swiglu_bias_residual: return "swiglu+bias+residual";
    case Epilogue::residual_early: return "residual(early)";
    case Epilogue::swiglu_residual_early: return "swiglu+residual(early)";
  }
  return "?";
}

// Sum over i of |w[r,i] * x[i]|: the scale of the float accumulation error.
std::vector<float> abs_dot(const std::vector<float>& w, const std::vector<float>& x, int rows, int k) {
  std::vector<float> s(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    double a = 0.0;
    for (int i = 0; i < k; ++i) a += std::fabs(static_cast<double>(w[static_cast<size_t>(r) * k + i]) * x[i]);
    s[r] = static_cast<float>(a);
  }
  return s;
}

// Which launcher computes the product: launch_gemv, launch_gemv_staged
// (gemv_staged.cuh) or launch_gemv_row_loop (its chunks a lane from k).
enum class GemvKernel { registers, staged, row_loop, ahead };

template <WeightFormat F, Activation A, bool Argmax = false>
cudaError_t launch_row_loop_for_k(const GemvParams& p) {
  switch (ceil_div(p.k / gemv_chunk_elems<F>(), kWarpSize)) {
    case 1: return launch_gemv_row_loop<F, A, 1, Argmax>(p, nullptr);
    case 2: return launch_gemv_row_loop<F, A, 2, Argmax>(p, nullptr);
    case 4: return launch_gemv_row_loop<F, A, 4, Argmax>(p, nullptr);
    default: return cudaErrorInvalidValue;
  }
}

// A GEMV input on both sides: x, its int8 words and scales under A's
// numerics (both sides take the same quantized activations), the values the
// kernel multiplies by (x_eff), and their device copies.
template <Activation A>
struct GemvInput {
  explicit GemvInput(std::vector<float> values)
      : x(std::move(values)), xq(x.size()), xlo(x.size()), xd(x.size() / kQ8Block + 1), x_eff(x) {
    const int k = static_cast<int>(x.size());
    if (A != Activation::f32) ref::quantize_q8(x.data(), k, xq.data(), xd.data());
    if (A == Activation::int8x2) ref::quantize_q8_low(x.data(), k, xq.data(), xd.data(), xlo.data());
    if (A != Activation::f32)
      for (int i = 0; i < k; ++i)
        x_eff[i] = static_cast<float>((xq[i] + (A == Activation::int8x2 ? xlo[i] / 254.0 : 0.0)) * xd[i / kQ8Block]);
    d_x = std::make_unique<DeviceBuffer<float>>(x);
    d_xd = std::make_unique<DeviceBuffer<float>>(xd);
    d_xq = std::make_unique<DeviceBuffer<int8_t>>(xq);
    d_xlo = std::make_unique<DeviceBuffer<int8_t>>(xlo);
  }
  // Points the launch's input at the device copies.
  void bind(GemvParams& p) const {
    p.k = static_cast<int>(x.size());
    p.x = d_x->get();
    p.x_qs = d_xq->get();
    p.x_d = d_xd->get();
    p.x_lo = d_xlo->get();
  }
  std::vector<float> x;
  std::vector<int8_t> xq, xlo;
  std::vector<float> xd, x_eff;
  std::unique_ptr<DeviceBuffer<float>> d_x, d_xd;
  std::unique_ptr<DeviceBuffer<int8_t>> d_xq, d_xlo;
};

template <WeightFormat F, Activation A, int RowsPerWarp, bool Swiglu, GemvKernel Kernel = GemvKernel::registers>
void sweep_gemv_case(int k, const std::vector<int>& part_rows, Epilogue epi, int split_k) {
  const int n_parts = static_cast<int>(part_rows.size());
  const GemvInput<A> in(random_floats(static_cast<size_t>(k), -1.0f, 1.0f));
  const std::vector<float>& x_eff = in.x_eff;
  std::vector<HostWeights> w;
  std::vector<std::vector<float>> bias, res;
  std::vector<DeviceBuffer<uint8_t>*> d_w;
  std::vector<DeviceBuffer<float>*> d_bias, d_res, d_y;
  GemvParams p{};
  const bool use_bias = epi == Epilogue::bias || epi == Epilogue::parts3_bias || epi == Epilogue::swiglu_bias_residual;
  const bool early = epi == Epilogue::residual_early || epi == Epilogue::swiglu_residual_early;
  const bool use_res = early || epi == Epilogue::residual || epi == Epilogue::swiglu_bias_residual;
  p.residual_early = early;
  for (int q = 0; q < n_parts; ++q) {
    const int rows = part_rows[q];
    w.push_back(make_weights(F, rows, k));
    bias.push_back(random_floats(static_cast<size_t>(rows), -1.0f, 1.0f));
    res.push_back(random_floats(static_cast<size_t>(rows), -1.0f, 1.0f));
    d_w.push_back(new DeviceBuffer<uint8_t>(w[q].bytes));
    d_bias.push_back(new DeviceBuffer<float>(bias[q]));
    d_res.push_back(new DeviceBuffer<float>(res[q]));
    d_y.push_back(new DeviceBuffer<float>(static_cast<size_t>(rows)));
    p.parts[q] = {d_w[q]->get(), d_y[q]->get(), use_bias ? d_bias[q]->get() : nullptr,
                  use_res && q == 0 ? d_res[q]->get() : nullptr, rows};
    if (use_res && !Swiglu) p.parts[q].residual = d_res[q]->get();
  }
  p.n_parts = n_parts;
  in.bind(p);
  p.split_k = split_k;
  if constexpr (Kernel == GemvKernel::staged) {
    static_assert(F == WeightFormat::q8_0_split && !Swiglu, "the staged GEMV: q8_0_split, no SwiGLU");
    expect_ok("gemv staged", launch_gemv_staged<A, RowsPerWarp>(p, nullptr));
  } else if constexpr (Kernel == GemvKernel::row_loop) {
    static_assert(RowsPerWarp == 1 && !Swiglu, "the row loop: one matrix, no SwiGLU");
    expect_ok("gemv row loop", launch_row_loop_for_k<F, A>(p));
  } else if constexpr (Kernel == GemvKernel::ahead) {
    expect_ok("gemv ahead", launch_gemv<F, A, RowsPerWarp, Swiglu, false, true>(p, nullptr));
  } else {
    expect_ok("gemv", launch_gemv<F, A, RowsPerWarp, Swiglu>(p, nullptr));
  }

  std::string shape;
  for (int q = 0; q < n_parts; ++q) shape += (q ? "+" : "") + std::to_string(part_rows[q]);
  const char* kernel = Kernel == GemvKernel::staged     ? " staged"
                       : Kernel == GemvKernel::row_loop ? " row_loop"
                       : Kernel == GemvKernel::ahead    ? " ahead"
                                                        : "";
  const std::string tag = fmt("gemv%s %s act=%s rpw=%d split=%d k=%d rows=%s %s", kernel, format_name(F),
                              A == Activation::int8x2 ? "int8x2" : A == Activation::int8 ? "int8" : "f32", RowsPerWarp, split_k, k, shape.c_str(),
                              epilogue_name(epi));
  // Error budget: 1e-6 of sum |w x| (float accumulation in a different order).
  if (Swiglu) {
    const int rows = part_rows[0];
    const auto g = ref::gemv(w[0].values, x_eff, rows, k), u = ref::gemv(w[1].values, x_eff, rows, k);
    const auto sg = abs_dot(w[0].values, x_eff, rows, k), su = abs_dot(w[1].values, x_eff, rows, k);
    std::vector<float> y(static_cast<size_t>(rows)), scale(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      const float gv = g[r] + (use_bias ? bias[0][r] : 0.0f), uv = u[r] + (use_bias ? bias[1][r] : 0.0f);
      y[r] = ref::silu(gv) * uv + (use_res ? res[0][r] : 0.0f);
      scale[r] = (std::fabs(uv) + 1.0f) * sg[r] + (std::fabs(gv) + 1.0f) * su[r] + 1.0f;
    }
    check(tag, d_y[0]->download(), y, 1e-6, 1e-6, scale);
  } else {
    for (int q = 0; q < n_parts; ++q) {
      const int rows = part_rows[q];
      auto y = ref::gemv(w[q].values, x_eff, rows, k);
      auto scale = abs_dot(w[q].values, x_eff, rows, k);
      for (int r = 0; r < rows; ++r) {
        y[r] += (use_bias ? bias[q][r] : 0.0f) + (use_res ? res[q][r] : 0.0f);
        scale[r] += 1.0f;
      }
      check(n_parts > 1 ? fmt("%s part%d", tag.c_str(), q) : tag, d_y[q]->download(), y, 1e-6, 1e-6, scale);
    }
  }
  for (int q = 0; q < n_parts; ++q) {
    delete d_w[q];
    delete d_bias[q];
    delete d_res[q];
    delete d_y[q];
  }
}

template <WeightFormat F, Activation A>
void sweep_gemv_format() {
  const std::pair<int, int> shapes[] = {{256, 67}, {1024, 512}, {4096, 1000}, {3584, 37}};
  for (auto [k, rows] : shapes) {
    for (int split : {1, 3, 8}) {
      sweep_gemv_case<F, A, 1, false>(k, {rows}, Epilogue::plain, split);
      sweep_gemv_case<F, A, 2, false>(k, {rows}, Epilogue::plain, split);
      sweep_gemv_case<F, A, 4, false>(k, {rows}, Epilogue::plain, split);
    }
  }
  sweep_gemv_case<F, A, 2, false>(1024, {300}, Epilogue::bias, 2);
  sweep_gemv_case<F, A, 4, false>(1024, {300}, Epilogue::residual, 1);
  sweep_gemv_case<F, A, 2, false>(896, {896, 128, 128}, Epilogue::parts3_bias, 2);
  sweep_gemv_case<F, A, 4, false>(2048, {2048, 512, 512, 3}, Epilogue::plain, 4);
  sweep_gemv_case<F, A, 1, true>(512, {300, 300}, Epilogue::swiglu, 1);
  sweep_gemv_case<F, A, 2, true>(1024, {1001, 1001}, Epilogue::swiglu, 4);
  sweep_gemv_case<F, A, 4, true>(896, {4864, 4864}, Epilogue::swiglu_bias_residual, 2);
  // Qwen3's shapes: k 1024, 4096, 3072 (down) and 12288 (8B's down).
  sweep_gemv_case<F, A, 1, true>(1024, {513, 513}, Epilogue::swiglu, 1);
  // ... and 0.6B's at 2 rows a warp (rows_a_warp on short rows): Q/K/V parts, gate/up.
  sweep_gemv_case<F, A, 2, false>(1024, {512, 257, 255}, Epilogue::parts3_bias, 1);
  sweep_gemv_case<F, A, 2, true>(1024, {1537, 1537}, Epilogue::swiglu, 1);
  sweep_gemv_case<F, A, 1, true>(4096, {700, 700}, Epilogue::swiglu, 2);
  sweep_gemv_case<F, A, 1, false>(3072, {333}, Epilogue::residual, 1);
  sweep_gemv_case<F, A, 1, false>(12288, {65}, Epilogue::plain, 4);
  // ... and the gate/up parts GEMVs (glu_pair declining under int8) at split 1: 1.7B's k and 8B's.
  sweep_gemv_case<F, A, 1, false>(2048, {769, 769}, Epilogue::plain, 1);
  sweep_gemv_case<F, A, 1, false>(4096, {700, 700}, Epilogue::plain, 1);
  // ... and the down projections of 0.6B (1.5 chunks a lane) and 1.7B, and
  // 0.6B's output GEMV (one chunk a lane), at split 4.
  sweep_gemv_case<F, A, 1, false>(3072, {1024}, Epilogue::plain, 4);
  sweep_gemv_case<F, A, 1, false>(2048, {1024}, Epilogue::plain, 4);
  sweep_gemv_case<F, A, 1, false>(6144, {2048}, Epilogue::plain, 4);
  // ... with the residual loaded before the wait (0.6B's output and down
  // projections, 8B's down), in parts, at 2 and 4 rows a warp and after a SwiGLU.
  sweep_gemv_case<F, A, 1, false>(2048, {1024}, Epilogue::residual_early, 4);
  sweep_gemv_case<F, A, 1, false>(3072, {1024}, Epilogue::residual_early, 4);
  sweep_gemv_case<F, A, 1, false>(12288, {333}, Epilogue::residual_early, 4);
  sweep_gemv_case<F, A, 2, false>(1024, {300, 77}, Epilogue::residual_early, 3);
  sweep_gemv_case<F, A, 4, false>(1024, {301}, Epilogue::residual_early, 1);
  sweep_gemv_case<F, A, 2, true>(1024, {1001, 1001}, Epilogue::swiglu_residual_early, 2);
  // The row loop (rule row_loop): tall single matrices, more rows than one
  // wave's warps so each warp takes several, at 1, 2 and 4 chunks a lane
  // with a partial last one, bias and residual; and a few rows.
  const int chunk = gemv_chunk_elems<F>();
  sweep_gemv_case<F, A, 1, false, GemvKernel::row_loop>(64 * chunk, {70001}, Epilogue::plain, 1);  // 0.6B's logits
  sweep_gemv_case<F, A, 1, false, GemvKernel::row_loop>(16 * chunk, {40000}, Epilogue::bias, 1);
  sweep_gemv_case<F, A, 1, false, GemvKernel::row_loop>(48 * chunk, {50001}, Epilogue::residual, 1);
  sweep_gemv_case<F, A, 1, false, GemvKernel::row_loop>(128 * chunk, {36000}, Epilogue::plain, 1);
  sweep_gemv_case<F, A, 1, false, GemvKernel::row_loop>(32 * chunk, {67}, Epilogue::plain, 1);
}

// The argmax fold (rule gemv_argmax): a logits GEMV whose blocks fold their
// greedy winner into one key, then the argmax launch's finish form. Three
// launches on one key, as graph replays: random logits (the token must be
// the argmax of the logits the GEMV wrote, which are checked against the CPU
// product), then x = 0 so the logits are exactly a planted bias: a tie for
// the maximum at two random rows (the lower wins) among NaN and -inf rows;
// every logit -inf (token 0 by the tie rule); every logit NaN (token 0).
// After each, the key is back to 0. Needs 3 rows or more. (A GEMV's sum
// starts at +0, so its logits are never -0: argmax_key's -0 rule is not
// reached from here.)
enum class ArgmaxPlant { none, ties_nan_inf, all_neg_inf, all_nan };

template <WeightFormat F, Activation A, int RowsPerWarp, GemvKernel Kernel>
cudaError_t launch_gemv_argmax(const GemvParams& p) {
  if constexpr (Kernel == GemvKernel::row_loop) {
    return launch_row_loop_for_k<F, A, true>(p);
  } else {
    return launch_gemv<F, A, RowsPerWarp, false, true>(p, nullptr);
  }
}

template <WeightFormat F, Activation A, int RowsPerWarp, GemvKernel Kernel = GemvKernel::registers>
void sweep_gemv_argmax_case(int k, int rows, int split_k) {
  const HostWeights w = make_weights(F, rows, k);
  DeviceBuffer<uint8_t> d_w(w.bytes);
  DeviceBuffer<float> d_y(static_cast<size_t>(rows)), d_bias(static_cast<size_t>(rows));
  DeviceBuffer<unsigned long long> best(std::vector<unsigned long long>{0ull});
  DecodeState state(random_int(0, 1000), 2);
  GemvParams p{};
  p.parts[0] = {d_w.get(), d_y.get(), nullptr, nullptr, rows};
  p.n_parts = 1;
  p.split_k = split_k;
  p.argmax_best = best.get();
  ArgmaxParams a{};
  state.bind(a, rows);
  a.best = best.get();
  const char* kernel = Kernel == GemvKernel::row_loop ? " row_loop" : "";
  for (ArgmaxPlant plant :
       {ArgmaxPlant::none, ArgmaxPlant::ties_nan_inf, ArgmaxPlant::all_neg_inf, ArgmaxPlant::all_nan}) {
    const int step = static_cast<int>(plant);
    std::vector<float> x(static_cast<size_t>(k), 0.0f), bias(static_cast<size_t>(rows), 0.0f);
    if (plant == ArgmaxPlant::none) x = random_floats(static_cast<size_t>(k), -1.0f, 1.0f);
    if (plant == ArgmaxPlant::ties_nan_inf) {
      bias = random_floats(static_cast<size_t>(rows), -10.0f, 10.0f);
      for (int i = 0; i < std::max(1, rows / 50); ++i) bias[static_cast<size_t>(random_int(0, rows - 1))] = NAN;
      for (int i = 0; i < std::max(1, rows / 50); ++i) bias[static_cast<size_t>(random_int(0, rows - 1))] = -INFINITY;
      bias[0] = NAN;
      const int hi = random_int(2, rows - 1), lo = random_int(1, hi - 1);  // a real tie, not at the NaN row 0
      bias[static_cast<size_t>(hi)] = bias[static_cast<size_t>(lo)] = 11.0f;
    }
    if (plant == ArgmaxPlant::all_neg_inf) bias.assign(static_cast<size_t>(rows), -INFINITY);
    if (plant == ArgmaxPlant::all_nan) bias.assign(static_cast<size_t>(rows), NAN);
    const GemvInput<A> in(x);
    in.bind(p);
    d_bias.upload(bias);
    p.parts[0].bias = plant == ArgmaxPlant::none ? nullptr : d_bias.get();
    expect_ok("gemv argmax", launch_gemv_argmax<F, A, RowsPerWarp, Kernel>(p));
    expect_ok("argmax finish", launch_argmax(a, nullptr));
    const std::string tag = fmt("gemv+argmax%s %s rpw=%d split=%d k=%d rows=%d launch %d", kernel, format_name(F),
                                RowsPerWarp, split_k, k, rows, step + 1);
    const std::vector<float> y = d_y.download();
    if (plant == ArgmaxPlant::none) {
      auto ref_y = ref::gemv(w.values, in.x_eff, rows, k);
      auto scale = abs_dot(w.values, in.x_eff, rows, k);
      for (float& v : scale) v += 1.0f;
      check(tag + " logits", y, ref_y, 1e-6, 1e-6, scale);
    } else {
      // x = 0: every logit is its bias exactly, NaN where the bias is NaN.
      auto nan_as_marker = [](std::vector<float> v) {
        for (float& e : v) e = std::isnan(e) ? 1e30f : std::isinf(e) ? std::copysign(2e30f, e) : e;
        return v;
      };
      check(tag + " logits (planted)", nan_as_marker(y), nan_as_marker(bias), 0.0, 0.0);
    }
    const int want = argmax_skipping_nan(y);  // of the logits as written: exact
    state.check_after(tag, step, want);
    check(tag + " key reset", {static_cast<float>(best.download()[0])}, {0.0f}, 0.0, 0.0);
  }
}

template <WeightFormat F, Activation A>
void sweep_gemv_argmax_format();

void sweep_gemv_argmax() {
  sweep_gemv_argmax_format<WeightFormat::f32, Activation::f32>();
  sweep_gemv_argmax_format<WeightFormat::f16, Activation::f32>();
  sweep_gemv_argmax_format<WeightFormat::q8_0_split, Activation::int8>();
  sweep_gemv_argmax_format<WeightFormat::q8_0_split, Activation::int8x2>();
}

template <WeightFormat F, Activation A>
void sweep_gemv_argmax_format() {
  const int chunk = gemv_chunk_elems<F>();
  sweep_gemv_argmax_case<F, A, 1>(64 * chunk, 1000, 1);
  sweep_gemv_argmax_case<F, A, 2>(64 * chunk, 151936, 1);  // a vocabulary's rows: many blocks race on the key
  sweep_gemv_argmax_case<F, A, 1>(128 * chunk, 20001, 2);
  sweep_gemv_argmax_case<F, A, 4>(48 * chunk, 777, 4);
  sweep_gemv_argmax_case<F, A, 1, GemvKernel::row_loop>(64 * chunk, 151936, 1);  // 0.6B's logits
  sweep_gemv_argmax_case<F, A, 1, GemvKernel::row_loop>(16 * chunk, 40000, 1);
  sweep_gemv_argmax_case<F, A, 1, GemvKernel::row_loop>(128 * chunk, 67, 1);
}

// The staged GEMV at the output projections it is planned for (1.7B's
// 2048 x 2048) and at shapes that reach every corner: a partial last block,
// blocks straddling parts, three parts with bias, a residual, a long k.
template <Activation A>
void sweep_gemv_staged() {
  constexpr WeightFormat Q = WeightFormat::q8_0_split;
  sweep_gemv_case<Q, A, 2, false, GemvKernel::staged>(2048, {2048}, Epilogue::plain, 2);
  sweep_gemv_case<Q, A, 1, false, GemvKernel::staged>(1024, {1024}, Epilogue::plain, 4);
  sweep_gemv_case<Q, A, 2, false, GemvKernel::staged>(1024, {1024}, Epilogue::plain, 4);
  sweep_gemv_case<Q, A, 2, false, GemvKernel::staged>(256, {67}, Epilogue::plain, 1);
  sweep_gemv_case<Q, A, 2, false, GemvKernel::staged>(4096, {700, 700}, Epilogue::plain, 1);
  sweep_gemv_case<Q, A, 2, false, GemvKernel::staged>(1024, {512, 257, 255}, Epilogue::parts3_bias, 2);
  sweep_gemv_case<Q, A, 1, false, GemvKernel::staged>(3072, {333}, Epilogue::residual, 4);
  sweep_gemv_case<Q, A, 2, false, GemvKernel::staged>(12288, {65}, Epilogue::plain, 4);
}

// The GEMV with its second trip loaded ahead, at 0.6B's Q/K/V, gate/up and
// down shapes (two chunks a lane at split 1; at split 4 two in slices 0
// and 1, one in 2 and 3) and where a lane has one chunk, three, six, or a
// partial second trip.
template <Activation A>
void sweep_gemv_ahead() {
  constexpr WeightFormat Q = WeightFormat::q8_0_split;
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(1024, {2048, 1024, 1024}, Epilogue::parts3_bias, 1);
  sweep_gemv_case<Q, A, 1, true, GemvKernel::ahead>(1024, {3072, 3072}, Epilogue::swiglu, 1);
  sweep_gemv_case<Q, A, 2, false, GemvKernel::ahead>(1024, {1000}, Epilogue::residual, 1);
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(512, {67}, Epilogue::plain, 1);
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(768, {333}, Epilogue::plain, 1);
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(3072, {1024}, Epilogue::plain, 1);
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(3072, {1024}, Epilogue::plain, 4);  // 0.6B's down
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(3072, {1024}, Epilogue::residual_early, 4);  // ... its residual early
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(2048, {1024}, Epilogue::plain, 2);  // output projection, rtx4090
  sweep_gemv_case<Q, A, 1, false, GemvKernel::ahead>(1536, {777}, Epilogue::residual, 1);  // three chunks a lane
  sweep_gemv_case<Q, A, 4, false, GemvKernel::ahead>(2048, {515}, Epilogue::bias, 3);
  // Two rows a warp, one wave at 60 registers: 0.6B's gate/up and 1.7B's
  // Q/K/V at split 2 (docs/performance.md, h100-2026-12-06b).
  sweep_gemv_case<Q, A, 2, false, GemvKernel::ahead>(1024, {3072, 3072}, Epilogue::plain, 1);
  sweep_gemv_case<Q, A, 2, false, GemvKernel::ahead>(2048, {2048, 1024, 1024}, Epilogue::parts3_bias, 2);
}

// Family gemv_ahead (part of gemv): both int8 forms.
void sweep_gemv_ahead_both() {
  sweep_gemv_ahead<Activation::int8>();
  sweep_gemv_ahead<Activation::int8x2>();
}

// ---- ffn (kernels/ffn.cuh) --------------------------------------------------------

// The SwiGLU FFN block against the references: gate and up products of the
// two-word int8 input, silu(g) * u and its two-word int8 words, the down
// product of those, added to the residual. The down weights go through
// launch_repack_q8_0_cols. Error budget per row: 1e-4 of
// sum_j |W_d[r,j]| (|a_j| + max|a| of j's block), which covers an int8 word
// of a rounding the other way where the f32 and double gate/up sums differ.
template <int Chunks, int Warps, bool PreloadDown, int Ahead = 1, int Split = 1, int MinBlocks = 1>
void sweep_ffn_case(int hidden, int ffn) {
  const GemvInput<Activation::int8x2> in(random_floats(static_cast<size_t>(hidden), -1.0f, 1.0f));
  const HostWeights wg = make_weights(WeightFormat::q8_0_split, ffn, hidden);
  const HostWeights wu = make_weights(WeightFormat::q8_0_split, ffn, hidden);
  const HostWeights wd = make_weights(WeightFormat::q8_0, hidden, ffn);  // GGUF rows, repacked below
  const std::vector<float> res = random_floats(static_cast<size_t>(hidden), -1.0f, 1.0f);
  DeviceBuffer<uint8_t> d_wg(wg.bytes), d_wu(wu.bytes), d_raw(wd.bytes), d_wd(q8_0_cols_bytes(hidden, ffn));
  DeviceBuffer<float> d_y(res);
  expect_ok("repack cols", launch_repack_q8_0_cols({d_raw.get(), d_wd.get(), hidden, ffn}, nullptr));
  // The FFN kernel reads its weights before its wait (model constants, by
  // contract): the repack must have completed, as the program's upload does.
  LANEC_CUDA_CHECK(cudaDeviceSynchronize());
  FfnParams p{};
  p.gate = d_wg.get();
  p.up = d_wu.get();
  p.down = d_wd.get();
  p.x_qs = in.d_xq->get();
  p.x_lo = in.d_xlo->get();
  p.x_d = in.d_xd->get();
  p.y = d_y.get();
  p.hidden = hidden;
  p.ffn = ffn;
  expect_ok("ffn", launch_ffn<Chunks, Warps, MinBlocks, PreloadDown, Ahead, Split>(p, nullptr));

  const auto g = ref::gemv(wg.values, in.x_eff, ffn, hidden), u = ref::gemv(wu.values, in.x_eff, ffn, hidden);
  std::vector<float> a(static_cast<size_t>(ffn)), a_eff(a.size()), ad(a.size() / kQ8Block), block_max(ad.size());
  std::vector<int8_t> aq(a.size()), alo(a.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = ref::silu(g[i]) * u[i];
  ref::quantize_q8(a.data(), ffn, aq.data(), ad.data());
  ref::quantize_q8_low(a.data(), ffn, aq.data(), ad.data(), alo.data());
  for (size_t i = 0; i < a.size(); ++i) {
    a_eff[i] = static_cast<float>((aq[i] + alo[i] / 254.0) * ad[i / kQ8Block]);
    block_max[i / kQ8Block] = std::max(block_max[i / kQ8Block], std::fabs(a[i]));
  }
  std::vector<float> y = ref::gemv(wd.values, a_eff, hidden, ffn), scale(static_cast<size_t>(hidden));
  for (int r = 0; r < hidden; ++r) {
    double s = 0.0;
    for (int j = 0; j < ffn; ++j)
      s += std::fabs(wd.values[static_cast<size_t>(r) * ffn + j]) * (std::fabs(a_eff[j]) + block_max[j / kQ8Block]);
    y[r] += res[r];
    scale[r] = static_cast<float>(s) + 1.0f;
  }
  check(fmt("ffn chunks=%d warps=%d min_blocks=%d preload=%d ahead=%d split=%d hidden=%d ffn=%d", Chunks, Warps,
            MinBlocks, PreloadDown ? 1 : 0, Ahead, Split, hidden, ffn),
        d_y.download(), y, 1e-4, 1e-6, scale);
}

void sweep_ffn() {
  sweep_ffn_case<2, 16, true>(64, 128);      // qwen3-tiny on one SM
  sweep_ffn_case<1, 16, true>(1024, 3072);   // Qwen3-0.6B
  sweep_ffn_case<2, 16, true>(2048, 6144);   // Qwen3-1.7B
  sweep_ffn_case<2, 16, false>(4096, 1024);  // 8B's hidden width, fewer intermediate blocks
  sweep_ffn_case<3, 16, false>(4096, 3072);  // ... three blocks of 32 a thread block (8B's form)
  sweep_ffn_case<1, 8, false>(96, 64);       // lanes past the row's chunks, groups past the threads
  sweep_ffn_case<1, 16, true, 2>(1024, 3072);   // two gate/up trips ahead: all of 0.6B's chunks
  sweep_ffn_case<2, 16, false, 2>(2048, 6144);  // two ahead, two more in the loop
  sweep_ffn_case<1, 8, false, 2>(96, 64);       // no lane has a second trip
  sweep_ffn_case<1, 8, false, 2>(640, 64);      // a second trip for the first 8 lanes only
  sweep_ffn_case<1, 8, false, 2>(1056, 64);     // a third, in the loop, for the first 2 lanes
  sweep_ffn_case<1, 8, true, 1, 1, 2>(2048, 6144);   // 8 warps, two blocks an SM: 1.7B's shape
  sweep_ffn_case<2, 8, false, 1, 1, 2>(4096, 2048);  // ... 8B's hidden width, two blocks of 32
  if (cluster_launches_enabled()) {
    sweep_ffn_case<1, 16, true, 1, 2>(1024, 3072);   // clusters of two on 0.6B's shape
    sweep_ffn_case<1, 16, true, 2, 2>(1024, 3072);   // ... with every chunk ahead
    sweep_ffn_case<2, 16, false, 1, 2>(2048, 6144);  // ... on 1.7B's, the loop past the ahead trip
    sweep_ffn_case<1, 8, false, 2, 2>(1280, 64);     // a second trip for 8 lanes of each half
    // 8 warps capped at 128 registers (two blocks an SM): 0.6B's and 1.7B's shapes.
    sweep_ffn_case<1, 8, true, 1, 2, 2>(1024, 3072);
    sweep_ffn_case<2, 8, false, 1, 2, 2>(2048, 6144);
  } else {
    std::printf("SKIP  ffn split 2: no thread-block clusters on this device or build\n");
  }
  FfnParams odd{};
  odd.hidden = 96;  // 6 chunks a row: no even halves
  odd.ffn = 32;
  expect_refused("ffn split 2 with hidden not a multiple of 64", launch_ffn<1, 8, 1, false, 1, 2>(odd, nullptr));
  FfnParams bad{};
  bad.hidden = 100;
  bad.ffn = 64;
  expect_refused("ffn hidden not a multiple of 32", launch_ffn<1, 16>(bad, nullptr));
  bad.hidden = 64;
  bad.ffn = 96;
  expect_refused("ffn not whole 2-block chunks", launch_ffn<2, 16>(bad, nullptr));
  expect_refused("repack cols rows not a multiple of 4", launch_repack_q8_0_cols({nullptr, nullptr, 6, 32}, nullptr));
}

void sweep_gemv() {
  sweep_gemv_format<WeightFormat::f32, Activation::f32>();
  sweep_gemv_format<WeightFormat::f16, Activation::f32>();
  sweep_gemv_format<WeightFormat::bf16, Activation::f32>();
  sweep_gemv_format<WeightFormat::q8_0_split, Activation::f32>();
  sweep_gemv_format<WeightFormat::q8_0_split, Activation::int8>();
  sweep_gemv_format<WeightFormat::q8_0_split, Activation::int8x2>();
  sweep_gemv_staged<Activation::int8>();
  sweep_gemv_staged<Activation::int8x2>();
  sweep_gemv_ahead_both();
  // Invalid combinations the launcher must refuse (template-level ones fail a static_assert instead).
  DeviceBuffer<float> buf(4096);
  GemvParams p{};
  p.parts[0] = {buf.get(), buf.get(), nullptr, nullptr, 8};
  p.parts[1] = p.parts[0];
  p.parts[2] = p.parts[0];
  p.n_parts = 1;
  p.k = 100;
  p.x = buf.get();
  p.split_k = 1;
  expect_refused("gemv f16 k=100 (k % 8 != 0)", launch_gemv<WeightFormat::f16, Activation::f32, 1, false>(p, nullptr));
  p.k = 48;
  expect_refused("gemv q8_0_split k=48", launch_gemv<WeightFormat::q8_0_split, Activation::f32, 1, false>(p, nullptr));
  p.k = 64;
  p.split_k = 17;
  expect_refused("gemv split_k=17", launch_gemv<WeightFormat::f32, Activation::f32, 1, false>(p, nullptr));
  p.split_k = 1;
  expect_refused("gemv argmax without its key", launch_gemv<WeightFormat::f32, Activation::f32, 1, false, true>(p, nullptr));
  p.k = 64 * 4;  // 2 chunks a lane of f32
  expect_refused("gemv row loop argmax without its key",
                 launch_gemv_row_loop<WeightFormat::f32, Activation::f32, 2, true>(p, nullptr));
  p.k = 64;
  p.n_parts = 3;
  expect_refused("gemv swiglu with 3 parts", launch_gemv<WeightFormat::f32, Activation::f32, 1, true>(p, nullptr));
  p.n_parts = 1;
  p.x = buf.get() + 1;
  expect_refused("gemv x not 16-byte aligned", launch_gemv<WeightFormat::f32, Activation::f32, 1, false>(p, nullptr));
  p.x_qs = reinterpret_cast<const int8_t*>(buf.get());
  p.x_d = buf.get();
  p.k = 1024 + 32;
  expect_refused("gemv staged k=1056 (k % 256 != 0)", launch_gemv_staged<Activation::int8, 2>(p, nullptr));
  p.k = 1024;
  p.split_k = 3;
  expect_refused("gemv staged split_k=3", launch_gemv_staged<Activation::int8, 2>(p, nullptr));
  p.x = buf.get();
  p.split_k = 1;
  p.k = 256;  // 64 f32 chunks: 2 a lane
  expect_refused("gemv row loop C=1 for 2 chunks a lane",
                 launch_gemv_row_loop<WeightFormat::f32, Activation::f32, 1>(p, nullptr));
  p.n_parts = 2;
  expect_refused("gemv row loop with 2 parts", launch_gemv_row_loop<WeightFormat::f32, Activation::f32, 2>(p, nullptr));
  p.n_parts = 1;
  p.split_k = 2;
  expect_refused("gemv row loop split_k=2", launch_gemv_row_loop<WeightFormat::f32, Activation::f32, 2>(p, nullptr));
}

// ---- rope --------------------------------------------------------------------------

template <RopeMode Mode>
void sweep_rope_case(int head_dim, int rope_dims, int pos, bool norm) {
  const int n_q = 14, n_k = 2;
  const float base = 1000000.0f, eps = 1e-6f;
  auto q = random_floats(static_cast<size_t>(n_q) * head_dim, -2.0f, 2.0f);
  auto k = random_floats(static_cast<size_t>(n_k) * head_dim, -2.0f, 2.0f);
  const auto qw = random_floats(static_cast<size_t>(head_dim), 0.5f, 1.5f);
  const auto kw = random_floats(static_cast<size_t>(head_dim), 0.5f, 1.5f);
  DeviceBuffer<float> d_q(q), d_k(k), d_qw(qw), d_kw(kw);
  DeviceBuffer<int> d_pos(std::vector<int>{pos});
  RopeParams p{};
  p.parts[0] = {d_q.get(), norm ? d_qw.get() : nullptr, n_q, nullptr, false};
  p.parts[1] = {d_k.get(), norm ? d_kw.get() : nullptr, n_k, nullptr, false};
  p.n_parts = 2;
  p.pos = d_pos.get();
  p.head_dim = head_dim;
  p.rope_dims = rope_dims;
  p.theta_base = base;
  p.eps = eps;
  expect_ok("rope", launch_rope<Mode>(p, nullptr));
  const bool neox = Mode == RopeMode::neox;
  ref::rope(q, n_q, head_dim, rope_dims, neox, base, pos, norm ? qw.data() : nullptr, eps);
  ref::rope(k, n_k, head_dim, rope_dims, neox, base, pos, norm ? kw.data() : nullptr, eps);
  const std::string tag = fmt("rope %s%s head_dim=%d rope_dims=%d pos=%d", neox ? "neox" : "norm",
                              norm ? "+head_norm" : "", head_dim, rope_dims, pos);
  check(tag + " q", d_q.download(), q, 2e-6, 2e-6);
  check(tag + " k", d_k.download(), k, 2e-6, 2e-6);
}

void sweep_rope() {
  // Every pair and tail slot a lane keeps (256/256: 4 pairs; 256/0: 8 tail
  // elements, the norm alone), and a head size not a multiple of 32.
  for (auto [hd, rd] : {std::pair{64, 64}, std::pair{128, 128}, std::pair{128, 64}, std::pair{256, 64},
                        std::pair{256, 256}, std::pair{256, 0}, std::pair{96, 32}, std::pair{80, 32}}) {
    for (int pos : {0, 7, 4095, 131071}) {
      for (bool norm : {false, true}) {
        sweep_rope_case<RopeMode::norm>(hd, rd, pos, norm);
        sweep_rope_case<RopeMode::neox>(hd, rd, pos, norm);
      }
    }
  }
  RopeParams p{};
  p.n_parts = 1;
  p.parts[0].n_head = 1;
  p.head_dim = 64;
  p.rope_dims = 128;
  DeviceBuffer<float> buf(64);
  p.parts[0].x = buf.get();
  expect_refused("rope rope_dims > head_dim", launch_rope<RopeMode::neox>(p, nullptr));
  p.head_dim = 258;
  p.rope_dims = 64;
  expect_refused("rope head_dim > 256", launch_rope<RopeMode::neox>(p, nullptr));
}

// ---- rope with the cache row write (rule row_write) ------------------------------------

template <CachePrecision C>
using CacheElement = std::conditional_t<C == CachePrecision::f32, float, uint16_t>;

// A cache's elements as f32 (f16 bits decoded).
template <CachePrecision C>
std::vector<float> cache_values(const std::vector<CacheElement<C>>& c) {
  std::vector<float> out(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    if constexpr (C == CachePrecision::f32)
      out[i] = c[i];
    else
      out[i] = ref::f16_to_f32(c[i]);
  }
  return out;
}

// A cache of random finite values (f16: random f16 of random floats).
template <CachePrecision C>
std::vector<CacheElement<C>> random_cache(size_t n) {
  const auto f = random_floats(n, -8.0f, 8.0f);
  std::vector<CacheElement<C>> out(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (C == CachePrecision::f32)
      out[i] = f[i];
    else
      out[i] = ref::f32_to_f16(f[i]);
  }
  return out;
}

// Row `pos` of the cache within (atol, rtol) of `want`; every other element
// bit-identical to `want` (the rows the launch must not touch).
void check_cache(const std::string& tag, std::vector<float> got, const std::vector<float>& want, int n_head,
                 int head_dim, int n_ctx, int pos, double atol, double rtol) {
  if (pos >= 0 && pos < n_ctx) {
    std::vector<float> got_row, want_row;
    for (int h = 0; h < n_head; ++h)
      for (int d = 0; d < head_dim; ++d) {
        const size_t i = (static_cast<size_t>(h) * n_ctx + pos) * head_dim + d;
        got_row.push_back(got[i]);
        want_row.push_back(want[i]);
        got[i] = want[i];
      }
    check(tag + " row", got_row, want_row, atol, rtol);
  }
  check(tag + " other rows", got, want, 0.0, 0.0);
}

struct RopeCacheShape {
  const char* arch;
  int n_q;        // 0: K alone (rope_parts held)
  int n_kv;
  int head_dim;
  int rope_dims;
  bool norm;      // qwen3's per-head norm
};

template <RopeMode Mode, CachePrecision C>
void sweep_rope_cache_case(const RopeCacheShape& s, int n_ctx, int pos, bool k_cache_only) {
  const float base = 1000000.0f, eps = 1e-6f;
  const size_t nq = static_cast<size_t>(s.n_q) * s.head_dim, nkv = static_cast<size_t>(s.n_kv) * s.head_dim;
  const size_t cache_n = nkv * static_cast<size_t>(n_ctx);
  const auto q = random_floats(std::max<size_t>(nq, 1), -2.0f, 2.0f);
  const auto k = random_floats(nkv, -2.0f, 2.0f), v = random_floats(nkv, -4.0f, 4.0f);
  const auto qw = random_floats(static_cast<size_t>(s.head_dim), 0.5f, 1.5f);
  const auto kw = random_floats(static_cast<size_t>(s.head_dim), 0.5f, 1.5f);
  const auto kc = random_cache<C>(cache_n), vc = random_cache<C>(cache_n);
  DeviceBuffer<float> d_q(q), d_k(k), d_v(v), d_qw(qw), d_kw(kw);
  DeviceBuffer<CacheElement<C>> d_kc(kc), d_vc(vc);
  DeviceBuffer<int> d_pos(std::vector<int>{pos});
  RopeParams p{};
  int part = 0;
  if (s.n_q > 0) p.parts[part++] = {d_q.get(), s.norm ? d_qw.get() : nullptr, s.n_q, nullptr, false};
  p.parts[part++] = {d_k.get(), s.norm ? d_kw.get() : nullptr, s.n_kv, d_kc.get(), k_cache_only};
  p.n_parts = part;
  p.pos = d_pos.get();
  p.head_dim = s.head_dim;
  p.rope_dims = s.rope_dims;
  p.theta_base = base;
  p.eps = eps;
  p.v = d_v.get();
  p.v_cache = d_vc.get();
  p.n_v_head = s.n_kv;
  p.n_ctx = n_ctx;
  expect_ok("rope+cache", launch_rope<Mode, C>(p, nullptr));

  const bool neox = Mode == RopeMode::neox, f16 = C == CachePrecision::f16;
  auto q_ref = q, k_ref = k;
  ref::rope(q_ref, s.n_q, s.head_dim, s.rope_dims, neox, base, pos, s.norm ? qw.data() : nullptr, eps);
  ref::rope(k_ref, s.n_kv, s.head_dim, s.rope_dims, neox, base, pos, s.norm ? kw.data() : nullptr, eps);
  auto kc_want = cache_values<C>(kc), vc_want = cache_values<C>(vc);
  ref::cache_row_write(kc_want, k_ref, s.n_kv, s.head_dim, n_ctx, pos, f16);
  ref::cache_row_write(vc_want, v, s.n_kv, s.head_dim, n_ctx, pos, f16);

  const std::string tag = fmt("rope+cache %s %s%s %s n_q=%d n_kv=%d head_dim=%d rope_dims=%d n_ctx=%d pos=%d%s", s.arch,
                              neox ? "neox" : "norm", s.norm ? "+head_norm" : "", f16 ? "f16" : "f32", s.n_q, s.n_kv,
                              s.head_dim, s.rope_dims, n_ctx, pos, k_cache_only ? " k_cache_only" : "");
  if (s.n_q > 0) check(tag + " q", d_q.download(), q_ref, 2e-6, 2e-6);
  // cache_only: K keeps its input bit for bit; otherwise it is rotated in place as without a cache.
  if (k_cache_only)
    check(tag + " k kept", d_k.download(), k, 0.0, 0.0);
  else
    check(tag + " k", d_k.download(), k_ref, 2e-6, 2e-6);
  check(tag + " v kept", d_v.download(), v, 0.0, 0.0);
  // f16: the kernel's f32 value and the reference's may round to neighbouring
  // f16 values (one unit in the last place, < 2^-10 relative), and a value
  // near zero keeps the rotation's absolute f32 error (as K's own check).
  check_cache(tag + " k_cache", cache_values<C>(d_kc.download()), kc_want, s.n_kv, s.head_dim, n_ctx, pos, 2e-6,
              f16 ? 1e-3 : 2e-6);
  check_cache(tag + " v_cache", cache_values<C>(d_vc.download()), vc_want, s.n_kv, s.head_dim, n_ctx, pos, 0.0, 0.0);
}

template <CachePrecision C>
void sweep_rope_cache_precision() {
  const int n_ctx = 48;
  // Real models' attention shapes: Llama-3.2-1B, Qwen2-0.5B, Qwen3-0.6B, and the tiny test models.
  const RopeCacheShape llama[] = {{"llama", 32, 8, 64, 64, false}, {"llama-tiny", 2, 1, 32, 32, false}};
  const RopeCacheShape neox[] = {{"qwen2", 14, 2, 64, 64, false},
                                 {"qwen3", 16, 8, 128, 128, true},
                                 {"qwen3-tiny", 4, 2, 32, 32, true},
                                 {"qwen3 K alone", 0, 8, 128, 128, true},
                                 {"partial rotary", 4, 2, 128, 64, false}};
  for (int pos : {0, 1, n_ctx - 1, n_ctx}) {
    for (bool cache_only : {false, true}) {
      for (const RopeCacheShape& s : llama) sweep_rope_cache_case<RopeMode::norm, C>(s, n_ctx, pos, cache_only);
      for (const RopeCacheShape& s : neox) sweep_rope_cache_case<RopeMode::neox, C>(s, n_ctx, pos, cache_only);
    }
  }
}

void sweep_rope_cache() {
  sweep_rope_cache_precision<CachePrecision::f32>();
  sweep_rope_cache_precision<CachePrecision::f16>();
  // Invalid combinations the launcher must refuse.
  DeviceBuffer<float> buf(4096);
  DeviceBuffer<int> d_pos(std::vector<int>{0});
  RopeParams p{};
  p.parts[0] = {buf.get(), nullptr, 2, nullptr, true};
  p.n_parts = 1;
  p.pos = d_pos.get();
  p.head_dim = 64;
  p.rope_dims = 64;
  expect_refused("rope cache_only without a cache", launch_rope<RopeMode::neox>(p, nullptr));
  p.parts[0] = {buf.get(), nullptr, 2, buf.get() + 128, false};
  p.n_ctx = 0;
  expect_refused("rope cache with n_ctx 0", launch_rope<RopeMode::neox>(p, nullptr));
  p.parts[0].cache = nullptr;
  p.n_ctx = 4;
  p.v = buf.get();
  p.n_v_head = 2;
  expect_refused("rope v without v_cache", launch_rope<RopeMode::neox>(p, nullptr));
}

// ---- kv cache write ------------------------------------------------------------------

template <CachePrecision C>
void sweep_kv_write_case(int n_kv_head, int head_dim, int n_ctx, int pos) {
  using T = std::conditional_t<C == CachePrecision::f32, float, uint16_t>;
  const size_t n = static_cast<size_t>(n_kv_head) * head_dim, cache_n = n * n_ctx;
  const auto k = random_floats(n, -4.0f, 4.0f), v = random_floats(n, -4.0f, 4.0f);
  std::vector<T> kc(cache_n), vc(cache_n);
  for (size_t i = 0; i < cache_n; ++i) {
    kc[i] = static_cast<T>(random_int(0, 30000));
    vc[i] = static_cast<T>(random_int(0, 30000));
  }
  DeviceBuffer<float> d_k(k), d_v(v);
  DeviceBuffer<T> d_kc(kc), d_vc(vc);
  DeviceBuffer<int> d_pos(std::vector<int>{pos});
  KvWriteParams p{d_k.get(), d_v.get(), d_kc.get(), d_vc.get(), d_pos.get(), n_kv_head, head_dim, n_ctx};
  expect_ok("kv_write", launch_kv_write<C>(p, nullptr));
  if (pos < n_ctx) {
    for (int h = 0; h < n_kv_head; ++h) {
      for (int d = 0; d < head_dim; ++d) {
        const size_t src = static_cast<size_t>(h) * head_dim + d;
        const size_t dst = (static_cast<size_t>(h) * n_ctx + pos) * head_dim + d;
        if constexpr (C == CachePrecision::f32) {
          kc[dst] = k[src];
          vc[dst] = v[src];
        } else {
          kc[dst] = ref::f32_to_f16(k[src]);
          vc[dst] = ref::f32_to_f16(v[src]);
        }
      }
    }
  }
  // The whole caches are compared: the row lands in place and nothing else changes.
  const std::string tag = fmt("kv_write %s n_kv_head=%d head_dim=%d n_ctx=%d pos=%d",
                              C == CachePrecision::f32 ? "f32" : "f16", n_kv_head, head_dim, n_ctx, pos);
  check(tag + " k", to_float(d_kc.download()), to_float(kc), 0.0, 0.0);
  check(tag + " v", to_float(d_vc.download()), to_float(vc), 0.0, 0.0);
}

void sweep_kv_write() {
  for (auto [nkv, hd] : {std::pair{2, 64}, std::pair{8, 128}, std::pair{4, 256}}) {
    for (int pos : {0, 17, 63, 64}) {
      sweep_kv_write_case<CachePrecision::f32>(nkv, hd, 64, pos);
      sweep_kv_write_case<CachePrecision::f16>(nkv, hd, 64, pos);
    }
  }
}

// ---- attention -------------------------------------------------------------------

// One attention shape: two launches in a row on the same workspace (as two
// graph replays), at lengths len and len2, each compared with the reference;
// then the split counters must be back at zero. Int8: the launch also writes
// the int8 form of the output (compared with the reference quantization).
// merge_launch: the long-context form, whose clusters leave their partials
// to the merge launch launch_attention runs after the attention kernel.
template <int HeadDim, CachePrecision C, int Group>
void sweep_attention_case(int n_head, int n_kv_head, int len, int len2, int n_split, bool int8,
                          bool merge_launch = false) {
  const int n_ctx = std::max(len, len2) + 64;
  const size_t cache_n = static_cast<size_t>(n_kv_head) * n_ctx * HeadDim;
  const size_t out_n = static_cast<size_t>(n_head) * HeadDim;
  const auto q = random_floats(out_n, -3.0f, 3.0f);
  auto kf = random_floats(cache_n, -1.0f, 1.0f), vf = random_floats(cache_n, -1.0f, 1.0f);
  std::vector<uint16_t> kh, vh;
  if (C == CachePrecision::f16) {
    kh.resize(cache_n);
    vh.resize(cache_n);
    for (size_t i = 0; i < cache_n; ++i) {
      kh[i] = ref::f32_to_f16(kf[i]);
      vh[i] = ref::f32_to_f16(vf[i]);
      kf[i] = ref::f16_to_f32(kh[i]);
      vf[i] = ref::f16_to_f32(vh[i]);
    }
  }
  DeviceBuffer<float> d_q(q), out(out_n), out_d(out_n / kQ8Block);
  DeviceBuffer<int8_t> out_qs(out_n);
  DeviceBuffer<float> d_kf(C == CachePrecision::f32 ? kf : std::vector<float>{});
  DeviceBuffer<float> d_vf(C == CachePrecision::f32 ? vf : std::vector<float>{});
  DeviceBuffer<uint16_t> d_kh(kh), d_vh(vh);
  DeviceBuffer<float> part_acc(static_cast<size_t>(n_head) * n_split * HeadDim);
  DeviceBuffer<float> part_ml(static_cast<size_t>(n_head) * n_split * 2);
  const size_t counters = static_cast<size_t>(n_head) * kAttnClusterSplits;
  DeviceBuffer<int> done(std::vector<int>(counters, 0));  // zero-filled, as the program's buffers
  DeviceBuffer<int> d_pos(std::vector<int>{len - 1});
  AttentionParams p{};
  p.q = d_q.get();
  p.k_cache = C == CachePrecision::f32 ? static_cast<const void*>(d_kf.get()) : d_kh.get();
  p.v_cache = C == CachePrecision::f32 ? static_cast<const void*>(d_vf.get()) : d_vh.get();
  p.out = out.get();
  p.part_acc = part_acc.get();
  p.part_ml = part_ml.get();
  p.done = done.get();
  DeviceBuffer<int8_t> out_lo(out_n);
  if (int8) {
    p.out_qs = out_qs.get();
    p.out_d = out_d.get();
    p.out_lo = out_lo.get();  // the two-word form; the int8-only launch below takes one word
  }
  p.pos = d_pos.get();
  p.scale = 1.0f / std::sqrt(static_cast<float>(HeadDim));
  p.n_head = n_head;
  p.n_kv_head = n_kv_head;
  p.n_ctx = n_ctx;
  p.n_split = n_split;
  p.merge_launch = merge_launch ? 1 : 0;
  for (int l : {len, len2}) {
    d_pos.upload(std::vector<int>{l - 1});
    expect_ok("attention", launch_attention<HeadDim, C, Group>(p, nullptr));
    const auto ref = ref::attention(q, kf, vf, n_head, n_kv_head, HeadDim, n_ctx, l, p.scale);
    const std::string tag = fmt("attention %s hd=%d heads=%d/%d group=%d len=%d splits=%d(%d)%s%s",
                                C == CachePrecision::f32 ? "f32" : "f16", HeadDim, n_head, n_kv_head, Group, l,
                                n_split, attention_effective_splits(l, n_split), int8 ? " +int8" : "",
                                merge_launch ? " +merge launch" : "");
    const auto got = out.download();
    check(tag, got, ref, 2e-6, 1e-4);
    if (int8) {
      // Quantized from the kernel's own f32 output: the same bits as a quantize launch would give.
      std::vector<int8_t> qs_ref(out_n), lo_ref(out_n);
      std::vector<float> d_ref(out_n / kQ8Block);
      ref::quantize_q8(got.data(), static_cast<int>(out_n), qs_ref.data(), d_ref.data());
      ref::quantize_q8_low(got.data(), static_cast<int>(out_n), qs_ref.data(), d_ref.data(), lo_ref.data());
      // Same arithmetic as the reference quantization (blocks.h): exact.
      check(tag + " d", out_d.download(), d_ref, 0.0, 0.0);
      check(tag + " qs", to_float(out_qs.download()), to_float(qs_ref), 0.0, 0.0);
      check(tag + " low words", to_float(out_lo.download()), to_float(lo_ref), 0.0, 0.0);
    }
  }
  if (int8) {
    // The int8 form alone (out = nullptr, as the planner emits it): the same
    // bits again at the last length (the merge order is fixed).
    const auto qs_before = to_float(out_qs.download());
    const auto d_before = out_d.download();
    p.out = nullptr;
    p.out_lo = nullptr;
    expect_ok("attention int8 only", launch_attention<HeadDim, C, Group>(p, nullptr));
    const std::string tag = fmt("attention hd=%d heads=%d/%d len=%d splits=%d int8 only%s", HeadDim, n_head,
                                n_kv_head, len2, n_split, merge_launch ? " +merge launch" : "");
    check(tag + " d", out_d.download(), d_before, 0.0, 0.0);
    check(tag + " qs", to_float(out_qs.download()), qs_before, 0.0, 0.0);
  }
  check(fmt("attention hd=%d heads=%d/%d splits=%d counters back at zero", HeadDim, n_head, n_kv_head, n_split),
        to_float(done.download()), std::vector<float>(counters, 0.0f), 0.0, 0.0);
}

// GQA ratio R (n_kv_head = 2, n_head = 2R), each with the planner's heads a block.
template <int HeadDim, CachePrecision C, int R>
void sweep_attention_ratio() {
  constexpr int kGroup = attention_heads_per_block(R, HeadDim);
  const int lens[] = {1, 2, 63, 64, 65, 1000, 4096};
  const int splits[] = {1, 2, 5, 32};
  for (int i = 0; i < 7; ++i) {
    const int len = lens[i], len2 = lens[(i + 3) % 7];  // a second launch at another length
    for (int n_split : splits) sweep_attention_case<HeadDim, C, kGroup>(2 * R, 2, len, len2, n_split, false);
    sweep_attention_case<HeadDim, C, kGroup>(2 * R, 2, len, len2, 32, false, true);
  }
}

template <int HeadDim, CachePrecision C>
void sweep_attention_dim() {
  sweep_attention_ratio<HeadDim, C, 1>();
  sweep_attention_ratio<HeadDim, C, 2>();
  sweep_attention_ratio<HeadDim, C, 4>();
  sweep_attention_ratio<HeadDim, C, 8>();
}

// Qwen3-8B's long-context form on tensor cores (attention_tc.cuh), its splits
// capped to one wave of clusters: the bench's lengths after a 4k prompt, and
// 8k keys, whose splits walk 8-key tiles after the first 16-key ones. Also a
// family of its own (--only attention_tc), small enough for compute-sanitizer
// (scripts/gpu_check.sh).
void sweep_attention_tc() {
  if (cluster_launches_enabled()) {
    // The form is taken only where one wave holds more than one cluster a group.
    const int wave = attention_tc_wave_splits<128, CachePrecision::f16, 4>(dim3(8, 64));
    std::printf("      tensor-core form: %d splits a wave for 8 head groups\n", wave);
    check("attention tensor-core form holds 2+ clusters a group in one wave", {static_cast<float>(wave >= 16)}, {1.0f},
          0.0, 0.0);
  }
  sweep_attention_case<128, CachePrecision::f16, 4>(32, 8, 4097, 4224, 64, false, true);
  sweep_attention_case<128, CachePrecision::f16, 4>(32, 8, 8193, 2000, 64, true, true);
  // Splits of 16-20 keys: one ends inside warp 1's 16-key tile, warps 2-3 idle.
  sweep_attention_case<128, CachePrecision::f16, 4>(32, 8, 1000, 1100, 64, true, true);
}

void sweep_attention() {
  sweep_attention_dim<32, CachePrecision::f32>();
  sweep_attention_dim<32, CachePrecision::f16>();
  sweep_attention_dim<64, CachePrecision::f32>();
  sweep_attention_dim<64, CachePrecision::f16>();
  sweep_attention_dim<128, CachePrecision::f32>();
  sweep_attention_dim<128, CachePrecision::f16>();
  sweep_attention_dim<256, CachePrecision::f32>();
  sweep_attention_dim<256, CachePrecision::f16>();
  // Qwen3-0.6B's shape (16/8 heads, 128) at a long context, and a block serving fewer heads than the ratio.
  sweep_attention_case<128, CachePrecision::f16, 2>(16, 8, 4096, 17, 33, false);
  // The planner's 40 splits at 2k rows (five clusters of 8 with 2 heads a block: merged in a
  // cluster at 100 keys, through the workspace at 700).
  sweep_attention_case<128, CachePrecision::f16, 2>(16, 8, 100, 700, 40, true);
  // The cluster merge's owners: 4 of 32 elements (one head of 128), 6 of 64
  // (3 heads), 8 of 128 (4 heads of 256), with all 8 splits used.
  sweep_attention_case<128, CachePrecision::f16, 1>(8, 8, 128, 40, 8, true);
  sweep_attention_case<128, CachePrecision::f16, 3>(6, 2, 120, 9, 16, true);
  sweep_attention_case<256, CachePrecision::f32, 4>(8, 2, 128, 50, 8, true);
  // The most splits, 64 (every partial loaded at once in the merge), f16 and f32.
  sweep_attention_case<128, CachePrecision::f16, 2>(16, 8, 4352, 1000, 64, false);
  sweep_attention_case<128, CachePrecision::f32, 4>(32, 8, 4352, 65, 64, true);
  // Qwen3-8B's shape with its f16 cache (4 heads a block), at 4k rows and at a short context.
  sweep_attention_case<128, CachePrecision::f16, 4>(32, 8, 4352, 37, 64, true);
  // The short-context form (lengths up to 128: one cluster of splits) with
  // one query head a block, at Qwen3-0.6B/1.7B's and 8B's ratios, int8
  // output, the most splits (64).
  sweep_attention_case<128, CachePrecision::f16, 1>(16, 8, 128, 17, 64, true);
  sweep_attention_case<128, CachePrecision::f16, 1>(32, 8, 1, 100, 64, true);
  // The long-context form: the clusters' merge as a launch of its own, where
  // one cluster is in use (it exits) and several, at every owner layout.
  sweep_attention_case<128, CachePrecision::f16, 2>(16, 8, 4352, 1000, 64, true, true);
  // The planner's 56 splits past 4k rows (7 clusters), after a 4k prompt.
  sweep_attention_case<128, CachePrecision::f16, 2>(16, 8, 4097, 4224, 56, false, true);
  sweep_attention_case<128, CachePrecision::f16, 2>(16, 8, 100, 700, 40, true, true);
  sweep_attention_case<128, CachePrecision::f16, 4>(32, 8, 4352, 37, 64, true, true);
  sweep_attention_tc();
  sweep_attention_case<128, CachePrecision::f32, 4>(32, 8, 129, 4352, 64, true, true);
  sweep_attention_case<128, CachePrecision::f16, 1>(8, 8, 1000, 40, 16, true, true);
  sweep_attention_case<128, CachePrecision::f16, 3>(6, 2, 300, 9, 16, true, true);
  sweep_attention_case<256, CachePrecision::f32, 4>(8, 2, 4096, 50, 64, true, true);
  sweep_attention_case<96, CachePrecision::f16, 2>(4, 2, 1000, 2, 24, false, true);
  // A head size whose lane runs fit no vector load (3 elements a lane).
  sweep_attention_ratio<96, CachePrecision::f16, 2>();
  sweep_attention_ratio<96, CachePrecision::f32, 2>();
  sweep_attention_case<64, CachePrecision::f32, 2>(16, 2, 1000, 65, 16, false);
  // The int8 output form, with one split and with merged splits.
  for (int len : {1, 65, 1000})
    for (int n_split : {1, 16}) {
      sweep_attention_case<128, CachePrecision::f16, 2>(16, 8, len, 4096, n_split, true);
      sweep_attention_case<64, CachePrecision::f32, 4>(8, 2, len, 2, n_split, true);
    }
  AttentionParams p{};
  float dummy = 0.0f;
  p.out = &dummy;
  p.n_head = 14;
  p.n_kv_head = 4;
  p.n_ctx = 16;
  p.n_split = 1;
  expect_refused("attention n_head % n_kv_head != 0", launch_attention<64, CachePrecision::f32, 1>(p, nullptr));
  p.n_kv_head = 2;
  p.n_split = 2;
  expect_refused("attention splits without workspace", launch_attention<64, CachePrecision::f32, 1>(p, nullptr));
  p.n_split = 1;
  expect_refused("attention group not dividing the ratio", launch_attention<64, CachePrecision::f32, 2>(p, nullptr));
  p.n_split = kAttnMaxSplits + 1;
  expect_refused("attention too many splits", launch_attention<64, CachePrecision::f32, 1>(p, nullptr));
  p.n_split = 1;
  p.out = nullptr;
  expect_refused("attention without an output", launch_attention<64, CachePrecision::f32, 1>(p, nullptr));
}

// ---- elementwise / argmax -------------------------------------------------------

// warp_sum_each<N>: lane l holds values in[(w * 32 + l) * N + i]; every lane
// of the warp must end with all N totals.
template <int N>
__global__ void warp_sum_each_kernel(const float* in, float* out) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  float v[N];
  for (int i = 0; i < N; ++i) v[i] = in[t * N + i];
  warp_sum_each(v);
  for (int i = 0; i < N; ++i) out[t * N + i] = v[i];
}

template <int N>
void sweep_warp_sum_each() {
  constexpr int kWarps = 8;
  const auto in = random_floats(static_cast<size_t>(kWarps) * kWarpSize * N, -4.0f, 4.0f);
  DeviceBuffer<float> d_in(in), d_out(in.size());
  warp_sum_each_kernel<N><<<2, kWarps / 2 * kWarpSize>>>(d_in.get(), d_out.get());
  expect_ok(fmt("warp_sum_each N=%d", N), cudaGetLastError());
  std::vector<float> ref(in.size()), scale(in.size());
  for (int w = 0; w < kWarps; ++w)
    for (int i = 0; i < N; ++i) {
      double sum = 0.0, abs_sum = 0.0;
      for (int l = 0; l < kWarpSize; ++l) {
        sum += in[(static_cast<size_t>(w) * kWarpSize + l) * N + i];
        abs_sum += std::fabs(in[(static_cast<size_t>(w) * kWarpSize + l) * N + i]);
      }
      for (int l = 0; l < kWarpSize; ++l) {
        ref[(static_cast<size_t>(w) * kWarpSize + l) * N + i] = static_cast<float>(sum);
        scale[(static_cast<size_t>(w) * kWarpSize + l) * N + i] = static_cast<float>(abs_sum);
      }
    }
  // Float sums of 32 terms in some order: within 32 ulps of sum |v|.
  check(fmt("warp_sum_each N=%d: every lane has every total", N), d_out.download(), ref, 32 * 1.2e-7, 0.0, scale);
}

void sweep_reductions() {
  sweep_warp_sum_each<1>();
  sweep_warp_sum_each<2>();
  sweep_warp_sum_each<4>();
  sweep_warp_sum_each<8>();
  sweep_warp_sum_each<16>();
  sweep_warp_sum_each<32>();
}

void sweep_elementwise() {
  for (int n : {1, 1000, 8960}) {
    const auto a = random_floats(static_cast<size_t>(n), -8.0f, 8.0f), b = random_floats(static_cast<size_t>(n), -4.0f, 4.0f);
    DeviceBuffer<float> d_a(a), d_b(b), out(static_cast<size_t>(n));
    ElementwiseParams p{d_a.get(), d_b.get(), out.get(), n};
    std::vector<float> ref(static_cast<size_t>(n));
    expect_ok("swiglu", launch_elementwise<ElementwiseOp::swiglu>(p, nullptr));
    for (int i = 0; i < n; ++i) ref[i] = ref::silu(a[i]) * b[i];
    check(fmt("swiglu n=%d", n), out.download(), ref, 1e-6, 2e-6);
    expect_ok("add", launch_elementwise<ElementwiseOp::add>(p, nullptr));
    for (int i = 0; i < n; ++i) ref[i] = a[i] + b[i];
    check(fmt("add n=%d", n), out.download(), ref, 0.0, 0.0);
  }
}

enum class ArgmaxData { ties, nan, all_neg_inf, all_nan };

std::vector<float> argmax_logits(int n_vocab, ArgmaxData kind) {
  const size_t n = static_cast<size_t>(n_vocab);
  if (kind == ArgmaxData::all_neg_inf) return std::vector<float>(n, -INFINITY);
  if (kind == ArgmaxData::all_nan) return std::vector<float>(n, NAN);
  auto logits = random_floats(n, -10.0f, 10.0f);
  // Plant a tie for the maximum: the lower index must win.
  const int hi = random_int(0, n_vocab - 1), lo = random_int(0, hi);
  logits[static_cast<size_t>(hi)] = logits[static_cast<size_t>(lo)] = 11.0f;
  if (kind == ArgmaxData::nan) {
    // NaNs, including at index 0 and next to the maximum; they never win.
    for (int i = 0; i < std::max(1, n_vocab / 100); ++i) logits[static_cast<size_t>(random_int(0, n_vocab - 1))] = NAN;
    logits[0] = NAN;
    if (lo > 0) logits[static_cast<size_t>(lo - 1)] = NAN;
  }
  return logits;
}

const char* argmax_data_name(ArgmaxData kind) {
  switch (kind) {
    case ArgmaxData::ties: return "ties";
    case ArgmaxData::nan: return "NaN";
    case ArgmaxData::all_neg_inf: return "all -inf";
    case ArgmaxData::all_nan: return "all NaN";
  }
  return "?";
}

// Two launches in a row on one workspace (as two graph replays), the second
// over new logits; token, position, ring and counter checked after each.
// `offset` shifts the logits off 16-byte alignment (the scalar path).
void sweep_argmax_case(int n_vocab, int n_blocks, ArgmaxData kind, int offset) {
  DecodeState state(random_int(0, 1000), 5);
  DeviceBuffer<float> d_logits(static_cast<size_t>(n_vocab + offset));
  DeviceBuffer<float> block_value(static_cast<size_t>(n_blocks));
  DeviceBuffer<int> block_index(static_cast<size_t>(n_blocks)), done(std::vector<int>{0});
  ArgmaxParams p{};
  p.logits = d_logits.get() + offset;
  state.bind(p, n_vocab);
  p.n_blocks = n_blocks;
  p.block_value = block_value.get();
  p.block_index = block_index.get();
  p.done = done.get();
  for (int step = 0; step < 2; ++step) {
    auto logits = argmax_logits(n_vocab, step == 0 ? kind : ArgmaxData::ties);
    std::vector<float> padded(static_cast<size_t>(offset), 99.0f);  // before the logits: never read
    padded.insert(padded.end(), logits.begin(), logits.end());
    d_logits.upload(padded);
    expect_ok("argmax", launch_argmax(p, nullptr));
    const int want = argmax_skipping_nan(logits);
    const std::string tag = fmt("argmax n_vocab=%d blocks=%d %s%s launch %d", n_vocab, n_blocks,
                                argmax_data_name(step == 0 ? kind : ArgmaxData::ties), offset ? " unaligned" : "",
                                step + 1);
    state.check_after(tag, step, want);
    check(tag + " counter", to_float(done.download()), {0.0f}, 0.0, 0.0);
  }
}

void sweep_argmax(int sms) {
  for (int n_vocab : {1, 31, 1000, 151936, 262144}) {
    // The planner's grid (lib/plan/size.cpp choose_argmax_blocks), one block, and odd counts.
    const int planned = std::max(1, std::min(sms, ceil_div(n_vocab, kArgmaxMinPerBlock)));
    std::vector<int> grids = {planned, 1, std::min(n_vocab, 7), std::min(n_vocab, 132)};
    std::sort(grids.begin(), grids.end());
    grids.erase(std::unique(grids.begin(), grids.end()), grids.end());
    for (int n_blocks : grids)
      for (ArgmaxData kind : {ArgmaxData::ties, ArgmaxData::nan, ArgmaxData::all_neg_inf, ArgmaxData::all_nan})
        sweep_argmax_case(n_vocab, n_blocks, kind, 0);
    sweep_argmax_case(n_vocab, planned, ArgmaxData::ties, 1);
    sweep_argmax_case(n_vocab, planned, ArgmaxData::nan, 3);
  }
  ArgmaxParams p{};
  float logit = 0.0f;
  int slot = 0;
  p.logits = &logit;
  p.token = p.pos = p.ring = p.ring_count = &slot;
  p.n_vocab = 1000;
  p.ring_capacity = 4;
  p.n_blocks = 4;
  expect_refused("argmax blocks without workspace", launch_argmax(p, nullptr));
  p.n_blocks = 0;
  expect_refused("argmax zero blocks", launch_argmax(p, nullptr));
  unsigned long long key = 0ull;
  p.best = &key;  // the finish form needs the decode state too
  p.token = nullptr;
  expect_refused("argmax finish without its token slot", launch_argmax(p, nullptr));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count()) ^
                  std::random_device{}();
  const char* only = nullptr;  // --only FAMILY: that family's cases alone
  if (argc > 1 && (std::strcmp(argv[argc - 1], "--seed") == 0 || std::strcmp(argv[argc - 1], "--only") == 0)) {
    std::fprintf(stderr, "kernel_sweep: %s needs a value\n", argv[argc - 1]);
    return 2;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--seed") == 0) seed = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--only") == 0) only = argv[i + 1];
  }
  int sms = 0;  // the argmax family's planned grid; set once the device is known
  const std::pair<const char*, std::function<void()>> families[] = {
      {"embed", sweep_embed},           {"rms_norm", sweep_rms_norm},       {"repack", sweep_repack},
      {"gemv", sweep_gemv},             {"gemv_argmax", sweep_gemv_argmax}, {"rope", sweep_rope},
      {"rope_cache", sweep_rope_cache}, {"kv_write", sweep_kv_write},       {"attention", sweep_attention},
      {"attention_tc", sweep_attention_tc}, {"gemv_ahead", sweep_gemv_ahead_both},
      {"elementwise", sweep_elementwise}, {"reductions", sweep_reductions}, {"ffn", sweep_ffn},
      {"argmax", [&sms] { sweep_argmax(sms); }}};
  if (only != nullptr &&
      std::none_of(std::begin(families), std::end(families), [&](const auto& f) { return std::strcmp(only, f.first) == 0; })) {
    std::string names;
    for (const auto& f : families) names += (names.empty() ? "" : ", ") + std::string(f.first);
    std::fprintf(stderr, "kernel_sweep: --only %s: no such family (%s)\n", only, names.c_str());
    return 2;
  }
  std::printf("kernel_sweep seed %llu (repeat with --seed %llu)\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  g_rng.seed(seed);
  int device = 0;
  cudaDeviceProp prop{};
  LANEC_CUDA_CHECK(cudaGetDevice(&device));
  LANEC_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("device %d: %s (sm_%d%d)\n", device, prop.name, prop.major, prop.minor);
  sms = prop.multiProcessorCount;
  // attention_tc and gemv_ahead are parts of attention and gemv: alone only on request.
  const auto part_family = [](const char* name) {
    return std::strcmp(name, "attention_tc") == 0 || std::strcmp(name, "gemv_ahead") == 0;
  };
  for (const auto& [name, run] : families)
    if (only == nullptr ? !part_family(name) : std::strcmp(only, name) == 0) run();

  std::printf("%d passed, %d failed (seed %llu)\n", g_passed, g_failed, static_cast<unsigned long long>(seed));
  return g_failed == 0 ? 0 : 1;
}
