// Test helpers for tests/quant: reading the fixtures written by
// scripts/make_quant_fixtures.py and comparing float arrays bit for bit.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace lanec::quant_test {

inline std::vector<uint8_t> read_fixture(const std::string& name) {
  const std::string path = std::string(LANEC_TEST_DATA) + "/quant/" + name;
  std::ifstream in(path, std::ios::binary);
  INFO("fixture " << path);
  REQUIRE(in.good());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::vector<float> read_f32_fixture(const std::string& name) {
  const std::vector<uint8_t> bytes = read_fixture(name);
  REQUIRE(bytes.size() % sizeof(float) == 0);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Fails on the first element whose bits differ, naming it.
inline void require_bitwise_equal(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (bits_of(got[i]) != bits_of(want[i])) {
      FAIL("element " << i << ": got " << got[i] << " (0x" << std::hex << bits_of(got[i])
                      << ") want " << std::dec << want[i] << " (0x" << std::hex << bits_of(want[i])
                      << ")");
    }
  }
}

inline void require_bytes_equal(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                                uint64_t block_bytes) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      FAIL("byte " << i << " (block " << i / block_bytes << ", offset " << i % block_bytes
                   << "): got " << int(got[i]) << " want " << int(want[i]));
    }
  }
}

}  // namespace lanec::quant_test
