// GGUF reader. Layout (little-endian): magic "GGUF", u32 version (2 or 3),
// u64 tensor count, u64 metadata count, the metadata key/values, the tensor
// infos, zero padding to the alignment, then the data section.
//
// Every read goes through Cursor, which checks the bytes left before it
// touches them; every count is checked against the bytes left (count times the
// smallest encoding of one item) before anything is reserved, so a hostile
// file is an Error naming the file, the byte offset and the problem, never a
// crash or a huge allocation.
#include "lib/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <limits>
#include <type_traits>

#include "lib/common/error.h"
#include "lib/gguf/gguf_bytes.h"

namespace lanec {

namespace {

std::string plural(uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Bytes one value of `type` needs at least (an array: its type and count).
uint64_t min_encoded_bytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::U8:
    case GgufValueType::I8:
    case GgufValueType::BOOL: return 1;
    case GgufValueType::U16:
    case GgufValueType::I16: return 2;
    case GgufValueType::U32:
    case GgufValueType::I32:
    case GgufValueType::F32: return 4;
    case GgufValueType::U64:
    case GgufValueType::I64:
    case GgufValueType::F64:
    case GgufValueType::STRING: return 8;
    case GgufValueType::ARRAY: return 12;
  }
  return 1;
}

std::string type_label(GgufValueType type) { return gguf_value_type_name(type); }

std::string found_type_label(const GgufValue& value) {
  if (value.type != GgufValueType::ARRAY) return type_label(value.type);
  return std::string("array of ") + gguf_value_type_name(std::get<GgufArray>(value.data).elem_type);
}

std::string integer_text(const GgufInteger& v) {
  return (v.negative ? "-" : "") + std::to_string(v.magnitude);
}

// Error-message parts are built only when an error is thrown: a vocabulary
// has hundreds of thousands of items, each read with a description.
template <typename What>
std::string describe(const What& what) {
  if constexpr (std::is_invocable_v<What>) {
    return what();
  } else {
    return std::string(what);
  }
}

bool is_integer_type(GgufValueType t) {
  return t == GgufValueType::U8 || t == GgufValueType::I8 || t == GgufValueType::U16 ||
         t == GgufValueType::I16 || t == GgufValueType::U32 || t == GgufValueType::I32 ||
         t == GgufValueType::U64 || t == GgufValueType::I64;
}

}  // namespace

