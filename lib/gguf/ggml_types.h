// ggml tensor element formats: ids, block geometry and names, exactly as ggml
// defines them (ggml-common.h). Every size computation on a tensor goes
// through these traits so that a hostile shape is checked in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lanec {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct GgmlTypeTraits {
  GgmlType type;
  const char* name;      // ggml's lower-case name: "q8_0", "bf16", ...
  uint32_t block_elems;  // elements per block (1 for plain types)
  uint32_t block_bytes;  // bytes per block
};

// Traits of a known ggml type id; nullptr for an id ggml does not define.
const GgmlTypeTraits* ggml_type_traits(uint32_t id);
const GgmlTypeTraits& ggml_traits(GgmlType type);
const char* ggml_type_name(GgmlType type);
// Accepts ggml's names, case-insensitively ("q8_0", "Q8_0", "bf16").
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// Bytes of one row of `elems` elements; nullopt when elems is not a multiple
// of the block size or the result overflows.
std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t elems);
// Bytes of a whole tensor with dims ne (ne[0] contiguous); nullopt on a bad
// row length or on overflow of the element count or byte count.
std::optional<uint64_t> ggml_tensor_bytes(GgmlType type, const std::vector<uint64_t>& ne);

// Formats lanec can dequantize (lib/quant) and so load as weights.
bool ggml_type_is_supported(GgmlType type);

}  // namespace lanec
