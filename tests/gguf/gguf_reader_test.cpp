// GGUF reader: every value type from a file written by an independent writer
// (the PyPI gguf package), versions 2 and 3, alignments, typed accessors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "lib/gguf/gguf_file.h"
#include "tests/gguf/gguf_test_util.h"

namespace lanec {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected a lanec::Error");
  return {};
}

}  // namespace

TEST_CASE("gguf reader reads every value type of a file from another writer", "[gguf]") {
  const std::string path = std::string(LANEC_TEST_DATA) + "/gguf/python_all_types.gguf";
  const GgufFile f = GgufFile::open(path);
  CHECK(f.version() == 3);
  CHECK(f.alignment() == 32);
  CHECK(f.get_string("general.architecture") == "testarch");
  CHECK(f.find("t.u8")->type == GgufValueType::U8);
  CHECK(f.get_uint("t.u8") == 200);
  CHECK(f.find("t.i8")->type == GgufValueType::I8);
  CHECK(f.get_int("t.i8") == -100);
  CHECK(f.get_uint("t.u16") == 60000);
  CHECK(f.find("t.i16")->type == GgufValueType::I16);
  CHECK(f.get_int("t.i16") == -30000);
  CHECK(f.get_uint("t.u32") == 4000000000u);
  CHECK(f.get_int("t.i32") == -2000000000);
  CHECK(f.find("t.f32")->type == GgufValueType::F32);
  CHECK(f.get_float("t.f32") == 1.5);
  CHECK(f.get_uint("t.u64") == 18000000000000000000ull);
  CHECK(f.get_int("t.i64") == -9000000000000000000ll);
  CHECK(f.find("t.f64")->type == GgufValueType::F64);
  CHECK(f.get_float("t.f64") == 2.25);
  CHECK(f.get_bool("t.bool") == true);
  CHECK(f.get_string("t.string") == "h\xc3\xa9llo");
  CHECK(f.get_string_array("t.arr_str") == std::vector<std::string>{"a", "bc", ""});
  CHECK(f.get_float_array("t.arr_f32") == std::vector<float>{0.5f, -1.0f});
  CHECK(f.get_array("t.arr_u8").elem_type == GgufValueType::U8);
  CHECK(f.get_int_array("t.arr_u8") == std::vector<int64_t>{1, 2, 255});
  CHECK(f.get_int_array("t.arr_i64") == std::vector<int64_t>{-5, 6});
  const GgufArray& bools = f.get_array("t.arr_bool");
  REQUIRE(bools.items.size() == 2);
  CHECK(bools.items[0] == GgufValue::boolean(true));
  CHECK(bools.items[1] == GgufValue::boolean(false));
  // File order is kept.
  CHECK(f.metadata().front().first == "general.architecture");
  CHECK(f.metadata().back().first == "t.arr_bool");

  REQUIRE(f.tensors().size() == 2);
  const GgufTensorInfo& w32 = f.tensor("w.f32");
  CHECK(w32.type == GgmlType::F32);
  CHECK(w32.ne == std::vector<uint64_t>{4, 3});
  CHECK(w32.rows() == 3);
  CHECK(w32.row_bytes() == 16);
  CHECK(w32.n_bytes == 48);
  CHECK(w32.n_elements == 12);
  CHECK(w32.shape_string() == "[4, 3]");
  REQUIRE(w32.data != nullptr);
  float values[12];
  std::memcpy(values, w32.data, sizeof(values));
  for (int i = 0; i < 12; ++i) CHECK(values[i] == static_cast<float>(i));
  const GgufTensorInfo& w16 = f.tensor("w.f16");
  CHECK(w16.type == GgmlType::F16);
  CHECK(w16.ne == std::vector<uint64_t>{32, 2});
  CHECK((w16.data - w32.data) % 32 == 0);
  CHECK(static_cast<uint64_t>(w16.data - w32.data) == w16.offset - w32.offset);
}

TEST_CASE("gguf reader accepts versions 2 and 3", "[gguf]") {
  for (uint32_t version : {2u, 3u}) {
    const std::vector<uint8_t> bytes = test::small_writer(version).to_bytes();
    const GgufFile f = test::parse_bytes(bytes);
    CHECK(f.version() == version);
    CHECK(f.get_uint("a.u32") == 7);
    CHECK(f.tensors().size() == 2);
  }
}

