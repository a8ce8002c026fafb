// WeightStore: the f32 values of GGUF tensors, dequantized once on first use
// and cached for the store's lifetime. The planner's CPU schedule executor
// reads every constant through it; the CPU reference executor reads small
// constants through get() and matmul / embedding weights through rows().
//
// Contract:
//  - get(gguf_name) returns the tensor's values in GGUF order (ne[0]
//    contiguous, i.e. row-major in the step graph's outermost-first shape).
//    Dequantization uses lib/quant (dequantize_row), row by row.
//  - get(constant) also checks the graph's declaration against the GGUF
//    (docs/ir.md): same element type, and a shape equal to the GGUF ne
//    reversed, else an lanec::Error naming the constant.
//  - rows(constant) (same checks) gives row access to the tensor in its
//    GGUF encoding, straight from the mapping, nothing cached: row(r) is
//    exactly the values get() holds for that row (the same dequantize_row
//    call on the same bytes), so computing on either is bit-identical. A
//    quantized matmul then reads ~1.06 bytes per Q8_0 weight instead of 4.
//  - The returned reference stays valid until the store is destroyed; the
//    store is not thread-safe for concurrent first loads (load on one thread).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/graph/graph.h"

namespace lanec {

class GgufFile;
struct GgufTensorInfo;

// One tensor's rows in their GGUF encoding (a row = ne[0] elements).
struct WeightRows {
  GgmlType type = GgmlType::F32;
  const uint8_t* data = nullptr;  // into the GgufFile's mapping
  uint64_t row_bytes = 0;
  int64_t row_elems = 0;
  int64_t rows = 0;

  // The f32 values of row r: a pointer into the mapping for 4-byte-aligned
  // F32 data, else `scratch` (row_elems floats) after dequantizing into it.
  const float* row(int64_t r, float* scratch) const;
};

class WeightStore {
 public:
  // The GgufFile must outlive the store.
  explicit WeightStore(const GgufFile& gguf, unsigned threads = 0);

  const std::vector<float>& get(const std::string& gguf_name);
  const std::vector<float>& get(const Tensor& constant);
  WeightRows rows(const Tensor& constant) const;

  const GgufFile& gguf() const { return gguf_; }
  size_t cached_tensors() const { return cache_.size(); }
  uint64_t cached_bytes() const;

 private:
  // The GGUF tensor of a constant after checking type and shape against it.
  const GgufTensorInfo& checked_info(const Tensor& constant) const;

  const GgufFile& gguf_;
  unsigned threads_;
  std::map<std::string, std::unique_ptr<std::vector<float>>, std::less<>> cache_;
};

}  // namespace lanec
