// Knob file reader and writer: see knobs.h for the contract and docs/knobs.md
// for the keys. Validation walks the YAML tree by hand (rather than
// node["key"].as<T>()) so that every error can point at the exact node.
#include "lib/knobs/knobs.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "lib/common/error.h"

namespace lanec {
namespace {

constexpr int kMaxSms = 1024;
// Largest shared memory an SM of any sm_8x/sm_9x part has (228 KiB on
// sm_90); a block can opt into at most 1 KiB less, so this bound catches
// values that are surely wrong (bytes or MiB typed as KiB) without guessing
// at per-chip figures.
constexpr int kMaxSmemKib = 228;

const char* const kTopKeys[] = {"chip", "cache_precision", "recurrent_state", "activations"};
const char* const kChipKeys[] = {"name", "arch", "sms", "smem_kib_per_block"};

// "FILE:LINE:COLUMN" with 1-based numbers; just FILE where yaml-cpp has no mark.
std::string location(const std::string& label, const YAML::Mark& mark) {
  if (mark.is_null()) return label;
  return label + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

[[noreturn]] void fail(const std::string& label, const YAML::Mark& mark, const std::string& key,
                       const std::string& what, const std::string& expected,
                       const std::string& got) {
  std::string message = location(label, mark) + ": knob '" + key + "': " + what;
  if (!expected.empty()) message += "; expected " + expected;
  if (!got.empty()) message += ", got " + got;
  throw Error(message);
}

// How a node looks, for the "got ..." half of a message.
std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i ? separator : "") + words[i];
  return out;
}

template <size_t N>
std::string one_of(const char* const (&words)[N]) {
  return "one of " + join(std::vector<std::string>(words, words + N), ", ");
}

// A mapping's pairs by key, after rejecting non-scalar, duplicate and
// unknown keys and reporting the first missing one (keys in `allowed` order).
struct Field {
  YAML::Node value;
  YAML::Mark key_mark;
};

template <size_t N>
std::vector<Field> read_mapping(const std::string& label, const YAML::Node& map,
                                const std::string& prefix, const char* const (&allowed)[N]) {
  std::vector<Field> fields(N);
  std::vector<bool> seen(N, false);
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      fail(label, key.Mark(), prefix.empty() ? "(top level)" : prefix,
           "a key must be a plain name", one_of(allowed), describe(key));
    }
    const std::string name = key.Scalar();
    size_t index = N;
    for (size_t i = 0; i < N; ++i) {
      if (name == allowed[i]) index = i;
    }
    const std::string full = prefix.empty() ? name : prefix + "." + name;
    if (index == N) fail(label, key.Mark(), full, "unknown key", one_of(allowed), "");
    if (seen[index]) fail(label, key.Mark(), full, "key given twice", "it once", "");
    seen[index] = true;
    fields[index] = Field{it->second, key.Mark()};
  }
  for (size_t i = 0; i < N; ++i) {
    if (!seen[i]) {
      const std::string full = prefix.empty() ? allowed[i] : prefix + "." + allowed[i];
      fail(label, map.Mark(), full, "missing (every key is required)", "", "");
    }
  }
  return fields;
}

std::string read_word(const std::string& label, const Field& field, const std::string& key,
                      const std::string& expected) {
  if (!field.value.IsScalar() || field.value.Scalar().empty()) {
    const YAML::Mark mark = field.value.IsNull() ? field.key_mark : field.value.Mark();
    fail(label, mark, key, "wrong type", expected, describe(field.value));
  }
  return field.value.Scalar();
}

int read_int(const std::string& label, const Field& field, const std::string& key, int low,
             int high) {
  const std::string range = "an integer in " + std::to_string(low) + ".." + std::to_string(high);
  const std::string text = read_word(label, field, key, range);
  // A quoted scalar ("12") is a string in YAML, not a number.
  const bool quoted = field.value.Tag() == "!";
  size_t digits_from = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  bool numeric = !quoted && text.size() > digits_from;
  for (size_t i = digits_from; numeric && i < text.size(); ++i) {
    numeric = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
  }
  if (!numeric) fail(label, field.value.Mark(), key, "wrong type", range, describe(field.value));
  // More than 9 digits is out of range whatever the sign; stoll cannot overflow below that.
  const bool too_long = text.size() - digits_from > 9;
  const long long value = too_long ? (text[0] == '-' ? -1 : kMaxSms + 1LL) : std::stoll(text);
  if (value < low || value > high) {
    fail(label, field.value.Mark(), key, "out of range", range, describe(field.value));
  }
  return static_cast<int>(value);
}

template <typename Enum, size_t N>
Enum read_enum(const std::string& label, const Field& field, const std::string& key,
               const char* const (&names)[N], const Enum (&values)[N]) {
  const std::string word = read_word(label, field, key, one_of(names));
  for (size_t i = 0; i < N; ++i) {
    if (word == names[i]) return values[i];
  }
  fail(label, field.value.Mark(), key, "bad value", one_of(names), describe(field.value));
}

const char* const kCacheNames[] = {"f32", "f16"};
const CachePrecision kCacheValues[] = {CachePrecision::f32, CachePrecision::f16};
const char* const kStateNames[] = {"f32", "bf16"};
const StatePrecision kStateValues[] = {StatePrecision::f32, StatePrecision::bf16};
const char* const kActivationNames[] = {"dequant", "int8", "two-pass-int8"};
const ActivationNumerics kActivationValues[] = {
    ActivationNumerics::dequant, ActivationNumerics::int8, ActivationNumerics::two_pass_int8};

