// ggml type traits: one table with the block geometry of every ggml type id
// lanec knows (facts from ggml-common.h), and the overflow-checked size
// helpers every tensor size computation goes through.
#include "lib/gguf/ggml_types.h"

#include <array>
#include <cctype>
#include <limits>

#include "lib/common/error.h"

namespace lanec {
namespace {

// Sorted by id. Block bytes follow the block structs of ggml-common.h.
constexpr std::array<GgmlTypeTraits, 32> kTraits = {{
    {GgmlType::F32, "f32", 1, 4},
    {GgmlType::F16, "f16", 1, 2},
    {GgmlType::Q4_0, "q4_0", 32, 18},
    {GgmlType::Q4_1, "q4_1", 32, 20},
    {GgmlType::Q5_0, "q5_0", 32, 22},
    {GgmlType::Q5_1, "q5_1", 32, 24},
    {GgmlType::Q8_0, "q8_0", 32, 34},
    {GgmlType::Q8_1, "q8_1", 32, 36},  // two f16 (d, s) + 32 int8, as ggml-common.h has it
    {GgmlType::Q2_K, "q2_K", 256, 84},
    {GgmlType::Q3_K, "q3_K", 256, 110},
    {GgmlType::Q4_K, "q4_K", 256, 144},
    {GgmlType::Q5_K, "q5_K", 256, 176},
    {GgmlType::Q6_K, "q6_K", 256, 210},
    {GgmlType::Q8_K, "q8_K", 256, 292},
    {GgmlType::IQ2_XXS, "iq2_xxs", 256, 66},
    {GgmlType::IQ2_XS, "iq2_xs", 256, 74},
    {GgmlType::IQ3_XXS, "iq3_xxs", 256, 98},
    {GgmlType::IQ1_S, "iq1_s", 256, 50},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18},
    {GgmlType::IQ3_S, "iq3_s", 256, 110},
    {GgmlType::IQ2_S, "iq2_s", 256, 82},
    {GgmlType::IQ4_XS, "iq4_xs", 256, 136},
    {GgmlType::I8, "i8", 1, 1},
    {GgmlType::I16, "i16", 1, 2},
    {GgmlType::I32, "i32", 1, 4},
    {GgmlType::I64, "i64", 1, 8},
    {GgmlType::F64, "f64", 1, 8},
    {GgmlType::IQ1_M, "iq1_m", 256, 56},
    {GgmlType::BF16, "bf16", 1, 2},
    {GgmlType::TQ1_0, "tq1_0", 256, 54},
    {GgmlType::TQ2_0, "tq2_0", 256, 66},
    {GgmlType::MXFP4, "mxfp4", 32, 17},
}};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

const GgmlTypeTraits* ggml_type_traits(uint32_t id) {
  for (const GgmlTypeTraits& traits : kTraits) {
    if (static_cast<uint32_t>(traits.type) == id) return &traits;
  }
  return nullptr;
}

const GgmlTypeTraits& ggml_traits(GgmlType type) {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(type));
  LANEC_ASSERT(traits != nullptr,
               "ggml type id " + std::to_string(static_cast<uint32_t>(type)) + " has no traits");
  return *traits;
}

const char* ggml_type_name(GgmlType type) {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(type));
  return traits != nullptr ? traits->name : "unknown";
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const GgmlTypeTraits& traits : kTraits) {
    if (equal_ignoring_case(traits.name, name)) return traits.type;
  }
  return std::nullopt;
}

std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t elems) {
  const GgmlTypeTraits* traits = ggml_type_traits(static_cast<uint32_t>(type));
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

bool ggml_type_is_supported(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::MXFP4:
      return true;
    default:
      return false;
  }
}

}  // namespace lanec
