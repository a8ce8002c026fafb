// GGUF writer: metadata of every type and tensors of every format, aligned.
// Tensor bytes come either as a buffer or from a fill callback that the
// writer calls on several threads, on row ranges, directly into the mapped
// output file — so `lanec synth` writes multi-GB models at disk speed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lib/gguf/ggml_types.h"
#include "lib/gguf/gguf_bytes.h"
#include "lib/gguf/gguf_value.h"

namespace lanec {

// Writes rows [first_row, first_row + n_rows) of a tensor into dst
// (n_rows * row_bytes bytes). Called concurrently on disjoint row ranges.
using TensorFill = std::function<void(uint8_t* dst, uint64_t first_row, uint64_t n_rows)>;

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3);

  // Power of two; also written as general.alignment (u32). Without a call the
  // alignment is GGUF's default 32 and the key is not written. Setting the key
  // general.alignment directly (any integer type) has the same effect.
  void set_alignment(uint32_t alignment);
  // Sets or replaces a key (file order = first insertion order). Throws
  // lanec::Error for a value the reader would reject (an array of arrays, an
  // item whose type differs from the array's element type).
  void set(const std::string& key, GgufValue value);
  void add_tensor(const std::string& name, std::vector<uint64_t> ne, GgmlType type,
                  std::vector<uint8_t> bytes);
  void add_tensor(const std::string& name, std::vector<uint64_t> ne, GgmlType type, TensorFill fill);

  // Both add_tensor overloads throw lanec::Error for a bad shape (1 to 4 dims,
  // ne[0] a multiple of the block size), a buffer of the wrong size, a
  // duplicate or over-long name.

  // Writes the file: sized with ftruncate, mapped writable, tensors filled in
  // parallel on row chunks. `threads` = 0 uses the hardware concurrency.
  // `progress(done_bytes, total_bytes)` is called from one thread, may be empty.
  void write(const std::string& path, unsigned threads = 0,
             const std::function<void(uint64_t, uint64_t)>& progress = {}) const;
  // The whole file in memory (tests, small fixtures).
  std::vector<uint8_t> to_bytes() const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type;
    std::vector<uint8_t> bytes;
    TensorFill fill;
  };
  uint32_t version_;
  uint32_t alignment_ = gguf::kDefaultAlignment;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace lanec
