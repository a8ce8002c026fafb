// GGUF reader. The file is memory-mapped; only the header, metadata and
// tensor infos are parsed at open. Every count, length, offset and size is
// checked against the file before use, so a truncated or hostile file is an
// lanec::Error naming the file, the byte offset and what was wrong.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/gguf/ggml_types.h"
#include "lib/gguf/gguf_bytes.h"
#include "lib/gguf/gguf_value.h"

namespace lanec {

// Longest tensor name the reader (and writer) accepts. ggml itself keeps names
// under 64 bytes; this looser bound only stops a hostile name from being huge.
constexpr uint64_t kGgufMaxTensorNameBytes = 4096;

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> ne;  // ne[0] is the contiguous axis (PyTorch shape reversed)
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;       // relative to the data section
  uint64_t n_bytes = 0;
  uint64_t n_elements = 0;
  const uint8_t* data = nullptr;  // into the mapping; valid while the GgufFile lives

  uint64_t rows() const;       // product of ne[1..]
  uint64_t row_bytes() const;  // bytes of one ne[0] row
  std::string shape_string() const;  // "[1024, 151936]"
};

class GgufFile {
 public:
  // Maps and parses `path`. Throws lanec::Error on any problem.
  static GgufFile open(const std::string& path);
  // Parses bytes already in memory (tests, fuzzer). `label` names the input in
  // messages. The bytes must outlive the returned object.
  static GgufFile parse(const uint8_t* bytes, size_t size, const std::string& label);

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  // Absolute start of the data section (the aligned end of the tensor infos).
  // It may exceed file_size() in a file without tensor bytes that ends right
  // after its infos, as llama.cpp's vocabulary-only files do.
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return size_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed accessors. A missing key or a value of the wrong type is an Error
  // naming the file, the key, the expected and the found type. Integer
  // accessors accept any integer type whose value fits.
  uint64_t get_uint(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;  // f32 or f64
  bool get_bool(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  const GgufArray& get_array(std::string_view key) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<float> get_float_array(std::string_view key) const;
  std::vector<int64_t> get_int_array(std::string_view key) const;

  uint64_t get_uint_or(std::string_view key, uint64_t fallback) const;
  double get_float_or(std::string_view key, double fallback) const;
  bool get_bool_or(std::string_view key, bool fallback) const;
  std::string get_string_or(std::string_view key, const std::string& fallback) const;

  // Tensor infos in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // Error naming the file and tensor when absent.
  const GgufTensorInfo& tensor(std::string_view name) const;

 private:
  GgufFile() = default;
  struct Mapping;
  std::unique_ptr<Mapping> mapping_;
  std::string path_;
  const uint8_t* bytes_ = nullptr;
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint32_t alignment_ = gguf::kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;

  friend class GgufParser;
};

}  // namespace lanec
