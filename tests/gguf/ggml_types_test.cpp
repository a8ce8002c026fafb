// ggml type traits: block geometry of known ids, name lookup, size overflow.
#include <catch2/catch.hpp>

#include <limits>

#include "lib/gguf/ggml_types.h"

namespace lanec {

TEST_CASE("ggml traits give ggml's block geometry", "[gguf]") {
  struct Expect {
    GgmlType type;
    uint32_t elems, bytes;
  };
  const Expect cases[] = {
      {GgmlType::F32, 1, 4},        {GgmlType::F16, 1, 2},        {GgmlType::BF16, 1, 2},
      {GgmlType::Q4_0, 32, 18},     {GgmlType::Q4_1, 32, 20},     {GgmlType::Q5_0, 32, 22},
      {GgmlType::Q5_1, 32, 24},     {GgmlType::Q8_0, 32, 34},     {GgmlType::Q8_1, 32, 36},
      {GgmlType::Q2_K, 256, 84},    {GgmlType::Q3_K, 256, 110},   {GgmlType::Q4_K, 256, 144},
      {GgmlType::Q5_K, 256, 176},   {GgmlType::Q6_K, 256, 210},   {GgmlType::Q8_K, 256, 292},
      {GgmlType::IQ2_XXS, 256, 66}, {GgmlType::IQ2_XS, 256, 74},  {GgmlType::IQ3_XXS, 256, 98},
      {GgmlType::IQ1_S, 256, 50},   {GgmlType::IQ4_NL, 32, 18},   {GgmlType::IQ3_S, 256, 110},
      {GgmlType::IQ2_S, 256, 82},   {GgmlType::IQ4_XS, 256, 136}, {GgmlType::I8, 1, 1},
      {GgmlType::I16, 1, 2},        {GgmlType::I32, 1, 4},        {GgmlType::I64, 1, 8},
      {GgmlType::F64, 1, 8},        {GgmlType::IQ1_M, 256, 56},   {GgmlType::TQ1_0, 256, 54},
      {GgmlType::TQ2_0, 256, 66},   {GgmlType::MXFP4, 32, 17},
  };
  for (const Expect& e : cases) {
    const GgmlTypeTraits* t = ggml_type_traits(static_cast<uint32_t>(e.type));
    REQUIRE(t != nullptr);
    CHECK(t->type == e.type);
    CHECK(t->block_elems == e.elems);
    CHECK(t->block_bytes == e.bytes);
    CHECK(ggml_type_from_name(t->name) == e.type);
  }
  for (uint32_t unknown : {4u, 5u, 31u, 32u, 33u, 36u, 38u, 40u, 1000u, 0xFFFFFFFFu}) {
    CHECK(ggml_type_traits(unknown) == nullptr);
  }
}

TEST_CASE("ggml type names round-trip case-insensitively", "[gguf]") {
  CHECK(std::string(ggml_type_name(GgmlType::Q8_0)) == "q8_0");
  CHECK(ggml_type_from_name("Q8_0") == GgmlType::Q8_0);
  CHECK(ggml_type_from_name("BF16") == GgmlType::BF16);
  CHECK(ggml_type_from_name("q4_k") == GgmlType::Q4_K);
  CHECK_FALSE(ggml_type_from_name("q9_0").has_value());
}

TEST_CASE("ggml sizes check block multiples and overflow", "[gguf]") {
  CHECK(ggml_row_bytes(GgmlType::Q8_0, 64) == 68u);
  CHECK_FALSE(ggml_row_bytes(GgmlType::Q8_0, 33).has_value());
  CHECK(ggml_row_bytes(GgmlType::Q4_K, 512) == 288u);
  CHECK(ggml_tensor_bytes(GgmlType::F32, {3, 5, 7}) == 420u);
  CHECK(ggml_tensor_bytes(GgmlType::MXFP4, {64, 2}) == 68u);
  CHECK(ggml_tensor_bytes(GgmlType::F16, {0, 9}) == 0u);
  const uint64_t big = uint64_t{1} << 62;
  CHECK_FALSE(ggml_tensor_bytes(GgmlType::F32, {4, big}).has_value());    // 2^64 elements
  CHECK_FALSE(ggml_tensor_bytes(GgmlType::F32, {1, big, 2}).has_value());  // 2^63 > INT64_MAX
  CHECK_FALSE(ggml_tensor_bytes(GgmlType::F64, {big}).has_value());       // 2^65 bytes
  CHECK_FALSE(ggml_tensor_bytes(GgmlType::F32, {}).has_value());
  CHECK_FALSE(ggml_tensor_bytes(GgmlType::F32, {0, big, big}).has_value());  // rows overflow
  CHECK(ggml_tensor_bytes(GgmlType::F32, {0, big}) == 0u);
}

TEST_CASE("ggml supported types are the ones lanec dequantizes", "[gguf]") {
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0,
                     GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q4_K,
                     GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::MXFP4}) {
    CHECK(ggml_type_is_supported(t));
  }
  for (GgmlType t : {GgmlType::Q8_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_NL,
                     GgmlType::I32, GgmlType::TQ1_0}) {
    CHECK_FALSE(ggml_type_is_supported(t));
  }
}

TEST_CASE("the ggml type table lists each id and name once", "[gguf]") {
  for (const GgmlTypeTraits& row : kGgmlTypes) {
    CAPTURE(row.name);
    CHECK(ggml_type_traits(static_cast<uint32_t>(row.type)) == &row);
    CHECK(ggml_find_traits(row.type) == &row);
    CHECK(ggml_type_from_name(row.name) == row.type);
    CHECK(ggml_type_from_name(ggml_type_lower_name(row.type)) == row.type);
  }
  CHECK(std::string(ggml_type_lower_name(GgmlType::Q4_K)) == "q4_k");
  CHECK(std::string(ggml_type_name(GgmlType::Q4_K)) == "q4_K");
  CHECK(std::string(ggml_type_lower_name(static_cast<GgmlType>(99))) == "unknown");
}

TEST_CASE("ggml capability lists come from the table in message order", "[gguf]") {
  CHECK(ggml_type_names_with(ggml_use::kRead, " ") ==
        "f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_K q5_K q6_K mxfp4");
  CHECK(ggml_type_names_with(ggml_use::kSynth, ", ", GgmlSpelling::lower_case) ==
        "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k, mxfp4");
  CHECK(ggml_type_names_with(ggml_use::kGraph, " ", GgmlSpelling::lower_case) ==
        "f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k mxfp4 i32 q2_k q3_k");
  CHECK(ggml_type_has_use(GgmlType::Q6_K, ggml_use::kRead | ggml_use::kSynth));
  CHECK_FALSE(ggml_type_has_use(GgmlType::Q2_K, ggml_use::kRead));
  CHECK(ggml_type_has_use(GgmlType::Q2_K, ggml_use::kGraph));
  CHECK_FALSE(ggml_type_has_use(static_cast<GgmlType>(99), ggml_use::kNone));
  // Only formats lanec reads are written by synth or quantized.
  for (const GgmlTypeTraits& row : kGgmlTypes) {
    CAPTURE(row.name);
    if (row.uses & (ggml_use::kSynth | ggml_use::kQuantize)) CHECK((row.uses & ggml_use::kRead) != 0);
  }
}

}  // namespace lanec
