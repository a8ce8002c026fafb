// GGUF writer: what it writes the reader reads back identically: metadata of
// every type, arrays of every element type, tensors of several formats from
// buffers and from parallel fill callbacks, through write() and to_bytes().
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"
#include "tests/gguf/gguf_test_util.h"

namespace lanec {
namespace {

GgufValue array_of(GgufValueType type, std::vector<GgufValue> items) {
  GgufArray a;
  a.elem_type = type;
  a.items = std::move(items);
  return GgufValue::array(std::move(a));
}

std::vector<std::pair<std::string, GgufValue>> every_value() {
  std::vector<std::pair<std::string, GgufValue>> kv = {
      {"v.u8", GgufValue::u8(255)},
      {"v.i8", GgufValue::i8(-128)},
      {"v.u16", GgufValue::u16(65535)},
      {"v.i16", GgufValue::i16(-32768)},
      {"v.u32", GgufValue::u32(4294967295u)},
      {"v.i32", GgufValue::i32(-2147483647 - 1)},
      {"v.f32", GgufValue::f32(-0.0f)},
      {"v.f32nan", GgufValue::f32(NAN)},
      {"v.bool", GgufValue::boolean(true)},
      {"v.string", GgufValue::string(std::string("with\0nul", 8))},
      {"v.empty", GgufValue::string("")},
      {"v.u64", GgufValue::u64(~uint64_t{0})},
      {"v.i64", GgufValue::i64(INT64_MIN)},
      {"v.f64", GgufValue::f64(1e300)},
      {"a.u8", array_of(GgufValueType::U8, {GgufValue::u8(0), GgufValue::u8(9)})},
      {"a.i8", array_of(GgufValueType::I8, {GgufValue::i8(-1)})},
      {"a.u16", array_of(GgufValueType::U16, {GgufValue::u16(1), GgufValue::u16(2)})},
      {"a.i16", array_of(GgufValueType::I16, {GgufValue::i16(-7)})},
      {"a.u32", GgufValue::u32_array({1, 2, 3})},
      {"a.i32", GgufValue::i32_array({-1, 0, 1})},
      {"a.f32", GgufValue::f32_array({0.5f, 1e-6f})},
      {"a.bool", array_of(GgufValueType::BOOL, {GgufValue::boolean(false), GgufValue::boolean(true)})},
      {"a.string", GgufValue::string_array({"", "a", "\xe2\x96\x81the"})},
      {"a.u64", array_of(GgufValueType::U64, {GgufValue::u64(1ull << 40)})},
      {"a.i64", array_of(GgufValueType::I64, {GgufValue::i64(-(1ll << 40))})},
      {"a.f64", array_of(GgufValueType::F64, {GgufValue::f64(3.25)})},
      {"a.empty", array_of(GgufValueType::STRING, {})},
  };
  return kv;
}

void check_metadata(const GgufFile& f, const std::vector<std::pair<std::string, GgufValue>>& kv) {
  for (const auto& [key, value] : kv) {
    const GgufValue* got = f.find(key);
    REQUIRE(got != nullptr);
    CHECK(*got == value);
  }
}

}  // namespace

TEST_CASE("gguf writer round-trips every metadata type and array element type", "[gguf]") {
  for (uint32_t version : {2u, 3u}) {
    GgufWriter w(version);
    const auto kv = every_value();
    for (const auto& [key, value] : kv) w.set(key, value);
    w.set("v.u8", GgufValue::u8(255));  // replacing keeps the first position
    const std::vector<uint8_t> bytes = w.to_bytes();
    const GgufFile f = test::parse_bytes(bytes);
    CHECK(f.version() == version);
    REQUIRE(f.metadata().size() == kv.size());
    for (size_t i = 0; i < kv.size(); ++i) CHECK(f.metadata()[i].first == kv[i].first);
    check_metadata(f, kv);
    CHECK(f.tensors().empty());
  }
}

TEST_CASE("gguf writer round-trips tensors of several formats through a file", "[gguf]") {
  struct Spec {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type;
  };
  const std::vector<Spec> specs = {
      {"f32", {7, 3}, GgmlType::F32},          {"f16", {16, 5, 2}, GgmlType::F16},
      {"bf16", {3}, GgmlType::BF16},           {"q8_0", {64, 9}, GgmlType::Q8_0},
      {"q4_0", {32, 4}, GgmlType::Q4_0},       {"q4_1", {32, 1}, GgmlType::Q4_1},
      {"q5_0", {96, 2}, GgmlType::Q5_0},       {"q5_1", {32, 2}, GgmlType::Q5_1},
      {"q4_k", {256, 3}, GgmlType::Q4_K},      {"q5_k", {512, 1}, GgmlType::Q5_K},
      {"q6_k", {256, 2, 1, 2}, GgmlType::Q6_K}, {"mxfp4", {64, 3}, GgmlType::MXFP4},
      {"empty", {0, 4}, GgmlType::F32},
  };
  for (uint32_t alignment : {32u, 64u, 1u}) {
    GgufWriter w;
    if (alignment != 32) w.set_alignment(alignment);
    w.set("general.architecture", GgufValue::string("llama"));
    std::vector<std::vector<uint8_t>> expected;
    for (size_t i = 0; i < specs.size(); ++i) {
      const Spec& s = specs[i];
      const uint64_t n = *ggml_tensor_bytes(s.type, s.ne);
      expected.push_back(test::pattern_bytes(n, static_cast<uint8_t>(i * 13)));
      if (i % 2 == 0) {
        w.add_tensor(s.name, s.ne, s.type, expected.back());
      } else {
        const std::vector<uint8_t> source = expected.back();
        const uint64_t row_bytes = *ggml_row_bytes(s.type, s.ne[0]);
        w.add_tensor(s.name, s.ne, s.type, [source, row_bytes](uint8_t* dst, uint64_t first, uint64_t rows) {
          std::memcpy(dst, source.data() + first * row_bytes, rows * row_bytes);
        });
      }
    }
    const std::string path = test::temp_path("gguf_writer_test_tensors.gguf");
    std::vector<std::pair<uint64_t, uint64_t>> progress;
    w.write(path, 3, [&](uint64_t done, uint64_t total) { progress.emplace_back(done, total); });
    REQUIRE_FALSE(progress.empty());
    CHECK(progress.back().first == progress.back().second);
    uint64_t data_bytes = 0;
    for (const auto& e : expected) data_bytes += e.size();
    CHECK(progress.back().second == data_bytes);
    for (size_t i = 1; i < progress.size(); ++i) CHECK(progress[i - 1].first <= progress[i].first);
    const GgufFile f = GgufFile::open(path);
    CHECK(f.alignment() == alignment);
    CHECK(f.has("general.alignment") == (alignment != 32));
    REQUIRE(f.tensors().size() == specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      const GgufTensorInfo& t = f.tensors()[i];
      CHECK(t.name == specs[i].name);
      CHECK(t.ne == specs[i].ne);
      CHECK(t.type == specs[i].type);
      CHECK(t.offset % alignment == 0);
      REQUIRE(t.n_bytes == expected[i].size());
      CHECK(std::memcmp(t.data, expected[i].data(), t.n_bytes) == 0);
    }
    // to_bytes() produces the same file byte for byte.
    const std::vector<uint8_t> in_memory = w.to_bytes();
    REQUIRE(in_memory.size() == f.file_size());
    CHECK(std::memcmp(in_memory.data(), f.tensors()[0].data - f.data_offset() - f.tensors()[0].offset,
                      in_memory.size()) == 0);
    std::remove(path.c_str());
  }
}

TEST_CASE("gguf writer fills big tensors in parallel over disjoint row ranges", "[gguf]") {
  // 4096 rows of 4 KiB (16 MiB): more than one chunk, so several threads take part.
  const uint64_t rows = 4096, cols = 1024;
  std::mutex mutex;
  std::set<std::thread::id> threads_seen;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  std::atomic<uint64_t> rows_filled{0};
  GgufWriter w;
  w.add_tensor("big", {cols, rows}, GgmlType::F32, [&](uint8_t* dst, uint64_t first, uint64_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads_seen.insert(std::this_thread::get_id());
      ranges.emplace_back(first, n);
    }
    for (uint64_t r = 0; r < n; ++r) {
      std::vector<float> row(cols, static_cast<float>(first + r));
      std::memcpy(dst + r * cols * 4, row.data(), cols * 4);
    }
    rows_filled += n;
  });
  const std::string path = test::temp_path("gguf_writer_test_big.gguf");
  w.write(path, 2);
  CHECK(rows_filled == rows);
  CHECK(threads_seen.size() >= 1);
  CHECK(ranges.size() >= 2);  // 16 MiB is cut into several chunks
  // The ranges are disjoint and cover every row exactly once.
  std::sort(ranges.begin(), ranges.end());
  uint64_t next_row = 0;
  for (const auto& [first, n] : ranges) {
    CHECK(first == next_row);
    next_row = first + n;
  }
  CHECK(next_row == rows);
  const GgufFile f = GgufFile::open(path);
  const auto* data = reinterpret_cast<const float*>(f.tensor("big").data);
  bool all_match = true;
  for (uint64_t r = 0; r < rows; ++r) {
    if (data[r * cols] != static_cast<float>(r) || data[r * cols + cols - 1] != static_cast<float>(r))
      all_match = false;
  }
  CHECK(all_match);
  std::remove(path.c_str());
}

