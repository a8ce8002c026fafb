// The logits dump of --logits: a NumPy .npy (format 1.0, '<f4', C order) of
// shape [n_steps, n_vocab], the same format as `lanec ref --logits`, so the
// two files compare with numpy directly. Rows are appended in memory and the
// file is written once at the end (it is a debugging aid, not a hot path).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lanec::runtime {

class NpyLogits {
 public:
  explicit NpyLogits(int64_t cols) : cols_(cols) {}
  void append(const float* row) { data_.insert(data_.end(), row, row + cols_); }
  int64_t rows() const { return cols_ > 0 ? static_cast<int64_t>(data_.size()) / cols_ : 0; }

  // False (with errno set) when the file cannot be written.
  bool write(const std::string& path) const {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows()) + ", " +
                         std::to_string(cols_) + "), }";
    // magic(6) + version(2) + length(2) + header + '\n' is a multiple of 64.
    const size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    const unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                        static_cast<unsigned char>(header.size() & 0xff),
                                        static_cast<unsigned char>(header.size() >> 8)};
    bool ok = std::fwrite(preamble, 1, sizeof preamble, f) == sizeof preamble;
    ok = ok && std::fwrite(header.data(), 1, header.size(), f) == header.size();
    ok = ok && std::fwrite(data_.data(), sizeof(float), data_.size(), f) == data_.size();
    return std::fclose(f) == 0 && ok;
  }

 private:
  int64_t cols_;
  std::vector<float> data_;
};

}  // namespace lanec::runtime
