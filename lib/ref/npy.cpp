#include "lib/ref/npy.h"

#include <cstring>

#include "lib/common/error.h"

namespace lanec {
namespace {

// Magic + version 1.0 + u16 header length, then the dict padded with spaces
// so that the data starts at a multiple of 64 bytes. A fixed 128-byte
// preamble fits any 2-D shape, so the header can be rewritten in place.
constexpr size_t kPreamble = 128;

}  // namespace

std::string npy_header_f32(const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // "(3, 4)" but "(3,)"
  else if (!dims.empty()) dims.resize(dims.size() - 1);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t total = 10 + dict.size() + 1;
  const size_t padded = total <= kPreamble ? kPreamble : (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(dict.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>(len >> 8));
  return out + dict;
}

NpyF32Writer::NpyF32Writer(const std::string& path, int64_t cols)
    : path_(path), out_(path, std::ios::binary | std::ios::trunc), cols_(cols) {
  if (!out_) throw Error(path + ": cannot open for writing");
  out_ << header();
}

std::string NpyF32Writer::header() const { return npy_header_f32({rows_, cols_}); }

void NpyF32Writer::append_row(const std::vector<float>& row) {
  LANEC_ASSERT(static_cast<int64_t>(row.size()) == cols_, "npy row width");
  // .npy '<f4' is little-endian, as are the machines lanec runs on.
  out_.write(reinterpret_cast<const char*>(row.data()),
             static_cast<std::streamsize>(row.size() * sizeof(float)));
  ++rows_;
}

void NpyF32Writer::finish() {
  const std::string h = header();
  LANEC_ASSERT(h.size() == kPreamble, "npy header outgrew its slot");
  out_.seekp(0);
  out_ << h;
  out_.close();
  if (!out_) throw Error(path_ + ": write failed");
}

}  // namespace lanec
