#include "lib/synth/random_rows.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "lib/common/error.h"
#include "lib/quant/codecs.h"

namespace lanec {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// A uniform draw on [-a, a] has std a / sqrt(3).
constexpr float kUniformStdToHalfWidth = 1.7320508f;
// Std of a uniform integer on [-127, 127] and of (q - 8) for q uniform on [0, 15].
constexpr float kInt8Std = 73.6f;
constexpr float kNibbleStd = 4.61f;

// Block geometry of the formats drawn directly, from the type table.
constexpr GgmlTypeTraits kQ8_0 = *ggml_find_traits(GgmlType::Q8_0);
constexpr GgmlTypeTraits kQ4_0 = *ggml_find_traits(GgmlType::Q4_0);

void fill_plain(GgmlType type, const ValueDraw& draw, RowRng& rng, uint8_t* dst, uint64_t n) {
  const float half = draw.sigma * kUniformStdToHalfWidth;
  for (uint64_t i = 0; i < n; ++i) {
    const float v = draw.center + rng.symmetric(half);
    if (type == GgmlType::F32) {
      std::memcpy(dst + 4 * i, &v, 4);
    } else {
      const uint16_t h = type == GgmlType::F16 ? f32_to_fp16(v) : f32_to_bf16(v);
      std::memcpy(dst + 2 * i, &h, 2);
    }
  }
}

// Block scale jitter keeps scales distinct, as real checkpoints have.
float block_scale(RowRng& rng, float sigma, float unit_std) {
  return sigma / unit_std * (0.75f + 0.5f * rng.uniform());
}

void fill_q8_0(const ValueDraw& draw, RowRng& rng, uint8_t* dst, uint64_t n) {
  for (uint64_t b = 0; b < n / kQ8_0.block_elems; ++b) {
    uint8_t* block = dst + kQ8_0.block_bytes * b;
    const uint16_t d = f32_to_fp16(block_scale(rng, draw.sigma, kInt8Std));
    std::memcpy(block, &d, 2);
    for (int i = 0; i < 32; i += 8) {
      uint64_t bits = rng.next();
      for (int j = 0; j < 8; ++j, bits >>= 8) {
        int8_t q = static_cast<int8_t>(static_cast<uint8_t>(bits & 0xff));
        if (q == -128) q = -127;
        block[2 + i + j] = static_cast<uint8_t>(q);
      }
    }
  }
}

void fill_q4_0(const ValueDraw& draw, RowRng& rng, uint8_t* dst, uint64_t n) {
  for (uint64_t b = 0; b < n / kQ4_0.block_elems; ++b) {
    uint8_t* block = dst + kQ4_0.block_bytes * b;
    const uint16_t d = f32_to_fp16(block_scale(rng, draw.sigma, kNibbleStd));
    std::memcpy(block, &d, 2);
    const uint64_t lo = rng.next(), hi = rng.next();
    std::memcpy(block + 2, &lo, 8);
    std::memcpy(block + 10, &hi, 8);
  }
}

// Other formats: draw floats, then quantize with the reference codec.
void fill_by_quantizing(GgmlType type, const ValueDraw& draw, RowRng& rng, uint8_t* dst,
                        uint64_t n) {
  std::vector<float> values(n);
  fill_plain(GgmlType::F32, draw, rng, reinterpret_cast<uint8_t*>(values.data()), n);
  quantize_row(type, values.data(), dst, n);
}

}  // namespace

RowRng::RowRng(uint64_t seed, uint64_t stream, uint64_t row) {
  uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL) ^ (row * 0x8cb92ba72f3d8dd7ULL);
  for (auto& s : s_) s = splitmix64(x);
}

uint64_t RowRng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

float RowRng::uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

bool synth_can_write(GgmlType type) { return ggml_type_has_use(type, ggml_use::kSynth); }

void fill_random_row(GgmlType type, const ValueDraw& draw, RowRng& rng, uint8_t* dst, uint64_t n) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
      fill_plain(type, draw, rng, dst, n);
      return;
    case GgmlType::Q8_0:
      LANEC_ASSERT(draw.center == 0.0f, "q8_0 rows are drawn around zero");
      fill_q8_0(draw, rng, dst, n);
      return;
    case GgmlType::Q4_0:
      LANEC_ASSERT(draw.center == 0.0f, "q4_0 rows are drawn around zero");
      fill_q4_0(draw, rng, dst, n);
      return;
    default:
      fill_by_quantizing(type, draw, rng, dst, n);
  }
}

}  // namespace lanec