// Reads little-endian fields from the file with bounds checks.
class GgufCursor {
 public:
  GgufCursor(const uint8_t* bytes, uint64_t size, const std::string& label)
      : bytes_(bytes), size_(size), label_(label) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  [[noreturn]] void fail_at(uint64_t offset, const std::string& what) const {
    throw Error(label_ + ": at byte " + std::to_string(offset) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  template <typename What>
  void need(uint64_t n, const What& what) const {
    if (n > left()) {
      fail("file ends inside " + describe(what) + ": it needs " + plural(n, "byte") + ", " +
           plural(left(), "byte") + " left");
    }
  }

  template <typename T, typename What>
  T read(const What& what) {
    need(sizeof(T), what);
    const T value = gguf::load_le<T>(bytes_ + pos_);
    pos_ += sizeof(T);
    return value;
  }

  template <typename What>
  std::string read_string(const What& what, uint64_t max_bytes) {
    const uint64_t at = pos_;
    const uint64_t length = read<uint64_t>([&] { return describe(what) + " length"; });
    if (length > left()) {
      fail_at(at, describe(what) + " length " + std::to_string(length) + " exceeds the " +
                      plural(left(), "byte") + " left in the file");
    }
    if (length > max_bytes) {
      fail_at(at, describe(what) + " length " + std::to_string(length) + " exceeds the limit of " +
                      plural(max_bytes, "byte"));
    }
    std::string s(reinterpret_cast<const char*>(bytes_ + pos_), static_cast<size_t>(length));
    pos_ += length;
    return s;
  }

  // Checks that `count` items of at least `min_bytes` each can fit in the rest.
  void check_count(uint64_t at, uint64_t count, uint64_t min_bytes, const std::string& what) const {
    if (count > left() / min_bytes) {
      fail_at(at, what + " " + std::to_string(count) + " (at least " + plural(min_bytes, "byte") +
                      " each) exceeds the " + plural(left(), "byte") + " left in the file");
    }
  }

 private:
  const uint8_t* bytes_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& label_;
};

class GgufParser {
 public:
  explicit GgufParser(GgufFile& file) : file_(file), in_(file.bytes_, file.size_, file.path_) {}

  void parse() {
    parse_header();
    parse_metadata();
    resolve_alignment();
    parse_tensor_infos();
    place_tensors();
  }

 private:
  void parse_header() {
    if (in_.left() < 4) {
      in_.fail("file is too short for a GGUF header (" + plural(in_.left(), "byte") +
               "; expected the magic \"GGUF\")");
    }
    const uint32_t magic = in_.read<uint32_t>("magic");
    if (magic != gguf::kMagic) {
      in_.fail_at(0, "not a GGUF file: expected the magic \"GGUF\", found " + printable_magic());
    }
    const uint64_t version_at = in_.pos();
    const uint32_t version = in_.read<uint32_t>("version");
    if ((version & 0xFFFFu) == 0 && version != 0) {
      in_.fail_at(version_at, "version field " + std::to_string(version) +
                                  " looks byte-swapped: the file was written with the other "
                                  "byte order (big-endian), which lanec does not read");
    }
    if (version != 2 && version != 3) {
      in_.fail_at(version_at, "unsupported GGUF version " + std::to_string(version) +
                                  " (lanec reads versions 2 and 3)");
    }
    file_.version_ = version;
    tensor_count_at_ = in_.pos();
    tensor_count_ = in_.read<uint64_t>("tensor count");
    kv_count_at_ = in_.pos();
    kv_count_ = in_.read<uint64_t>("metadata count");
  }

  std::string printable_magic() const {
    std::string out = "\"";
    for (int i = 0; i < 4; ++i) {
      const uint8_t c = file_.bytes_[i];
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        out += static_cast<char>(c);
      } else {
        static const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
    return out + "\"";
  }

  void parse_metadata() {
    // A key/value needs at least an 8-byte key length, a 4-byte type, 1 byte of value.
    in_.check_count(kv_count_at_, kv_count_, 13, "metadata count");
    file_.metadata_.reserve(static_cast<size_t>(kv_count_));
    for (uint64_t i = 0; i < kv_count_; ++i) {
      const uint64_t key_at = in_.pos();
      std::string key = in_.read_string([&] { return "metadata key #" + std::to_string(i); },
                                        std::numeric_limits<uint64_t>::max());
      if (file_.metadata_index_.count(key) != 0) {
        in_.fail_at(key_at, "duplicate metadata key '" + key + "'");
      }
      const uint64_t type_at = in_.pos();
      const uint32_t type_id = in_.read<uint32_t>("type of key '" + key + "'");
      if (!gguf_value_type_is_valid(type_id)) {
        in_.fail_at(type_at, "key '" + key + "' has unknown value type " +
                                 std::to_string(type_id) + " (valid: 0..12)");
      }
      GgufValue value = read_value(static_cast<GgufValueType>(type_id), key, kNoIndex);
      file_.metadata_index_.emplace(key, file_.metadata_.size());
      file_.metadata_.emplace_back(std::move(key), std::move(value));
    }
  }

  static constexpr uint64_t kNoIndex = std::numeric_limits<uint64_t>::max();

  // Reads one value of `key` (item `index` of its array, or kNoIndex).
  GgufValue read_value(GgufValueType type, const std::string& key, uint64_t index) {
    const auto what = [&] {
      return "value of '" + key + "'" +
             (index == kNoIndex ? std::string() : "[" + std::to_string(index) + "]");
    };
    switch (type) {
      case GgufValueType::U8: return GgufValue::u8(in_.read<uint8_t>(what));
      case GgufValueType::I8: return GgufValue::i8(in_.read<int8_t>(what));
      case GgufValueType::U16: return GgufValue::u16(in_.read<uint16_t>(what));
      case GgufValueType::I16: return GgufValue::i16(in_.read<int16_t>(what));
      case GgufValueType::U32: return GgufValue::u32(in_.read<uint32_t>(what));
      case GgufValueType::I32: return GgufValue::i32(in_.read<int32_t>(what));
      case GgufValueType::F32: return GgufValue::f32(in_.read<float>(what));
      case GgufValueType::U64: return GgufValue::u64(in_.read<uint64_t>(what));
      case GgufValueType::I64: return GgufValue::i64(in_.read<int64_t>(what));
      case GgufValueType::F64: return GgufValue::f64(in_.read<double>(what));
      case GgufValueType::BOOL: {
        const uint64_t at = in_.pos();
        const uint8_t b = in_.read<uint8_t>(what);
        if (b > 1) {
 in_.fail_at(at, "bool " + what() + " is " + std::to_string(b) + ", expected 0 or 1");
        }
        return GgufValue::boolean(b == 1);
      }
      case GgufValueType::STRING:
        return GgufValue::string(in_.read_string([&] { return "string " + what(); },
                                                 std::numeric_limits<uint64_t>::max()));
      case GgufValueType::ARRAY: return read_array(key);
    }
    in_.fail("internal: unhandled value type");
  }

  GgufValue read_array(const std::string& key) {
    const uint64_t type_at = in_.pos();
    const uint32_t elem_id = in_.read<uint32_t>("element type of array '" + key + "'");
    if (!gguf_value_type_is_valid(elem_id)) {
      in_.fail_at(type_at, "array '" + key + "' has unknown element type " +
                               std::to_string(elem_id) + " (valid: 0..12)");
    }
    const auto elem_type = static_cast<GgufValueType>(elem_id);
    if (elem_type == GgufValueType::ARRAY) {
      in_.fail_at(type_at, "array '" + key + "' is an array of arrays, which GGUF readers reject");
    }
    const uint64_t count_at = in_.pos();
    const uint64_t count = in_.read<uint64_t>("count of array '" + key + "'");
    in_.check_count(count_at, count, min_encoded_bytes(elem_type),
                    "array '" + key + "' of " + type_label(elem_type) + " count");
    GgufArray array;
    array.elem_type = elem_type;
    array.items.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      array.items.push_back(read_value(elem_type, key, i));
    }
    return GgufValue::array(std::move(array));
  }

  void resolve_alignment() {
    const GgufValue* value = file_.find("general.alignment");
    if (value == nullptr) {
      file_.alignment_ = gguf::kDefaultAlignment;
      return;
    }
    const std::optional<GgufInteger> n = gguf_integer_of(*value);
    if (!n) {
      throw Error(file_.path_ + ": key 'general.alignment': expected an integer, found " +
                  found_type_label(*value));
    }
    if (n->negative || !gguf::is_valid_alignment(n->magnitude)) {
      throw Error(file_.path_ + ": key 'general.alignment': expected a power of two that fits "
                  "in u32, found " + integer_text(*n));
    }
    file_.alignment_ = static_cast<uint32_t>(n->magnitude);
  }

  void parse_tensor_infos() {
    // A tensor info needs at least: name length 8, n_dims 4, one dim 8, type 4, offset 8.
    in_.check_count(tensor_count_at_, tensor_count_, 32, "tensor count");
    file_.tensors_.reserve(static_cast<size_t>(tensor_count_));
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      GgufTensorInfo info;
      const uint64_t name_at = in_.pos();
      info.name = in_.read_string("name of tensor #" + std::to_string(i), kGgufMaxTensorNameBytes);
      if (file_.tensor_index_.count(info.name) != 0) {
        in_.fail_at(name_at, "duplicate tensor name '" + info.name + "'");
      }
      const std::string label = "tensor '" + info.name + "'";
      const uint64_t dims_at = in_.pos();
      const uint32_t n_dims = in_.read<uint32_t>("dimension count of " + label);
      if (n_dims == 0 || n_dims > gguf::kMaxDims) {
        in_.fail_at(dims_at, label + " has " + std::to_string(n_dims) +
                                 " dimensions, expected 1 to " + std::to_string(gguf::kMaxDims));
      }
      const uint64_t ne_at = in_.pos();
      for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t n = in_.read<uint64_t>("dimension " + std::to_string(d) + " of " + label);
        if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          in_.fail_at(in_.pos() - 8, label + " dimension " + std::to_string(d) + " is " +
                                         std::to_string(n) + ", more than ggml's int64 limit");
        }
        info.ne.push_back(n);
      }
      const uint64_t type_at = in_.pos();
      const uint32_t type_id = in_.read<uint32_t>("type of " + label);
      const GgmlTypeTraits* traits = ggml_type_traits(type_id);
      if (traits == nullptr) {
        in_.fail_at(type_at, label + " has unknown ggml type id " + std::to_string(type_id));
      }
      info.type = traits->type;
      const uint64_t offset_at = in_.pos();
      info.offset = in_.read<uint64_t>("data offset of " + label);
      const std::optional<uint64_t> bytes = ggml_tensor_bytes(info.type, info.ne);
      if (!bytes) {
        in_.fail_at(ne_at, label + " of type " + traits->name + " with shape " +
                               info.shape_string() + " has no valid byte size: " +
                               (info.ne[0] % traits->block_elems != 0
                                    ? "ne[0] is not a multiple of the block size " +
                                          std::to_string(traits->block_elems)
                                    : std::string("its element or byte count overflows 64 bits")));
      }
      info.n_bytes = *bytes;
      info.n_elements = 1;
      for (uint64_t n : info.ne) info.n_elements *= n;  // cannot overflow: checked above
      if (info.offset % file_.alignment_ != 0) {
        in_.fail_at(offset_at, label + " data offset " + std::to_string(info.offset) +
                                   " is not a multiple of the alignment " +
                                   std::to_string(file_.alignment_));
      }
      offset_positions_.push_back(offset_at);
      file_.tensor_index_.emplace(info.name, file_.tensors_.size());
      file_.tensors_.push_back(std::move(info));
    }
  }

  // The data section starts at the aligned end of the tensor infos. A file
  // without tensor bytes may end before that aligned start (llama.cpp's
  // vocabulary-only files do); the data section is then empty.
  void place_tensors() {
    const uint64_t end_of_infos = in_.pos();
    const uint64_t align = file_.alignment_;
    const uint64_t data_offset = gguf::align_up(end_of_infos, align);
    file_.data_offset_ = data_offset;
    const uint64_t data_size = data_offset < file_.size_ ? file_.size_ - data_offset : 0;
    const uint64_t data_start = std::min<uint64_t>(data_offset, file_.size_);
    for (size_t i = 0; i < file_.tensors_.size(); ++i) {
      GgufTensorInfo& info = file_.tensors_[i];
      if (info.offset > data_size || info.n_bytes > data_size - info.offset) {
        in_.fail_at(offset_positions_[i],
                    "tensor '" + info.name + "' (" + plural(info.n_bytes, "byte") +
                        " at data offset " + std::to_string(info.offset) +
                        ") runs past the end of the data section, which has " +
                        plural(data_size, "byte"));
      }
      info.data = file_.bytes_ + data_start + info.offset;
    }
  }

  GgufFile& file_;
  GgufCursor in_;
  uint64_t tensor_count_ = 0;
  uint64_t tensor_count_at_ = 0;
  uint64_t kv_count_ = 0;
  uint64_t kv_count_at_ = 0;
  std::vector<uint64_t> offset_positions_;
};

