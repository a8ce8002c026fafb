// Dispatch of dequantize_row / quantize_row to the per-format codecs, with the
// checks that make a bad call a user error rather than a crash: unsupported
// type, or a row length that is not a whole number of blocks. Names, block
// sizes and the list of supported formats come from kGgmlTypes; this file only
// binds each format to its functions (tests/quant checks that the two agree).
#include "lib/quant/codecs.h"

#include <string>

#include "lib/common/error.h"
#include "lib/quant/block_codecs.h"

namespace lanec {
namespace {

using DequantizeBlocks = void (*)(const uint8_t*, float*, uint64_t);
using QuantizeBlocks = void (*)(const float*, uint8_t*, uint64_t);

struct Codec {
  GgmlType type;
  DequantizeBlocks dequantize;  // takes a block count
  QuantizeBlocks quantize;      // nullptr: no quantizer
};

constexpr Codec kCodecs[] = {
    {GgmlType::F32, quant::dequantize_f32, quant::quantize_f32},
    {GgmlType::F16, quant::dequantize_f16, quant::quantize_f16},
    {GgmlType::BF16, quant::dequantize_bf16, quant::quantize_bf16},
    {GgmlType::Q8_0, quant::dequantize_q8_0, quant::quantize_q8_0},
    {GgmlType::Q4_0, quant::dequantize_q4_0, quant::quantize_q4_0},
    {GgmlType::Q4_1, quant::dequantize_q4_1, quant::quantize_q4_1},
    {GgmlType::Q5_0, quant::dequantize_q5_0, quant::quantize_q5_0},
    {GgmlType::Q5_1, quant::dequantize_q5_1, quant::quantize_q5_1},
    {GgmlType::Q4_K, quant::dequantize_q4_k, quant::quantize_q4_k},
    {GgmlType::Q5_K, quant::dequantize_q5_k, quant::quantize_q5_k},
    {GgmlType::Q6_K, quant::dequantize_q6_k, quant::quantize_q6_k},
    {GgmlType::MXFP4, quant::dequantize_mxfp4, quant::quantize_mxfp4},
};

const Codec* find_codec(GgmlType type) {
  for (const Codec& codec : kCodecs) {
    if (codec.type == type) return &codec;
  }
  return nullptr;
}

std::string type_label(GgmlType type) {
  return "ggml type id " + std::to_string(static_cast<uint32_t>(type));
}

// The codec of a row of n elements of `type` and the row's block count; a
// user error naming `what` when the type has no codec or n is not a whole
// number of blocks.
struct RowCodec {
  const Codec& codec;
  uint64_t blocks;
};

RowCodec codec_for_row(const char* what, GgmlType type, uint64_t n) {
  const Codec* codec = find_codec(type);
  if (codec == nullptr) {
    throw Error(std::string(what) + ": unsupported tensor type (" + type_label(type) +
                "); supported: " + ggml_type_names_with(ggml_use::kRead, " "));
  }
  const GgmlTypeTraits& traits = ggml_traits(type);
  if (n % traits.block_elems != 0) {
    throw Error(std::string(what) + ": a " + traits.name + " row of " + std::to_string(n) +
                " elements is not a whole number of blocks (expected a multiple of " +
                std::to_string(traits.block_elems) + ")");
  }
  return {*codec, n / traits.block_elems};
}

}  // namespace

bool can_dequantize(GgmlType type) { return find_codec(type) != nullptr; }

bool can_quantize(GgmlType type) {
  const Codec* codec = find_codec(type);
  return codec != nullptr && codec->quantize != nullptr;
}

void dequantize_row(GgmlType type, const uint8_t* src, float* dst, uint64_t n) {
  const RowCodec row = codec_for_row("dequantize_row", type, n);
  row.codec.dequantize(src, dst, row.blocks);
}

void quantize_row(GgmlType type, const float* src, uint8_t* dst, uint64_t n) {
  const RowCodec row = codec_for_row("quantize_row", type, n);
  if (row.codec.quantize == nullptr) {
    throw Error(std::string("quantize_row: no quantizer for ") + ggml_type_name(type));
  }
  row.codec.quantize(src, dst, row.blocks);
}

}  // namespace lanec
