// GGUF metadata values: type names, array constructors, equality (floats
// compared bit for bit, so a NaN written is a NaN read back equal), the
// integer view the reader and writer share, and the one-line summary
// `lanec info` prints.
#include "lib/gguf/gguf_value.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lanec {
namespace {

template <typename T>
GgufValue make_array(GgufValueType elem_type, const std::vector<T>& values,
                     GgufValue (*make)(T)) {
  GgufArray array;
  array.elem_type = elem_type;
  array.items.reserve(values.size());
  for (const T& v : values) array.items.push_back(make(v));
  return GgufValue::array(std::move(array));
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// The shortest %g rendering that reads back as the same value ("1e-06", not
// "9.99999997e-07").
std::string format_float(double v, bool is_f32) {
  char buffer[64];
  const int max_precision = is_f32 ? 9 : 17;
  for (int precision = 1; precision <= max_precision; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, v);
    const double back = std::strtod(buffer, nullptr);
    if (is_f32 ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
  }
  return buffer;
}

std::string quote_string(const std::string& s, size_t max_chars) {
  std::string out = "\"";
  size_t shown = 0;
  for (char c : s) {
    if (shown == max_chars) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
    ++shown;
  }
  out += '"';
  return out;
}

std::string scalar_summary(const GgufValue& value) {
  switch (value.type) {
    case GgufValueType::U8: return std::to_string(std::get<uint8_t>(value.data));
    case GgufValueType::I8: return std::to_string(std::get<int8_t>(value.data));
    case GgufValueType::U16: return std::to_string(std::get<uint16_t>(value.data));
    case GgufValueType::I16: return std::to_string(std::get<int16_t>(value.data));
    case GgufValueType::U32: return std::to_string(std::get<uint32_t>(value.data));
    case GgufValueType::I32: return std::to_string(std::get<int32_t>(value.data));
    case GgufValueType::U64: return std::to_string(std::get<uint64_t>(value.data));
    case GgufValueType::I64: return std::to_string(std::get<int64_t>(value.data));
    case GgufValueType::F32: return format_float(std::get<float>(value.data), true);
    case GgufValueType::F64: return format_float(std::get<double>(value.data), false);
    case GgufValueType::BOOL: return std::get<bool>(value.data) ? "true" : "false";
    case GgufValueType::STRING: return quote_string(std::get<std::string>(value.data), 80);
    case GgufValueType::ARRAY: return "array";
  }
  return "?";
}

}  // namespace

const char* gguf_value_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::U8: return "u8";
    case GgufValueType::I8: return "i8";
    case GgufValueType::U16: return "u16";
    case GgufValueType::I16: return "i16";
    case GgufValueType::U32: return "u32";
    case GgufValueType::I32: return "i32";
    case GgufValueType::F32: return "f32";
    case GgufValueType::BOOL: return "bool";
    case GgufValueType::STRING: return "string";
    case GgufValueType::ARRAY: return "array";
    case GgufValueType::U64: return "u64";
    case GgufValueType::I64: return "i64";
    case GgufValueType::F64: return "f64";
  }
  return "unknown";
}

bool gguf_value_type_is_valid(uint32_t id) { return id <= static_cast<uint32_t>(GgufValueType::F64); }

GgufValue GgufValue::string_array(const std::vector<std::string>& v) {
  return make_array<std::string>(GgufValueType::STRING, v, &GgufValue::string);
}
GgufValue GgufValue::f32_array(const std::vector<float>& v) {
  return make_array<float>(GgufValueType::F32, v, &GgufValue::f32);
}
GgufValue GgufValue::i32_array(const std::vector<int32_t>& v) {
  return make_array<int32_t>(GgufValueType::I32, v, &GgufValue::i32);
}
GgufValue GgufValue::u32_array(const std::vector<uint32_t>& v) {
  return make_array<uint32_t>(GgufValueType::U32, v, &GgufValue::u32);
}

bool GgufValue::operator==(const GgufValue& other) const {
  if (type != other.type || data.index() != other.data.index()) return false;
  if (const auto* f = std::get_if<float>(&data)) return same_bits(*f, std::get<float>(other.data));
  if (const auto* d = std::get_if<double>(&data)) return same_bits(*d, std::get<double>(other.data));
  return data == other.data;
}

std::optional<GgufInteger> gguf_integer_of(const GgufValue& value) {
  auto signed_value = [](int64_t x) {
    GgufInteger r;
    r.negative = x < 0;
    r.magnitude = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    return r;
  };
  switch (value.type) {
    case GgufValueType::U8: return GgufInteger{false, std::get<uint8_t>(value.data)};
    case GgufValueType::U16: return GgufInteger{false, std::get<uint16_t>(value.data)};
    case GgufValueType::U32: return GgufInteger{false, std::get<uint32_t>(value.data)};
    case GgufValueType::U64: return GgufInteger{false, std::get<uint64_t>(value.data)};
    case GgufValueType::I8: return signed_value(std::get<int8_t>(value.data));
    case GgufValueType::I16: return signed_value(std::get<int16_t>(value.data));
    case GgufValueType::I32: return signed_value(std::get<int32_t>(value.data));
    case GgufValueType::I64: return signed_value(std::get<int64_t>(value.data));
    default: return std::nullopt;
  }
}

std::string gguf_value_summary(const GgufValue& value, size_t max_items) {
  if (value.type != GgufValueType::ARRAY) return scalar_summary(value);
  const auto& array = std::get<GgufArray>(value.data);
  std::string out = std::to_string(array.items.size()) + " " +
                    gguf_value_type_name(array.elem_type) +
                    (array.items.size() == 1 ? "" : "s");
  if (array.items.empty() || max_items == 0) return out;
  out += ": [";
  for (size_t i = 0; i < array.items.size() && i < max_items; ++i) {
    if (i > 0) out += ", ";
    out += scalar_summary(array.items[i]);
  }
  if (array.items.size() > max_items) out += ", ...";
  out += "]";
  return out;
}

}  // namespace lanec