// ---- GgufTensorInfo ----

uint64_t GgufTensorInfo::rows() const {
  uint64_t rows = 1;
  for (size_t i = 1; i < ne.size(); ++i) rows *= ne[i];
  return rows;
}

uint64_t GgufTensorInfo::row_bytes() const {
  if (ne.empty()) return 0;
  return ggml_row_bytes(type, ne[0]).value_or(0);
}

std::string GgufTensorInfo::shape_string() const {
  std::string out = "[";
  for (size_t i = 0; i < ne.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ne[i]);
  }
  return out + "]";
}

// ---- GgufFile ----

struct GgufFile::Mapping {
  void* address = nullptr;
  size_t length = 0;
  ~Mapping() {
    if (address != nullptr) munmap(address, length);
  }
};

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  auto mapping = std::make_unique<Mapping>();
  mapping->length = static_cast<size_t>(st.st_size);
  if (mapping->length > 0) {
    void* address = mmap(nullptr, mapping->length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot map " + std::to_string(mapping->length) +
                  " bytes: " + std::strerror(err));
    }
    mapping->address = address;
  }
  ::close(fd);  // the mapping keeps the file alive
  static const uint8_t kEmpty = 0;
  const uint8_t* bytes =
      mapping->address != nullptr ? static_cast<const uint8_t*>(mapping->address) : &kEmpty;
  GgufFile file = parse(bytes, mapping->length, path);
  file.mapping_ = std::move(mapping);
  return file;
}

