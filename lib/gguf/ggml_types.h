// ggml tensor element formats: ids, block geometry and names, exactly as ggml
// defines them (ggml-common.h), and what lanec does with each. kGgmlTypes is
// the one list of formats: the quant codecs, the step graph's type names and
// lanec synth derive their lists, names and messages from it. Every size
// computation on a tensor goes through these traits so that a hostile shape is
// checked in one place.
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

// What lanec does with a format: a bit set of these.
namespace ggml_use {
constexpr uint8_t kNone = 0;
constexpr uint8_t kGraph = 1 << 0;     // the step graph names it (lib/graph)
constexpr uint8_t kRead = 1 << 1;      // lib/quant dequantizes it, so it loads as weights
constexpr uint8_t kQuantize = 1 << 2;  // lib/quant quantizes floats to it
constexpr uint8_t kSynth = 1 << 3;     // lanec synth writes matrices of it (lib/synth)
constexpr uint8_t kWeight = kGraph | kRead | kQuantize | kSynth;
}  // namespace ggml_use

struct GgmlTypeTraits {
  GgmlType type;
  const char* name;      // ggml's name: "q8_0", "bf16", "q4_K", ...
  uint32_t block_elems;  // elements per block (1 for plain types)
  uint32_t block_bytes;  // bytes per block
  uint8_t uses;          // ggml_use bits
  // llama.cpp's general.file_type (enum llama_ftype) of a file whose matrices
  // have this format; meaningful for kSynth formats only.
  uint32_t llama_file_type;
};

// lanec's weight formats first, in the order messages list them; then the
// graph-only types; then every other ggml id, by id. Block bytes follow the
// block structs of ggml-common.h.
inline constexpr GgmlTypeTraits kGgmlTypes[] = {
    {GgmlType::F32, "f32", 1, 4, ggml_use::kWeight, 0},
    {GgmlType::F16, "f16", 1, 2, ggml_use::kWeight, 1},
    {GgmlType::BF16, "bf16", 1, 2, ggml_use::kWeight, 32},
    {GgmlType::Q8_0, "q8_0", 32, 34, ggml_use::kWeight, 7},
    {GgmlType::Q4_0, "q4_0", 32, 18, ggml_use::kWeight, 2},
    {GgmlType::Q4_1, "q4_1", 32, 20, ggml_use::kWeight, 3},
    {GgmlType::Q5_0, "q5_0", 32, 22, ggml_use::kWeight, 8},
    {GgmlType::Q5_1, "q5_1", 32, 24, ggml_use::kWeight, 9},
    {GgmlType::Q4_K, "q4_K", 256, 144, ggml_use::kWeight, 15},  // file type Q4_K_M
    {GgmlType::Q5_K, "q5_K", 256, 176, ggml_use::kWeight, 17},  // file type Q5_K_M
    {GgmlType::Q6_K, "q6_K", 256, 210, ggml_use::kWeight, 18},
    {GgmlType::MXFP4, "mxfp4", 32, 17, ggml_use::kWeight, 38},
    // Named by the graph (ids, and block formats a GGUF commonly carries).
    {GgmlType::I32, "i32", 1, 4, ggml_use::kGraph, 0},
    {GgmlType::Q2_K, "q2_K", 256, 84, ggml_use::kGraph, 0},
    {GgmlType::Q3_K, "q3_K", 256, 110, ggml_use::kGraph, 0},
    // Known to the GGUF layer only.
    {GgmlType::Q8_1, "q8_1", 32, 36, ggml_use::kNone, 0},  // two f16 (d, s) + 32 int8
    {GgmlType::Q8_K, "q8_K", 256, 292, ggml_use::kNone, 0},
    {GgmlType::IQ2_XXS, "iq2_xxs", 256, 66, ggml_use::kNone, 0},
    {GgmlType::IQ2_XS, "iq2_xs", 256, 74, ggml_use::kNone, 0},
    {GgmlType::IQ3_XXS, "iq3_xxs", 256, 98, ggml_use::kNone, 0},
    {GgmlType::IQ1_S, "iq1_s", 256, 50, ggml_use::kNone, 0},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18, ggml_use::kNone, 0},
    {GgmlType::IQ3_S, "iq3_s", 256, 110, ggml_use::kNone, 0},
    {GgmlType::IQ2_S, "iq2_s", 256, 82, ggml_use::kNone, 0},
    {GgmlType::IQ4_XS, "iq4_xs", 256, 136, ggml_use::kNone, 0},
    {GgmlType::I8, "i8", 1, 1, ggml_use::kNone, 0},
    {GgmlType::I16, "i16", 1, 2, ggml_use::kNone, 0},
    {GgmlType::I64, "i64", 1, 8, ggml_use::kNone, 0},
    {GgmlType::F64, "f64", 1, 8, ggml_use::kNone, 0},
    {GgmlType::IQ1_M, "iq1_m", 256, 56, ggml_use::kNone, 0},
    {GgmlType::TQ1_0, "tq1_0", 256, 54, ggml_use::kNone, 0},
    {GgmlType::TQ2_0, "tq2_0", 256, 66, ggml_use::kNone, 0},
};

// Row of kGgmlTypes for a type, usable in constant expressions (so codecs can
// static_assert their block layouts against it); nullptr for an unlisted type.
constexpr const GgmlTypeTraits* ggml_find_traits(GgmlType type) {
  for (const GgmlTypeTraits& traits : kGgmlTypes) {
    if (traits.type == type) return &traits;
  }
  return nullptr;
}

// Traits of a known ggml type id; nullptr for an id ggml does not define.
const GgmlTypeTraits* ggml_type_traits(uint32_t id);
// Traits of a listed type; an internal assert otherwise.
const GgmlTypeTraits& ggml_traits(GgmlType type);
const char* ggml_type_name(GgmlType type);  // "unknown" for an unlisted type
// ggml's name in lower case ("q4_k" for "q4_K"): the spelling of the step
// graph and of lanec's own messages. "unknown" for an unlisted type.
const char* ggml_type_lower_name(GgmlType type);
// Accepts ggml's names, case-insensitively ("q8_0", "Q8_0", "bf16").
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// Whether the type's row of kGgmlTypes has all the ggml_use bits in `use`
// (false for an unlisted type).
bool ggml_type_has_use(GgmlType type, uint8_t use);
enum class GgmlSpelling { ggml, lower_case };
// Names of the types with all bits of `use`, in table order, joined by
// `separator`: "f32 f16 bf16 q8_0 ...".
std::string ggml_type_names_with(uint8_t use, const char* separator,
                                 GgmlSpelling spelling = GgmlSpelling::ggml);

// Bytes of one row of `elems` elements; nullopt when elems is not a multiple
// of the block size or the result overflows.
std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t elems);
// Bytes of a whole tensor with dims ne (ne[0] contiguous); nullopt on a bad
// row length or on overflow of the element count or byte count.
std::optional<uint64_t> ggml_tensor_bytes(GgmlType type, const std::vector<uint64_t>& ne);

// Formats lanec can dequantize (lib/quant) and so load as weights.
bool ggml_type_is_supported(GgmlType type);

}  // namespace lanec
