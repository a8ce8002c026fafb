// A GGUF metadata value: one of the 13 GGUF value types, arrays included
// (arrays of arrays are rejected by the reader, as llama.cpp does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace lanec {

enum class GgufValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

const char* gguf_value_type_name(GgufValueType type);  // "u32", "string", "array", ...
bool gguf_value_type_is_valid(uint32_t id);

struct GgufValue;

struct GgufArray {
  GgufValueType elem_type = GgufValueType::U8;
  std::vector<GgufValue> items;  // every item has type elem_type
};

struct GgufValue {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float,
                               bool, std::string, GgufArray, uint64_t, int64_t, double>;
  GgufValueType type = GgufValueType::U8;
  Storage data;

  static GgufValue u8(uint8_t v) { return {GgufValueType::U8, v}; }
  static GgufValue i8(int8_t v) { return {GgufValueType::I8, v}; }
  static GgufValue u16(uint16_t v) { return {GgufValueType::U16, v}; }
  static GgufValue i16(int16_t v) { return {GgufValueType::I16, v}; }
  static GgufValue u32(uint32_t v) { return {GgufValueType::U32, v}; }
  static GgufValue i32(int32_t v) { return {GgufValueType::I32, v}; }
  static GgufValue f32(float v) { return {GgufValueType::F32, v}; }
  static GgufValue boolean(bool v) { return {GgufValueType::BOOL, v}; }
  static GgufValue string(std::string v) { return {GgufValueType::STRING, std::move(v)}; }
  static GgufValue u64(uint64_t v) { return {GgufValueType::U64, v}; }
  static GgufValue i64(int64_t v) { return {GgufValueType::I64, v}; }
  static GgufValue f64(double v) { return {GgufValueType::F64, v}; }
  static GgufValue array(GgufArray a) { return {GgufValueType::ARRAY, std::move(a)}; }
  static GgufValue string_array(const std::vector<std::string>& v);
  static GgufValue f32_array(const std::vector<float>& v);
  static GgufValue i32_array(const std::vector<int32_t>& v);
  static GgufValue u32_array(const std::vector<uint32_t>& v);

  bool operator==(const GgufValue& other) const;
  bool operator!=(const GgufValue& other) const { return !(*this == other); }
};

inline bool operator==(const GgufArray& a, const GgufArray& b) {
  return a.elem_type == b.elem_type && a.items == b.items;
}

// The value of any GGUF integer type, as a sign and a magnitude (so that u64
// and i64 values both fit).
struct GgufInteger {
  bool negative = false;
  uint64_t magnitude = 0;
};
// nullopt when the value is not of an integer type (floats, bools, strings and
// arrays are not integers).
std::optional<GgufInteger> gguf_integer_of(const GgufValue& value);

// Readable one-line rendering for `lanec info` ("151936 strings", "1e-06", ...).
std::string gguf_value_summary(const GgufValue& value, size_t max_items = 4);

}  // namespace lanec
