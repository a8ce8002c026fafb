// A minimal .npy (NumPy format 1.0) writer for row-major float32 matrices,
// streamed row by row: the logits dump of `lanec ref --logits`.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace lanec {

class NpyF32Writer {
 public:
  // Opens `path`; the header is written by finish() once the row count is
  // known (a fixed-width header slot is reserved up front).
  NpyF32Writer(const std::string& path, int64_t cols);
  void append_row(const std::vector<float>& row);
  void finish();
  int64_t rows() const { return rows_; }

 private:
  std::string header() const;
  std::string path_;
  std::ofstream out_;
  int64_t cols_;
  int64_t rows_ = 0;
};

// The header dict line (with padding and the trailing newline) for a
// little-endian f32 array of `shape`.
std::string npy_header_f32(const std::vector<int64_t>& shape);

}  // namespace lanec
