#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lib/ref/npy.h"

using namespace lanec;

TEST_CASE("npy header: 64-byte aligned dict with the shape", "[ref]") {
  const std::string h = npy_header_f32({3, 151936});
  CHECK(h.size() % 64 == 0);
  CHECK(h.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(static_cast<size_t>(static_cast<uint8_t>(h[8]) | (static_cast<uint8_t>(h[9]) << 8)) == h.size() - 10);
  CHECK(h.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 151936), }") == 10);
  CHECK(h.back() == '\n');
  CHECK(npy_header_f32({5}).find("'shape': (5,)") != std::string::npos);
}

TEST_CASE("npy writer streams rows and writes the final row count", "[ref]") {
  const std::string path = "lanec_npy_test.npy";
  {
    NpyF32Writer w(path, 2);
    w.append_row({1.0f, 2.0f});
    w.append_row({3.0f, -4.5f});
    w.finish();
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  const std::string bytes = all.str();
  const std::string header = npy_header_f32({2, 2});
  REQUIRE(bytes.size() == header.size() + 16);
  CHECK(bytes.substr(0, header.size()) == header);
  float values[4];
  std::memcpy(values, bytes.data() + header.size(), 16);
  CHECK(values[3] == -4.5f);
  std::remove(path.c_str());
}
