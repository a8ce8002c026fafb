// The k-quants: 256-element super-blocks made of sub-blocks with their own
// 6- or 8-bit scales.
//
// Q4_K (144 B) { fp16 d; fp16 dmin; u8 scales[12]; u8 qs[128]; }
// Q5_K (176 B) { fp16 d; fp16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }
//   Eight sub-blocks of 32; x = d·sc[s]·q − dmin·m[s] (products formed as
//   (d·sc)·q − (dmin·m), in that order, as ggml does).
//   scales[12] packs eight 6-bit (sc, m) pairs: for s < 4, sc = scales[s] & 63
//   and m = scales[s+4] & 63; for s ≥ 4, sc = (scales[s+4] & 15) | (scales[s-4] >> 6) << 4
//   and m = (scales[s+4] >> 4) | (scales[s] >> 6) << 4 (ggml's get_scale_min_k4).
//   Sub-blocks 2p and 2p+1 share qs[32p .. 32p+31]: low nibbles then high nibbles.
//   Q5_K's fifth bit of element l of sub-block s is bit s of qh[l].
//
// Q6_K (210 B) { u8 ql[128]; u8 qh[64]; i8 scales[16]; fp16 d; }
//   Sixteen sub-blocks of 16; x = (d·scales[i/16])·(q − 32). Each half of 128
//   elements uses 64 bytes of ql and 32 of qh: element l (l < 32) of quarter k
//   takes its low nibble from ql[l + 32·(k&1)] (low nibble for k < 2, high for
//   k ≥ 2) and its top two bits from (qh[l] >> 2k) & 3.
//
// Quantizers are ggml's non-imatrix reference ones (quantize_row_q*_K_ref):
// Q4_K/Q5_K fit each sub-block with a weighted least-squares search over the
// scale (make_qkx2_quants), then quantize scales and mins to 6 bits; Q6_K fits
// each 16-element sub-block with make_qx_quants (weights x²) and the scales to
// int8. All arithmetic is single precision in ggml's operand order.
#include <cmath>
#include <cstring>

#include "lib/quant/block_codecs.h"
#include "lib/quant/codecs.h"

namespace lanec::quant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

void scale_min_k4(int s, const uint8_t* scales, uint8_t* sc, uint8_t* m) {
  if (s < 4) {
    *sc = static_cast<uint8_t>(scales[s] & 63);
    *m = static_cast<uint8_t>(scales[s + 4] & 63);
  } else {
    *sc = static_cast<uint8_t>((scales[s + 4] & 0x0F) | ((scales[s - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((scales[s + 4] >> 4) | ((scales[s] >> 6) << 4));
  }
}

// The scales and mins of sub-blocks 2*pair (the low nibbles of a 32-byte run
// of quants in Q4_K and Q5_K) and 2*pair + 1 (the high nibbles).
struct SubBlockPair {
  float d_lo, m_lo, d_hi, m_hi;
};
SubBlockPair sub_block_pair(int pair, float d, float dmin, const uint8_t* scales) {
  uint8_t sc = 0;
  uint8_t m = 0;
  SubBlockPair out{};
  scale_min_k4(2 * pair, scales, &sc, &m);
  out.d_lo = d * sc;
  out.m_lo = dmin * m;
  scale_min_k4(2 * pair + 1, scales, &sc, &m);
  out.d_hi = d * sc;
  out.m_hi = dmin * m;
  return out;
}

// Fits x ≈ scale·L − min with L in [0, nmax] minimizing Σ w·err²; tries the
// plain range fit first and then nstep+1 perturbed inverse scales, each refined
// by the closed-form weighted least-squares (scale, min). Returns scale and
// stores the (non-negative) min.
float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* the_min,
                    uint8_t* Laux, float rmin, float rdelta, int nstep) {
  float min = x[0];
  float max = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::memset(L, 0, static_cast<size_t>(n));
    *the_min = -min;
    return 0.f;
  }
  const float fnmax = static_cast<float>(nmax);
  float iscale = fnmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax));
    const float diff = scale * L[i] + min - x[i];
    best_error += w[i] * (diff * diff);
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + fnmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (!(D > 0)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0) {
      this_min = 0;
      this_scale = sum_xl / sum_l2;
    }
    float cur_error = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = this_scale * Laux[i] + this_min - x[i];
      cur_error += w[i] * (diff * diff);
    }
    if (cur_error < best_error) {
      std::memcpy(L, Laux, static_cast<size_t>(n));
      best_error = cur_error;
      scale = this_scale;
      min = this_min;
    }
  }
  *the_min = -min;
  return scale;
}