TEST_CASE("gguf reader honours general.alignment of any power of two", "[gguf]") {
  for (uint32_t alignment : {1u, 32u, 64u, 4096u}) {
    GgufWriter w = test::small_writer();
    w.set_alignment(alignment);
    const std::vector<uint8_t> bytes = w.to_bytes();
    const GgufFile f = test::parse_bytes(bytes);
    CHECK(f.alignment() == alignment);
    CHECK(f.data_offset() % alignment == 0);
    for (const GgufTensorInfo& t : f.tensors()) {
      CHECK(t.offset % alignment == 0);
      CHECK(static_cast<uint64_t>(t.data - bytes.data()) == f.data_offset() + t.offset);
    }
    CHECK(std::memcmp(f.tensor("tensor.bbb").data, test::pattern_bytes(102, 2).data(), 102) == 0);
  }
}

TEST_CASE("gguf reader accepts general.alignment of any integer type", "[gguf]") {
  GgufWriter w = test::small_writer();
  w.set_alignment(64);
  std::vector<uint8_t> bytes = w.to_bytes();
  // Re-tag the u32 value as an i32 (same width): still 64.
  const size_t key = test::find_bytes(bytes, "general.alignment");
  test::patch<uint32_t>(bytes, key + 17, static_cast<uint32_t>(GgufValueType::I32));
  const GgufFile f = test::parse_bytes(bytes);
  CHECK(f.find("general.alignment")->type == GgufValueType::I32);
  CHECK(f.alignment() == 64);
}

TEST_CASE("gguf open maps the file and names it in errors", "[gguf]") {
  const std::string path = test::temp_path("gguf_reader_test_open.gguf");
  test::small_writer().write(path, 2);
  {
    const GgufFile f = GgufFile::open(path);
    CHECK(f.path() == path);
    CHECK(f.get_string("general.architecture") == "llama");
    CHECK(std::memcmp(f.tensor("tensor.aaa").data, test::pattern_bytes(32, 1).data(), 32) == 0);
  }
  // Truncate the file on disk: the error names the path.
  std::vector<uint8_t> bytes = test::small_writer().to_bytes();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), 30);
  }
  const std::string message = error_of([&] { GgufFile::open(path); });
  CHECK_THAT(message, Catch::StartsWith(path + ": at byte "));
  std::remove(path.c_str());
  CHECK_THAT(error_of([&] { GgufFile::open("no/such/file.gguf"); }),
             Catch::Contains("no/such/file.gguf: cannot open"));
  {
    std::ofstream empty(path, std::ios::binary | std::ios::trunc);
  }
  CHECK_THAT(error_of([&] { GgufFile::open(path); }), Catch::Contains("too short for a GGUF header"));
  std::remove(path.c_str());
}

TEST_CASE("gguf typed accessors name file, key, expected and found type", "[gguf]") {
  GgufWriter w = test::small_writer();
  w.set("a.neg", GgufValue::i32(-3));
  w.set("a.big", GgufValue::u64(~uint64_t{0}));
  w.set("a.f", GgufValue::f32(0.25f));
  const std::vector<uint8_t> bytes = w.to_bytes();
  const GgufFile f = test::parse_bytes(bytes, "model.gguf");

  CHECK(error_of([&] { f.get_uint("nope"); }) ==
        "model.gguf: missing key 'nope' (expected an unsigned integer)");
  CHECK(error_of([&] { f.get_uint("general.architecture"); }) ==
        "model.gguf: key 'general.architecture': expected an unsigned integer, found string "
        "(\"llama\")");
  CHECK(error_of([&] { f.get_string("a.u32"); }) ==
        "model.gguf: key 'a.u32': expected a string, found u32 (7)");
  CHECK_THAT(error_of([&] { f.get_uint("a.neg"); }), Catch::Contains("which is negative"));
  CHECK_THAT(error_of([&] { f.get_int("a.big"); }), Catch::Contains("fits in i64"));
  CHECK_THAT(error_of([&] { f.get_float("a.u32"); }),
             Catch::Contains("expected a float (f32 or f64), found u32"));
  CHECK_THAT(error_of([&] { f.get_bool("a.f"); }), Catch::Contains("expected a bool, found f32"));
  CHECK_THAT(error_of([&] { f.get_array("a.u32"); }),
             Catch::Contains("key 'a.u32': expected an array, found u32"));
  CHECK_THAT(error_of([&] { f.get_string_array("a.arr"); }),
             Catch::Contains("expected an array of string, found array of u32"));
  CHECK_THAT(error_of([&] { f.get_float_array("a.strs"); }),
             Catch::Contains("found array of string"));
  CHECK_THAT(error_of([&] { f.get_int_array("a.strs"); }),
             Catch::Contains("expected an array of integers, found array of string"));
  CHECK_THAT(error_of([&] { f.tensor("tensor.zzz"); }),
             Catch::Contains("model.gguf: no tensor named 'tensor.zzz'"));

  CHECK(f.get_int("a.neg") == -3);
  CHECK(f.get_uint("a.big") == ~uint64_t{0});
  CHECK(f.get_int("a.u32") == 7);
  CHECK(f.get_float("a.f") == 0.25);
  CHECK(f.get_int_array("a.arr") == std::vector<int64_t>{1, 2, 3});
  CHECK(f.get_uint_or("missing", 11) == 11);
  CHECK(f.get_uint_or("a.u32", 11) == 7);
  CHECK(f.get_float_or("missing", 0.5) == 0.5);
  CHECK(f.get_bool_or("a.flag", false) == true);
  CHECK(f.get_string_or("missing", "dflt") == "dflt");
  CHECK_THAT(error_of([&] { f.get_uint_or("general.architecture", 1); }),
             Catch::Contains("expected an unsigned integer, found string"));
  CHECK(f.find_tensor("tensor.zzz") == nullptr);
  CHECK(f.has("a.u32"));
  CHECK_FALSE(f.has("a.u33"));
}