GgufFile GgufFile::parse(const uint8_t* bytes, size_t size, const std::string& label) {
  GgufFile file;
  file.path_ = label;
  file.bytes_ = bytes;
  file.size_ = size;
  GgufParser(file).parse();
  return file;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

namespace {

[[noreturn]] void fail_missing(const std::string& path, std::string_view key, const char* expected) {
  throw Error(path + ": missing key '" + std::string(key) + "' (expected " + expected + ")");
}

[[noreturn]] void fail_type(const std::string& path, std::string_view key, const char* expected,
                            const GgufValue& found) {
  throw Error(path + ": key '" + std::string(key) + "': expected " + expected + ", found " +
              found_type_label(found) + " (" + gguf_value_summary(found) + ")");
}

uint64_t uint_of(const std::string& path, std::string_view key, const GgufValue& value) {
  const std::optional<GgufInteger> n = gguf_integer_of(value);
  if (!n) fail_type(path, key, "an unsigned integer", value);
  if (n->negative) {
    throw Error(path + ": key '" + std::string(key) + "': expected an unsigned integer, found " +
                type_label(value.type) + " value " + integer_text(*n) + ", which is negative");
  }
  return n->magnitude;
}

int64_t int_of(const std::string& path, std::string_view key, const GgufValue& value) {
  const std::optional<GgufInteger> n = gguf_integer_of(value);
  if (!n) fail_type(path, key, "an integer", value);
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!n->negative && n->magnitude > limit) {
    throw Error(path + ": key '" + std::string(key) + "': expected an integer that fits in i64, "
                "found u64 value " + std::to_string(n->magnitude));
  }
  if (n->negative) return n->magnitude == limit + 1 ? std::numeric_limits<int64_t>::min()
                                                    : -static_cast<int64_t>(n->magnitude);
  return static_cast<int64_t>(n->magnitude);
}

double float_of(const std::string& path, std::string_view key, const GgufValue& value) {
  if (value.type == GgufValueType::F32) return std::get<float>(value.data);
  if (value.type == GgufValueType::F64) return std::get<double>(value.data);
  fail_type(path, key, "a float (f32 or f64)", value);
}

}  // namespace