// Fits x ≈ scale·(L − nmax) with L − nmax in [−nmax, nmax−1], weights x²,
// trying 19 inverse scales around −nmax/max (ggml's make_qx_quants, rmse_type 1).
float fit_symmetric_scale(int n, int nmax, const float* x, uint8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.f;
  }
  const float fnmax = static_cast<float>(nmax);
  float iscale = -fnmax / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<uint8_t>(l + nmax);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(fnmax + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      const float fl = static_cast<float>(l);
      sumlx += w * x[i] * fl;
      suml2 += w * fl * fl;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * x[i]);
        L[i] = static_cast<uint8_t>(nmax + clamp_int(l, -nmax, nmax - 1));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Shared by Q4_K and Q5_K: fits the eight sub-blocks, writes d, dmin and the
// packed 6-bit scales into `block`, and leaves the final codes in L.
void quantize_k_scales_and_codes(const float* x, uint8_t* block, uint8_t* L, int nmax, float rmin,
                                 int nstep) {
  float mins[8];
  float scales[8];
  float weights[32];
  uint8_t Laux[32];
  float max_scale = 0;
  float max_min = 0;
  for (int s = 0; s < 8; ++s) {
    const float* xs = x + 32 * s;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[s] = fit_scale_min(32, nmax, xs, weights, L + 32 * s, &mins[s], Laux, rmin, 0.1f, nstep);
    if (scales[s] > max_scale) max_scale = scales[s];
    if (mins[s] > max_min) max_min = mins[s];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t* packed = block + 4;
  for (int s = 0; s < 8; ++s) {
    // ggml stores nearest_int into a uint8_t before capping at 63.
    auto ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[s]));
    auto lm = static_cast<uint8_t>(nearest_int(inv_min * mins[s]));
    if (ls > 63) ls = 63;
    if (lm > 63) lm = 63;
    if (s < 4) {
      packed[s] = ls;
      packed[s + 4] = lm;
    } else {
      packed[s + 4] = static_cast<uint8_t>((ls & 0x0F) | ((lm & 0x0F) << 4));
      packed[s - 4] = static_cast<uint8_t>(packed[s - 4] | ((ls >> 4) << 6));
      packed[s] = static_cast<uint8_t>(packed[s] | ((lm >> 4) << 6));
    }
  }
  store_u16(block, f32_to_fp16(max_scale / 63.f));
  store_u16(block + 2, f32_to_fp16(max_min / 63.f));
  const float d_all = fp16_to_f32(load_u16(block));
  const float dmin_all = fp16_to_f32(load_u16(block + 2));
  for (int s = 0; s < 8; ++s) {
    uint8_t sc = 0;
    uint8_t m = 0;
    scale_min_k4(s, packed, &sc, &m);
    const float d = d_all * sc;
    if (d == 0) continue;  // keep the codes of the sub-block fit
    const float dm = dmin_all * m;
    for (int i = 0; i < 32; ++i) {
      L[32 * s + i] = static_cast<uint8_t>(clamp_int(nearest_int((x[32 * s + i] + dm) / d), 0, nmax));
    }
  }
}

}  // namespace

void dequantize_q4_k(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ4_KBytes) {
    const float d = fp16_to_f32(load_u16(src));
    const float dmin = fp16_to_f32(load_u16(src + 2));
    const uint8_t* scales = src + 4;
    const uint8_t* qs = src + 16;
    for (int pair = 0; pair < 4; ++pair, qs += 32) {
      const SubBlockPair sb = sub_block_pair(pair, d, dmin, scales);
      for (int l = 0; l < 32; ++l) *dst++ = sb.d_lo * static_cast<float>(qs[l] & 0x0F) - sb.m_lo;
      for (int l = 0; l < 32; ++l) *dst++ = sb.d_hi * static_cast<float>(qs[l] >> 4) - sb.m_hi;
    }
  }
}

void dequantize_q5_k(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ5_KBytes) {
    const float d = fp16_to_f32(load_u16(src));
    const float dmin = fp16_to_f32(load_u16(src + 2));
    const uint8_t* scales = src + 4;
    const uint8_t* qh = src + 16;
    const uint8_t* qs = src + 48;
    for (int pair = 0; pair < 4; ++pair, qs += 32) {
      const SubBlockPair sb = sub_block_pair(pair, d, dmin, scales);
      const int bit_lo = 2 * pair;
      const int bit_hi = 2 * pair + 1;
      for (int l = 0; l < 32; ++l) {
        const int q = (qs[l] & 0x0F) | (((qh[l] >> bit_lo) & 1) << 4);
        *dst++ = sb.d_lo * static_cast<float>(q) - sb.m_lo;
      }
      for (int l = 0; l < 32; ++l) {
        const int q = (qs[l] >> 4) | (((qh[l] >> bit_hi) & 1) << 4);
        *dst++ = sb.d_hi * static_cast<float>(q) - sb.m_hi;
      }
    }
  }
}