TEST_CASE("gguf value summaries are one readable line", "[gguf]") {
  CHECK(gguf_value_summary(GgufValue::u32(7)) == "7");
  CHECK(gguf_value_summary(GgufValue::f32(1e-6f)) == "1e-06");
  CHECK(gguf_value_summary(GgufValue::boolean(false)) == "false");
  CHECK(gguf_value_summary(GgufValue::string("a\"b\n")) == "\"a\\\"b\\n\"");
  CHECK(gguf_value_summary(GgufValue::string_array({"a", "b", "c"}), 2) ==
        "3 strings: [\"a\", \"b\", ...]");
  CHECK(gguf_value_summary(GgufValue::i32_array({5}), 0) == "1 i32");
  CHECK(gguf_value_summary(GgufValue::u32_array({1, 2})) == "2 u32s: [1, 2]");
  CHECK(GgufValue::f32(NAN) == GgufValue::f32(NAN));
  CHECK(GgufValue::u32(1) != GgufValue::i32(1));
  CHECK(GgufValue::f32_array({1.f}) == GgufValue::f32_array({1.f}));
  CHECK(GgufValue::f32_array({1.f}) != GgufValue::f32_array({2.f}));
}

}  // namespace lanec

namespace lanec {

TEST_CASE("gguf reader opens real vocabulary files written by llama.cpp tools", "[gguf]") {
  struct Expect {
    const char* file;
    const char* arch;
    size_t tokens;
  };
  for (const Expect& e : {Expect{"ggml-vocab-gpt-2.gguf", "gpt2", 50257},
                          Expect{"ggml-vocab-llama-spm.gguf", "llama", 32000},
                          Expect{"qwen3-vocab.gguf", "qwen3", 151936}}) {
    INFO(e.file);
    const GgufFile f = GgufFile::open(std::string(LANEC_TEST_DATA) + "/vocab/" + e.file);
    CHECK(f.get_string("general.architecture") == e.arch);
    CHECK(f.get_string_array("tokenizer.ggml.tokens").size() == e.tokens);
    CHECK(f.get_array("tokenizer.ggml.token_type").items.size() == e.tokens);
    CHECK(f.tensors().empty());
    CHECK(f.data_offset() % 32 == 0);
  }
}

}  // namespace lanec

namespace lanec {

TEST_CASE("gguf reader accepts a tensorless file that ends right after its metadata", "[gguf]") {
  GgufWriter w;
  w.set("general.architecture", GgufValue::string("gpt2"));  // 24 + 28 + 4 + 12 = 68 bytes
  std::vector<uint8_t> bytes = w.to_bytes();
  REQUIRE(bytes.size() == 96);
  const GgufFile f = GgufFile::parse(bytes.data(), 68, "vocab.gguf");
  CHECK(f.get_string("general.architecture") == "gpt2");
  CHECK(f.data_offset() == 96);
  CHECK(f.tensors().empty());
}

}  // namespace lanec