uint64_t GgufFile::get_uint(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "an unsigned integer");
  return uint_of(path_, key, *v);
}

int64_t GgufFile::get_int(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "an integer");
  return int_of(path_, key, *v);
}

double GgufFile::get_float(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "a float");
  return float_of(path_, key, *v);
}

bool GgufFile::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "a bool");
  if (v->type != GgufValueType::BOOL) fail_type(path_, key, "a bool", *v);
  return std::get<bool>(v->data);
}

const std::string& GgufFile::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "a string");
  if (v->type != GgufValueType::STRING) fail_type(path_, key, "a string", *v);
  return std::get<std::string>(v->data);
}

const GgufArray& GgufFile::get_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "an array");
  if (v->type != GgufValueType::ARRAY) fail_type(path_, key, "an array", *v);
  return std::get<GgufArray>(v->data);
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "an array of string");
  if (v->type != GgufValueType::ARRAY ||
      std::get<GgufArray>(v->data).elem_type != GgufValueType::STRING) {
    fail_type(path_, key, "an array of string", *v);
  }
  std::vector<std::string> out;
  const GgufArray& array = std::get<GgufArray>(v->data);
  out.reserve(array.items.size());
  for (const GgufValue& item : array.items) out.push_back(std::get<std::string>(item.data));
  return out;
}

std::vector<float> GgufFile::get_float_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "an array of f32");
  if (v->type != GgufValueType::ARRAY) fail_type(path_, key, "an array of f32 or f64", *v);
  const GgufArray& array = std::get<GgufArray>(v->data);
  if (array.elem_type != GgufValueType::F32 && array.elem_type != GgufValueType::F64) {
    fail_type(path_, key, "an array of f32 or f64", *v);
  }
  std::vector<float> out;
  out.reserve(array.items.size());
  for (const GgufValue& item : array.items) {
    out.push_back(static_cast<float>(float_of(path_, key, item)));
  }
  return out;
}

std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) fail_missing(path_, key, "an array of integers");
  if (v->type != GgufValueType::ARRAY ||
      !is_integer_type(std::get<GgufArray>(v->data).elem_type)) {
    fail_type(path_, key, "an array of integers", *v);
  }
  const GgufArray& array = std::get<GgufArray>(v->data);
  std::vector<int64_t> out;
  out.reserve(array.items.size());
  for (const GgufValue& item : array.items) out.push_back(int_of(path_, key, item));
  return out;
}

uint64_t GgufFile::get_uint_or(std::string_view key, uint64_t fallback) const {
  return has(key) ? get_uint(key) : fallback;
}

double GgufFile::get_float_or(std::string_view key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}

bool GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}

std::string GgufFile::get_string_or(std::string_view key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name) const {
  const GgufTensorInfo* info = find_tensor(name);
  if (info == nullptr) {
    throw Error(path_ + ": no tensor named '" + std::string(name) + "' (the file has " +
                plural(tensors_.size(), "tensor") + ")");
  }
  return *info;
}

}  // namespace lanec