void dequantize_q6_k(const uint8_t* src, float* dst, uint64_t blocks) {
  for (uint64_t b = 0; b < blocks; ++b, src += kQ6_KBytes) {
    const uint8_t* ql = src;
    const uint8_t* qh = src + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(src + 192);
    const float d = fp16_to_f32(load_u16(src + 208));
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, dst += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        dst[l] = d * sc[is] * static_cast<float>(q1);
        dst[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
        dst[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
        dst[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
      }
    }
  }
}

void quantize_q4_k(const float* src, uint8_t* dst, uint64_t blocks) {
  uint8_t L[kQkK];
  for (uint64_t b = 0; b < blocks; ++b, src += kQkK, dst += kQ4_KBytes) {
    std::memset(dst, 0, kQ4_KBytes);
    quantize_k_scales_and_codes(src, dst, L, 15, -1.f, 20);
    uint8_t* qs = dst + 16;
    for (int j = 0; j < 256; j += 64, qs += 32) {
      for (int l = 0; l < 32; ++l) qs[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

void quantize_q5_k(const float* src, uint8_t* dst, uint64_t blocks) {
  uint8_t L[kQkK];
  for (uint64_t b = 0; b < blocks; ++b, src += kQkK, dst += kQ5_KBytes) {
    std::memset(dst, 0, kQ5_KBytes);
    quantize_k_scales_and_codes(src, dst, L, 31, -0.5f, 15);
    uint8_t* qh = dst + 16;
    uint8_t* qs = dst + 48;
    for (int pair = 0; pair < 4; ++pair, qs += 32) {
      for (int l = 0; l < 32; ++l) {
        const int lo = L[64 * pair + l];
        const int hi = L[64 * pair + l + 32];
        qh[l] = static_cast<uint8_t>(qh[l] | ((lo >> 4) << (2 * pair)) | ((hi >> 4) << (2 * pair + 1)));
        qs[l] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
      }
    }
  }
}

void quantize_q6_k(const float* src, uint8_t* dst, uint64_t blocks) {
  uint8_t L[kQkK];
  float scales[16];
  for (uint64_t b = 0; b < blocks; ++b, src += kQkK, dst += kQ6_KBytes) {
    std::memset(dst, 0, kQ6_KBytes);
    float max_scale = 0;
    float max_abs_scale = 0;
    for (int s = 0; s < 16; ++s) {
      scales[s] = fit_symmetric_scale(16, 32, src + 16 * s, L + 16 * s);
      const float abs_scale = std::fabs(scales[s]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[s];
      }
    }
    if (max_abs_scale < kGroupMaxEps) continue;  // an all-zero block (d = 0)
    const float iscale = -128.f / max_scale;
    store_u16(dst + 208, f32_to_fp16(1 / iscale));
    int8_t* block_scales = reinterpret_cast<int8_t*>(dst + 192);
    for (int s = 0; s < 16; ++s) {
      const int q = nearest_int(iscale * scales[s]);
      block_scales[s] = static_cast<int8_t>(q < 127 ? q : 127);
    }
    const float d_all = fp16_to_f32(load_u16(dst + 208));
    for (int s = 0; s < 16; ++s) {
      const float d = d_all * block_scales[s];
      if (d == 0) continue;
      for (int i = 0; i < 16; ++i) {
        const int l = clamp_int(nearest_int(src[16 * s + i] / d), -32, 31);
        L[16 * s + i] = static_cast<uint8_t>(l + 32);
      }
    }
    uint8_t* ql = dst;
    uint8_t* qh = dst + 128;
    for (int j = 0; j < 256; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t* c = L + j + l;
        ql[l] = static_cast<uint8_t>((c[0] & 0x0F) | ((c[64] & 0x0F) << 4));
        ql[l + 32] = static_cast<uint8_t>((c[32] & 0x0F) | ((c[96] & 0x0F) << 4));
        qh[l] = static_cast<uint8_t>((c[0] >> 4) | ((c[32] >> 4) << 2) | ((c[64] >> 4) << 4) |
                                     ((c[96] >> 4) << 6));
      }
    }
  }
}

}  // namespace lanec::quant