// sm_ followed by 2 or 3 digits and an optional 'a' (arch-specific features).
bool is_arch(const std::string& arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0) return false;
  size_t end = arch.size();
  if (arch[end - 1] == 'a') --end;
  const size_t digits = end - 3;
  if (digits < 2 || digits > 3 || arch[3] == '0') return false;
  for (size_t i = 3; i < end; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(arch[i]))) return false;
  }
  return true;
}

bool is_chip_name(const std::string& name) {
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return !name.empty();
}

Knobs::Chip read_chip(const std::string& label, const Field& field) {
  if (!field.value.IsMap()) {
    const YAML::Mark mark = field.value.IsNull() ? field.key_mark : field.value.Mark();
    fail(label, mark, "chip", "wrong type",
         "a mapping { name, arch, sms, smem_kib_per_block }", describe(field.value));
  }
  const std::vector<Field> fields = read_mapping(label, field.value, "chip", kChipKeys);
  Knobs::Chip chip;
  chip.name = read_word(label, fields[0], "chip.name", "a name of letters, digits, _ - .");
  if (!is_chip_name(chip.name)) {
    fail(label, fields[0].value.Mark(), "chip.name", "bad value",
         "a name of letters, digits, _ - .", describe(fields[0].value));
  }
  const std::string arch_form = "sm_NN or sm_NNa (e.g. sm_89, sm_90a)";
  chip.arch = read_word(label, fields[1], "chip.arch", arch_form);
  if (!is_arch(chip.arch)) {
    fail(label, fields[1].value.Mark(), "chip.arch", "bad value", arch_form,
         describe(fields[1].value));
  }
  chip.sms = read_int(label, fields[2], "chip.sms", 1, kMaxSms);
  chip.smem_kib_per_block = read_int(label, fields[3], "chip.smem_kib_per_block", 1, kMaxSmemKib);
  return chip;
}

YAML::Node load_document(const std::string& yaml_text, const std::string& label) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(yaml_text);
  } catch (const YAML::Exception& e) {
    throw Error(location(label, e.mark) + ": YAML syntax error: " + e.msg);
  }
  if (documents.empty() || documents[0].IsNull()) {
    throw Error(label + ":1:1: empty knob file; expected a mapping with keys " +
                join({kTopKeys[0], kTopKeys[1], kTopKeys[2], kTopKeys[3]}, ", "));
  }
  if (documents.size() > 1) {
    throw Error(location(label, documents[1].Mark()) +
                ": a knob file holds one YAML document; found a second one here");
  }
  if (!documents[0].IsMap()) {
    throw Error(location(label, documents[0].Mark()) +
                ": a knob file is a mapping of keys; got " + describe(documents[0]));
  }
  return documents[0];
}

}  // namespace

bool Knobs::Chip::operator==(const Chip& other) const {
  return name == other.name && arch == other.arch && sms == other.sms &&
         smem_kib_per_block == other.smem_kib_per_block;
}

bool Knobs::operator==(const Knobs& other) const {
  return chip == other.chip && cache_precision == other.cache_precision &&
         recurrent_state == other.recurrent_state && activations == other.activations;
}

int Knobs::arch_number() const {
  LANEC_ASSERT(is_arch(chip.arch), "knobs hold an unchecked arch '" + chip.arch + "'");
  const size_t end = chip.arch.back() == 'a' ? chip.arch.size() - 1 : chip.arch.size();
  return std::stoi(chip.arch.substr(3, end - 3));
}

const char* knob_name(CachePrecision value) { return kCacheNames[static_cast<int>(value)]; }
const char* knob_name(StatePrecision value) { return kStateNames[static_cast<int>(value)]; }
const char* knob_name(ActivationNumerics value) {
  return kActivationNames[static_cast<int>(value)];
}

Knobs parse_knobs(const std::string& yaml_text, const std::string& label) {
  const YAML::Node root = load_document(yaml_text, label);
  const std::vector<Field> fields = read_mapping(label, root, "", kTopKeys);
  Knobs knobs;
  knobs.chip = read_chip(label, fields[0]);
  knobs.cache_precision =
      read_enum(label, fields[1], "cache_precision", kCacheNames, kCacheValues);
  knobs.recurrent_state =
      read_enum(label, fields[2], "recurrent_state", kStateNames, kStateValues);
  knobs.activations =
      read_enum(label, fields[3], "activations", kActivationNames, kActivationValues);
  knobs.source = label;
  return knobs;
}

Knobs load_knobs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open knob file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path + ": cannot read knob file");
  return parse_knobs(text.str(), path);
}

std::string to_yaml(const Knobs& knobs) {
  std::ostringstream out;
  out << "chip: { name: " << knobs.chip.name << ", arch: " << knobs.chip.arch
      << ", sms: " << knobs.chip.sms << ", smem_kib_per_block: " << knobs.chip.smem_kib_per_block
      << " }\n"
      << "cache_precision: " << knob_name(knobs.cache_precision) << "\n"
      << "recurrent_state: " << knob_name(knobs.recurrent_state) << "\n"
      << "activations: " << knob_name(knobs.activations) << "\n";
  return out.str();
}

std::string knobs_summary(const Knobs& knobs) {
  std::ostringstream out;
  out << "chip=" << knobs.chip.name << " arch=" << knobs.chip.arch << " sms=" << knobs.chip.sms
      << " smem_kib_per_block=" << knobs.chip.smem_kib_per_block
      << " cache_precision=" << knob_name(knobs.cache_precision)
      << " recurrent_state=" << knob_name(knobs.recurrent_state)
      << " activations=" << knob_name(knobs.activations);
  return out.str();
}

}  // namespace lanec
