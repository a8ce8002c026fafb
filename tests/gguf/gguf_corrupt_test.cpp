// A corpus of broken GGUF files made from a valid writer-produced one: each
// gives a clean lanec::Error whose message names the file and the byte
// offset and says what was wrong — never a crash, hang or huge allocation.
#include <catch2/catch.hpp>

#include <limits>

#include "lib/gguf/gguf_file.h"
#include "tests/gguf/gguf_test_util.h"

namespace lanec {
namespace {

using test::find_bytes;
using test::parse_error;
using test::patch;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// Offsets of the fields of one key (see small_writer for the keys).
struct KeyAt {
  size_t key;    // first byte of the key's characters
  size_t type;   // u32 value type
  size_t value;  // value (for an array: its element type)
};

KeyAt key_at(const std::vector<uint8_t>& bytes, const std::string& key) {
  const size_t at = find_bytes(bytes, key);
  return {at, at + key.size(), at + key.size() + 4};
}

// Offsets of the fields of one tensor info (names are 10 characters).
struct TensorAt {
  size_t name, n_dims, ne, type, offset;
};

TensorAt tensor_at(const std::vector<uint8_t>& bytes, const std::string& name, uint32_t n_dims) {
  const size_t at = find_bytes(bytes, name);
  const size_t ne = at + name.size() + 4;
  const size_t type = ne + 8 * n_dims;
  return {at, at + name.size(), ne, type, type + 4};
}

// The message must name the file and the offset, and say `what`.
void check_error(const std::vector<uint8_t>& bytes, size_t at, const std::string& what) {
  const std::string message = parse_error(bytes);
  INFO(message);
  CHECK_THAT(message, Catch::StartsWith("model.gguf: at byte " + std::to_string(at) + ": "));
  CHECK_THAT(message, Catch::Contains(what));
}

}  // namespace

TEST_CASE("gguf corrupt: truncation at every byte is an error, never a crash", "[gguf]") {
  const std::vector<uint8_t> bytes = test::small_writer().to_bytes();
  const GgufFile whole = test::parse_bytes(bytes);
  uint64_t needed = whole.data_offset();
  for (const GgufTensorInfo& t : whole.tensors()) {
    needed = std::max(needed, whole.data_offset() + t.offset + t.n_bytes);
  }
  for (size_t size = 0; size < bytes.size(); ++size) {
    INFO("truncated to " << size << " bytes");
    if (size < needed) {
      const std::string message = parse_error(bytes, size);
      CHECK_THAT(message, Catch::StartsWith("model.gguf: at byte "));
    } else {
      CHECK_NOTHROW(GgufFile::parse(bytes.data(), size, "model.gguf"));
    }
  }
}

TEST_CASE("gguf corrupt: truncation at each section boundary says where", "[gguf]") {
  const std::vector<uint8_t> bytes = test::small_writer().to_bytes();
  const GgufFile whole = test::parse_bytes(bytes);
  const size_t first_tensor_info = find_bytes(bytes, "tensor.aaa") - 8;
  const size_t end_of_infos = tensor_at(bytes, "tensor.bbb", 2).offset + 8;

  CHECK_THAT(parse_error(bytes, 0), Catch::Contains("at byte 0: file is too short for a GGUF header"));
  CHECK_THAT(parse_error(bytes, 4), Catch::Contains("at byte 4: file ends inside version"));
  CHECK_THAT(parse_error(bytes, 8), Catch::Contains("at byte 8: file ends inside tensor count"));
  CHECK_THAT(parse_error(bytes, 16), Catch::Contains("at byte 16: file ends inside metadata count"));
  CHECK_THAT(parse_error(bytes, 24),
             Catch::Contains("at byte 16: metadata count 5 (at least 13 bytes each) exceeds the 0 "
                             "bytes left in the file"));
  {
    // With one key announced, the count check passes and the string length is what fails.
    std::vector<uint8_t> one_key = bytes;
    patch<uint64_t>(one_key, 16, 1);
    CHECK_THAT(parse_error(one_key, 32 + 20 + 4 + 8 + 2),
               Catch::Contains("at byte 56: string value of 'general.architecture' length 5 "
                               "exceeds the 2 bytes left in the file"));
  }
  CHECK_THAT(parse_error(bytes, first_tensor_info),
             Catch::Contains("at byte 8: tensor count 2 (at least 32 bytes each) exceeds the 0 bytes"));
  CHECK_THAT(parse_error(bytes, end_of_infos),
             Catch::Contains("tensor 'tensor.aaa' (32 bytes at data offset 0) runs past the end "
                             "of the data section, which has 0 bytes"));
  CHECK_THAT(parse_error(bytes, whole.data_offset()),
             Catch::Contains("tensor 'tensor.aaa' (32 bytes at data offset 0) runs past the end "
                             "of the data section, which has 0 bytes"));
}

TEST_CASE("gguf corrupt: bad magic and versions", "[gguf]") {
  const std::vector<uint8_t> good = test::small_writer().to_bytes();
  std::vector<uint8_t> bytes = good;
  bytes[0] = 'X';
  bytes[3] = 0;
  check_error(bytes, 0, "not a GGUF file: expected the magic \"GGUF\", found \"XGU\\x00\"");
  for (uint32_t version : {0u, 1u, 4u, 0xFFFFFFFFu}) {
    bytes = good;
    patch<uint32_t>(bytes, 4, version);
    check_error(bytes, 4, "unsupported GGUF version " + std::to_string(version) +
                              " (lanec reads versions 2 and 3)");
  }
  bytes = good;
  patch<uint32_t>(bytes, 4, 0x03000000u);
  check_error(bytes, 4, "looks byte-swapped");
}

TEST_CASE("gguf corrupt: counts and lengths near 2^64 fail before any allocation", "[gguf]") {
  const std::vector<uint8_t> good = test::small_writer().to_bytes();
  const size_t left_after_header = good.size() - 24;
  std::vector<uint8_t> bytes = good;
  patch<uint64_t>(bytes, 16, kMax);
  check_error(bytes, 16, "metadata count 18446744073709551615 (at least 13 bytes each) exceeds the " +
                             std::to_string(good.size() - 24) + " bytes left in the file");

  bytes = good;
  patch<uint64_t>(bytes, 8, uint64_t{1} << 63);
  check_error(bytes, 8, "tensor count 9223372036854775808 (at least 32 bytes each) exceeds");

  bytes = good;
  patch<uint64_t>(bytes, 24, kMax);
  check_error(bytes, 24, "metadata key #0 length 18446744073709551615 exceeds the " +
                             std::to_string(left_after_header - 8) + " bytes left in the file");

  bytes = good;
  const KeyAt arch = key_at(bytes, "general.architecture");
  patch<uint64_t>(bytes, arch.value, kMax);
  check_error(bytes, arch.value,
              "string value of 'general.architecture' length 18446744073709551615 exceeds the " +
                  std::to_string(good.size() - arch.value - 8) + " bytes left in the file");

  for (uint64_t count : {uint64_t{1} << 63, kMax, kMax / 4 + 1}) {
    bytes = good;
    const KeyAt arr = key_at(bytes, "a.arr");
    patch<uint64_t>(bytes, arr.value + 4, count);
    check_error(bytes, arr.value + 4,
                "array 'a.arr' of u32 count " + std::to_string(count) +
                    " (at least 4 bytes each) exceeds the " +
                    std::to_string(good.size() - arr.value - 12) + " bytes left in the file");
  }

  bytes = good;
  const KeyAt strs = key_at(bytes, "a.strs");
  patch<uint64_t>(bytes, strs.value + 4 + 8 + 8 + 1, kMax - 7);  // length of the second string
  check_error(bytes, strs.value + 4 + 8 + 8 + 1,
              "string value of 'a.strs'[1] length 18446744073709551608 exceeds the");

  bytes = good;
  const TensorAt aaa = tensor_at(bytes, "tensor.aaa", 2);
  patch<uint64_t>(bytes, aaa.name - 8, kMax);
  check_error(bytes, aaa.name - 8, "name of tensor #0 length 18446744073709551615 exceeds");
}

TEST_CASE("gguf corrupt: a tensor name longer than the limit", "[gguf]") {
  GgufWriter w;
  w.add_tensor("tensor.aaa", {8192}, GgmlType::I8, std::vector<uint8_t>(8192, 1));
  std::vector<uint8_t> bytes = w.to_bytes();
  const size_t length_at = find_bytes(bytes, "tensor.aaa") - 8;
  patch<uint64_t>(bytes, length_at, kGgufMaxTensorNameBytes + 1);
  check_error(bytes, length_at, "name of tensor #0 length 4097 exceeds the limit of 4096 bytes");
  CHECK_THROWS_WITH(w.add_tensor(std::string(kGgufMaxTensorNameBytes + 1, 'n'), {1}, GgmlType::I8,
                                 std::vector<uint8_t>(1)),
                    Catch::Contains("longer than 4096 bytes"));
}

TEST_CASE("gguf corrupt: tensor offsets past the end or misaligned", "[gguf]") {
  const std::vector<uint8_t> good = test::small_writer().to_bytes();
  const TensorAt bbb = tensor_at(good, "tensor.bbb", 2);
  const uint64_t original = test::peek<uint64_t>(good, bbb.offset);
  for (uint64_t offset : {uint64_t{1} << 40, kMax - 31, original + 32}) {
    std::vector<uint8_t> bytes = good;
    patch<uint64_t>(bytes, bbb.offset, offset);
    check_error(bytes, bbb.offset,
                "tensor 'tensor.bbb' (102 bytes at data offset " + std::to_string(offset) +
                    ") runs past the end of the data section");
  }
  std::vector<uint8_t> bytes = good;
  patch<uint64_t>(bytes, bbb.offset, original + 1);
  check_error(bytes, bbb.offset,
              "tensor 'tensor.bbb' data offset " + std::to_string(original + 1) +
                  " is not a multiple of the alignment 32");
}

TEST_CASE("gguf corrupt: unknown value, element and tensor types", "[gguf]") {
  const std::vector<uint8_t> good = test::small_writer().to_bytes();
  std::vector<uint8_t> bytes = good;
  const KeyAt u32 = key_at(bytes, "a.u32");
  patch<uint32_t>(bytes, u32.type, 13);
  check_error(bytes, u32.type, "key 'a.u32' has unknown value type 13");

  bytes = good;
  const KeyAt arr = key_at(bytes, "a.arr");
  patch<uint32_t>(bytes, arr.value, 0x80000000u);
  check_error(bytes, arr.value, "array 'a.arr' has unknown element type 2147483648");

  bytes = good;
  const TensorAt aaa = tensor_at(bytes, "tensor.aaa", 2);
  patch<uint32_t>(bytes, aaa.type, 4);
  check_error(bytes, aaa.type, "tensor 'tensor.aaa' has unknown ggml type id 4");
  patch<uint32_t>(bytes, aaa.type, 0xFFFFFFFFu);
  check_error(bytes, aaa.type, "unknown ggml type id 4294967295");
}

TEST_CASE("gguf corrupt: duplicate keys, duplicate tensors, nested arrays", "[gguf]") {
  const std::vector<uint8_t> good = test::small_writer().to_bytes();
  std::vector<uint8_t> bytes = good;
  const KeyAt u32 = key_at(bytes, "a.u32");
  std::memcpy(bytes.data() + u32.key, "a.arr", 5);
  const KeyAt second = key_at(good, "a.arr");
  check_error(bytes, second.key - 8, "duplicate metadata key 'a.arr'");

  bytes = good;
  const TensorAt bbb = tensor_at(bytes, "tensor.bbb", 2);
  std::memcpy(bytes.data() + bbb.name, "tensor.aaa", 10);
  check_error(bytes, bbb.name - 8, "duplicate tensor name 'tensor.aaa'");

  bytes = good;
  const KeyAt arr = key_at(bytes, "a.arr");
  patch<uint32_t>(bytes, arr.value, static_cast<uint32_t>(GgufValueType::ARRAY));
  check_error(bytes, arr.value, "array 'a.arr' is an array of arrays");
}

TEST_CASE("gguf corrupt: bad tensor shapes", "[gguf]") {
  const std::vector<uint8_t> good = test::small_writer().to_bytes();
  const TensorAt aaa = tensor_at(good, "tensor.aaa", 2);
  const TensorAt bbb = tensor_at(good, "tensor.bbb", 2);

  std::vector<uint8_t> bytes = good;
  patch<uint64_t>(bytes, aaa.ne + 8, uint64_t{1} << 62);  // 4 * 2^62 elements
  check_error(bytes, aaa.ne, "its element or byte count overflows 64 bits");

  bytes = good;
  patch<uint64_t>(bytes, aaa.ne, uint64_t{1} << 63);
  check_error(bytes, aaa.ne, "dimension 0 is 9223372036854775808, more than ggml's int64 limit");

  bytes = good;
  patch<uint64_t>(bytes, bbb.ne, 33);
  check_error(bytes, bbb.ne, "ne[0] is not a multiple of the block size 32");

  for (uint32_t dims : {0u, 5u, 0xFFFFFFFFu}) {
    bytes = good;
    patch<uint32_t>(bytes, aaa.n_dims, dims);
    check_error(bytes, aaa.n_dims,
                "tensor 'tensor.aaa' has " + std::to_string(dims) + " dimensions, expected 1 to 4");
  }
}

TEST_CASE("gguf corrupt: bad bool and bad alignment values", "[gguf]") {
  std::vector<uint8_t> bytes = test::small_writer().to_bytes();
  const KeyAt flag = key_at(bytes, "a.flag");
  bytes[flag.value] = 2;
  check_error(bytes, flag.value, "bool value of 'a.flag' is 2, expected 0 or 1");

  GgufWriter w = test::small_writer();
  w.set_alignment(64);
  const std::vector<uint8_t> good = w.to_bytes();
  const KeyAt align = key_at(good, "general.alignment");
  for (uint32_t value : {0u, 48u, 3u}) {
    bytes = good;
    patch<uint32_t>(bytes, align.value, value);
    const std::string message = parse_error(bytes);
    CHECK(message == "model.gguf: key 'general.alignment': expected a power of two that fits in "
                     "u32, found " + std::to_string(value));
  }
  bytes = good;
  patch<uint32_t>(bytes, align.type, static_cast<uint32_t>(GgufValueType::F32));
  CHECK_THAT(parse_error(bytes),
             Catch::Contains("key 'general.alignment': expected an integer, found f32"));
  bytes = good;
  patch<uint32_t>(bytes, align.type, static_cast<uint32_t>(GgufValueType::I32));
  patch<int32_t>(bytes, align.value, -64);
  CHECK_THAT(parse_error(bytes), Catch::Contains("found -64"));
}

}  // namespace lanec
