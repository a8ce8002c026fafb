// Byte-level facts of the GGUF layout that the reader (gguf_file.cpp) and the
// writer (gguf_writer.cpp) share: the magic, the default alignment and the
// dimension limit, alignment checks and rounding, and little-endian loads and
// appends. Header-only, so the emitted program's runtime build (which compiles
// gguf_file.cpp on the nvcc line) needs no extra source.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

// GGUF is little-endian; the loads and appends below copy host bytes as they
// are, which is right on little-endian hosts only.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "lanec's GGUF reader and writer assume a little-endian host"
#endif

namespace lanec::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kDefaultAlignment = 32;  // when general.alignment is absent
constexpr uint32_t kMaxDims = 4;            // dimensions of a tensor, at most

// A usable general.alignment: a power of two that fits in u32.
constexpr bool is_valid_alignment(uint64_t n) {
  return n != 0 && n <= std::numeric_limits<uint32_t>::max() && (n & (n - 1)) == 0;
}

// n rounded up to a multiple of `alignment` (> 0); the caller keeps n small
// enough that this does not overflow (offsets inside a file).
constexpr uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// The T stored little-endian at p (no alignment assumed); the caller has
// checked that sizeof(T) bytes are there.
template <typename T>
T load_le(const uint8_t* p) {
  static_assert(std::is_arithmetic_v<T>, "load_le reads numbers");
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// Appends `value` to out as sizeof(T) little-endian bytes.
template <typename T>
void append_le(std::vector<uint8_t>& out, T value) {
  static_assert(std::is_arithmetic_v<T>, "append_le writes numbers");
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

}  // namespace lanec::gguf
