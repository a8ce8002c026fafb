// Bit-identity of the reference executor's weight paths: matmul and
// embedding weights read row by row in their GGUF encoding (the default)
// must give exactly the values of a computation on the store's whole-tensor
// f32 dequantization, and the Q8_0 vector kernel must equal dequantize-then-
// dot on edge-case block scales. Compared with ==, so any change of the dot product's
// summation order or of the dequantized values fails here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "lib/graph/recognize/recognize.h"
#include "lib/quant/codecs.h"
#include "lib/ref/executor.h"
#include "lib/ref/q8_0_dot.h"
#include "lib/ref/weights.h"
#include "tests/recognize/tiny_models.h"

using namespace lanec;
using lanec::testing::make_tiny_model;
using lanec::testing::TinyOptions;

namespace {

// The executor's documented dot product, restated: 8 partial sums over
// i mod 8, a sequential tail, then a fixed pairwise combination.
float dot8(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

}  // namespace

TEST_CASE("reference matmuls on quantized rows equal a recomputation on f32 weights", "[ref]") {
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::F16}) {
    TinyOptions o;
    o.type = type;
    o.layers = 2;
    auto m = make_tiny_model("qwen3-tiny", o);
    const Graph g = recognize_model(*m->gguf);
    WeightStore store(*m->gguf);
    ReferenceExecutor ex(g, store);
    const std::vector<int32_t> tokens{9, 41, 300, 2};
    for (size_t pos = 0; pos < tokens.size(); ++pos) {
      INFO(ggml_type_name(type) << ", position " << pos);
      ex.step(tokens[pos], static_cast<int32_t>(pos));
      size_t matmuls = 0, quantized = 0;
      for (const Op& op : g.ops()) {
        if (op.kind == OpKind::embed_get_rows) {
          const Tensor& table = g.tensor(op.inputs[0]);
          const std::vector<float>& w = store.get(table);
          const int64_t cols = table.cols();
          const std::vector<float> want(w.begin() + tokens[pos] * cols,
                                        w.begin() + (tokens[pos] + 1) * cols);
          CHECK(ex.values(g.tensor(op.outputs[0]).name) == want);
        }
        if (op.kind != OpKind::matmul) continue;
        const Tensor& w_t = g.tensor(op.inputs[1]);
        const std::vector<float>& w = store.get(w_t);
        const std::vector<float> x = ex.values(g.tensor(op.inputs[0]).name);
        const std::vector<float> y = ex.values(g.tensor(op.outputs[0]).name);
        const int64_t cols = w_t.cols(), rows = w_t.numel() / cols;
        REQUIRE(static_cast<int64_t>(y.size()) == rows);
        std::vector<float> want(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) want[r] = dot8(w.data() + r * cols, x.data(), cols);
        INFO(w_t.name);
        CHECK(y == want);
        ++matmuls;
        quantized += w_t.type == type;  // (tiny rows are too short for k-quants)
      }
      CHECK(matmuls >= 2 * 7 + 1);
      CHECK(quantized >= 2 * 7);  // the layers' projections really were quantized
    }
  }
}

TEST_CASE("reference logits are bit-identical with weights read by rows or whole", "[ref]") {
  for (const char* preset : {"qwen3-tiny", "llama-tiny", "qwen2-tiny"}) {
    for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_1, GgmlType::F32}) {
      TinyOptions o;
      o.type = type;
      o.tied = type == GgmlType::Q8_0;
      auto m = make_tiny_model(preset, o);
      const Graph g = recognize_model(*m->gguf);
      WeightStore by_rows_store(*m->gguf), whole_store(*m->gguf);
      ReferenceOptions whole_options;
      whole_options.weights_by_rows = false;
      ReferenceExecutor by_rows(g, by_rows_store), whole(g, whole_store, whole_options);
      const std::vector<int32_t> tokens{1, 77, 5, 400, 3};
      for (size_t pos = 0; pos < tokens.size(); ++pos) {
        INFO(preset << " " << ggml_type_name(type) << ", position " << pos);
        const auto a = by_rows.step(tokens[pos], static_cast<int32_t>(pos));
        const auto b = whole.step(tokens[pos], static_cast<int32_t>(pos));
        CHECK(a == b);
      }
      // The row path keeps matmul and embedding weights out of the f32 cache.
      CHECK(by_rows_store.cached_bytes() < whole_store.cached_bytes() / 10);
    }
  }
}

TEST_CASE("q8_0 row dot products equal dequantize-then-dot bit for bit", "[ref]") {
  if (!q8_0_dot_available()) return;  // the executor then uses dequantize-then-dot itself
  const int64_t n = 96, rows = 7;  // 3 blocks per row; 4 + 3 rows exercise both kernels
  const uint64_t row_bytes = 3 * 34;
  std::vector<float> values(static_cast<size_t>(n * rows));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = std::sin(static_cast<float>(i) * 0.37f) * (1.0f + static_cast<float>(i % 13));
  std::vector<uint8_t> bytes(rows * row_bytes);
  for (int64_t r = 0; r < rows; ++r)
    quantize_row(GgmlType::Q8_0, values.data() + r * n, bytes.data() + r * row_bytes,
                 static_cast<uint64_t>(n));
  // Block scales at the edges of fp16: a subnormal, the largest finite, zero.
  const uint16_t subnormal = 0x0003, largest = 0x7BFF, zero = 0x0000;
  std::memcpy(bytes.data() + 1 * row_bytes, &subnormal, 2);
  std::memcpy(bytes.data() + 2 * row_bytes + 34, &largest, 2);
  std::memcpy(bytes.data() + 5 * row_bytes + 68, &zero, 2);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = std::cos(static_cast<float>(i) * 1.3f) * 0.01f;
  std::vector<float> got(rows), row(static_cast<size_t>(n));
  q8_0_dot_rows(bytes.data(), row_bytes, 0, rows, x.data(), n, got.data());
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row(GgmlType::Q8_0, bytes.data() + r * row_bytes, row.data(), static_cast<uint64_t>(n));
    const float want = dot8(row.data(), x.data(), n);
    INFO("row " << r);
    CHECK(std::memcmp(&got[r], &want, sizeof want) == 0);
  }
}