TEST_CASE("gguf writer reports a failing fill and rejects bad input", "[gguf]") {
  GgufWriter w;
  w.add_tensor("bad", {32, 4}, GgmlType::F32, [](uint8_t*, uint64_t, uint64_t) {
    throw Error("fill failed on purpose");
  });
  const std::string path = test::temp_path("fail.gguf");
  CHECK_THROWS_WITH(w.write(path, 2), "fill failed on purpose");
  std::remove(path.c_str());

  GgufWriter v;
  CHECK_THROWS_WITH(v.add_tensor("t", {33}, GgmlType::Q8_0, std::vector<uint8_t>(34)),
                    Catch::Contains("not a multiple of the block size 32"));
  CHECK_THROWS_WITH(v.add_tensor("t", {32}, GgmlType::Q8_0, std::vector<uint8_t>(33)),
                    Catch::Contains("needs 34 bytes"));
  CHECK_THROWS_WITH(v.add_tensor("t", {1, 1, 1, 1, 1}, GgmlType::F32, std::vector<uint8_t>(4)),
                    Catch::Contains("expected 1 to 4"));
  v.add_tensor("t", {1}, GgmlType::F32, std::vector<uint8_t>(4));
  CHECK_THROWS_WITH(v.add_tensor("t", {1}, GgmlType::F32, std::vector<uint8_t>(4)),
                    Catch::Contains("duplicate tensor name 't'"));
  CHECK_THROWS_WITH(v.set_alignment(48), Catch::Contains("alignment 48 is not a power of two"));
  CHECK_THROWS_WITH(v.set("general.alignment", GgufValue::i32(-64)),
                    Catch::Contains("alignment -64 is not a power of two"));
  CHECK_THROWS_WITH(v.set("general.alignment", GgufValue::string("64")),
                    Catch::Contains("must be an integer, got string"));
  v.set("general.alignment", GgufValue::u64(16));  // any integer type, as the reader accepts
  CHECK(test::parse_bytes(v.to_bytes()).alignment() == 16);
  GgufArray nested;
  nested.elem_type = GgufValueType::ARRAY;
  CHECK_THROWS_WITH(v.set("n", GgufValue::array(nested)), Catch::Contains("array of arrays"));
  CHECK_THROWS_WITH(GgufWriter(1), Catch::Contains("not 2 or 3"));
}

}  // namespace lanec
