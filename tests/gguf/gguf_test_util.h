// Helpers shared by the GGUF tests: a small writer-made file whose fields
// can be located by name, and little-endian patching of its bytes.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <unistd.h>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_writer.h"

namespace lanec::test {

inline size_t find_bytes(const std::vector<uint8_t>& hay, const std::string& needle) {
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    if (std::memcmp(hay.data() + i, needle.data(), needle.size()) == 0) return i;
  }
  FAIL("'" << needle << "' not found in the file bytes");
  return 0;
}

template <typename T>
void patch(std::vector<uint8_t>& bytes, size_t at, T value) {
  REQUIRE(at + sizeof(T) <= bytes.size());
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

template <typename T>
T peek(const std::vector<uint8_t>& bytes, size_t at) {
  REQUIRE(at + sizeof(T) <= bytes.size());
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

// A scratch path unique to this process, so parallel test runs do not collide.
inline std::string temp_path(const std::string& name) {
  return "/tmp/lanec_gguf_test_" + std::to_string(::getpid()) + "_" + name;
}

inline std::vector<uint8_t> pattern_bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 7);
  return out;
}

// A small valid file: a few keys and two tensors with distinctive names.
//   keys: general.architecture (string), a.u32 (u32), a.arr (u32 array), a.strs (string array)
//   tensors: tensor.aaa f32 [4, 2], tensor.bbb q8_0 [32, 3]
inline GgufWriter small_writer(uint32_t version = 3) {
  GgufWriter w(version);
  w.set("general.architecture", GgufValue::string("llama"));
  w.set("a.u32", GgufValue::u32(7));
  w.set("a.arr", GgufValue::u32_array({1, 2, 3}));
  w.set("a.strs", GgufValue::string_array({"x", "yy"}));
  w.set("a.flag", GgufValue::boolean(true));
  w.add_tensor("tensor.aaa", {4, 2}, GgmlType::F32, pattern_bytes(32, 1));
  w.add_tensor("tensor.bbb", {32, 3}, GgmlType::Q8_0, pattern_bytes(3 * 34, 2));
  return w;
}

inline GgufFile parse_bytes(const std::vector<uint8_t>& bytes, const std::string& label = "model.gguf") {
  return GgufFile::parse(bytes.data(), bytes.size(), label);
}

// Parses and returns the lanec::Error message; fails the test on success.
inline std::string parse_error(const std::vector<uint8_t>& bytes, size_t size) {
  try {
    GgufFile::parse(bytes.data(), size, "model.gguf");
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("parsing " << size << " bytes succeeded, expected a lanec::Error");
  return {};
}

inline std::string parse_error(const std::vector<uint8_t>& bytes) {
  return parse_error(bytes, bytes.size());
}

}  // namespace lanec::test
