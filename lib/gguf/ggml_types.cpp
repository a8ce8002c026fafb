// ggml type traits: lookups over kGgmlTypes (ggml_types.h), the names and
// capability lists derived from it, and the overflow-checked size helpers every
// tensor size computation goes through.
#include "lib/gguf/ggml_types.h"

#include <array>
#include <cctype>
#include <limits>

#include "lib/common/error.h"

namespace lanec {
namespace {

constexpr size_t kTypeCount = sizeof(kGgmlTypes) / sizeof(kGgmlTypes[0]);

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Lower-case names, index for index with kGgmlTypes; built once, never freed,
// so the pointers ggml_type_lower_name hands out stay valid.
const std::array<std::string, kTypeCount>& lower_names() {
  static const std::array<std::string, kTypeCount> names = [] {
    std::array<std::string, kTypeCount> out;
    for (size_t i = 0; i < kTypeCount; ++i) {
      for (const char* c = kGgmlTypes[i].name; *c != '\0'; ++c) out[i] += lower(*c);
    }
    return out;
  }();
  return names;
}

}  // namespace

const GgmlTypeTraits* ggml_type_traits(uint32_t id) {
  return ggml_find_traits(static_cast<GgmlType>(id));  // the enum's underlying type is uint32_t
}

const GgmlTypeTraits& ggml_traits(GgmlType type) {
  const GgmlTypeTraits* traits = ggml_find_traits(type);
  LANEC_ASSERT(traits != nullptr,
               "ggml type id " + std::to_string(static_cast<uint32_t>(type)) + " has no traits");
  return *traits;
}

const char* ggml_type_name(GgmlType type) {
  const GgmlTypeTraits* traits = ggml_find_traits(type);
  return traits != nullptr ? traits->name : "unknown";
}

const char* ggml_type_lower_name(GgmlType type) {
  const GgmlTypeTraits* traits = ggml_find_traits(type);
  if (traits == nullptr) return "unknown";
  return lower_names()[static_cast<size_t>(traits - kGgmlTypes)].c_str();
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const GgmlTypeTraits& traits : kGgmlTypes) {
    if (equal_ignoring_case(traits.name, name)) return traits.type;
  }
  return std::nullopt;
}

bool ggml_type_has_use(GgmlType type, uint8_t use) {
  const GgmlTypeTraits* traits = ggml_find_traits(type);
  return traits != nullptr && (traits->uses & use) == use;
}

std::string ggml_type_names_with(uint8_t use, const char* separator, GgmlSpelling spelling) {
  std::string out;
  for (const GgmlTypeTraits& traits : kGgmlTypes) {
    if ((traits.uses & use) != use) continue;
    if (!out.empty()) out += separator;
    out += spelling == GgmlSpelling::ggml ? traits.name : ggml_type_lower_name(traits.type);
  }
  return out;
}

std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t elems) {
  const GgmlTypeTraits* traits = ggml_find_traits(type);
  if (traits == nullptr) return std::nullopt;
  if (elems % traits->block_elems != 0) return std::nullopt;
  const uint64_t blocks = elems / traits->block_elems;
  if (blocks > std::numeric_limits<uint64_t>::max() / traits->block_bytes) return std::nullopt;
  return blocks * traits->block_bytes;
}

std::optional<uint64_t> ggml_tensor_bytes(GgmlType type, const std::vector<uint64_t>& ne) {
  if (ne.empty()) return std::nullopt;
  // ggml counts elements in int64_t, so a count past INT64_MAX is an overflow
  // too. Zero dims are skipped in this check so that a shape like
  // [0, 2^62, 2^62] is still rejected: its row count would overflow.
  constexpr uint64_t kMaxElements = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t nonzero_product = 1;
  for (uint64_t n : ne) {
    if (n == 0) continue;
    if (nonzero_product > kMaxElements / n) return std::nullopt;
    nonzero_product *= n;
  }
  const std::optional<uint64_t> row = ggml_row_bytes(type, ne[0]);
  if (!row) return std::nullopt;
  uint64_t total = *row;
  for (size_t i = 1; i < ne.size(); ++i) {
    if (ne[i] != 0 && total > std::numeric_limits<uint64_t>::max() / ne[i]) return std::nullopt;
    total *= ne[i];
  }
  return total;
}

bool ggml_type_is_supported(GgmlType type) { return ggml_type_has_use(type, ggml_use::kRead); }

}  // namespace lanec
