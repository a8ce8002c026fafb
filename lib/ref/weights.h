// WeightStore: the f32 values of GGUF tensors, dequantized once on first use
// and cached for the store's lifetime. The CPU reference executor and the
// planner's CPU schedule executor read every constant through it.
//
// Contract:
//  - get(gguf_name) returns the tensor's values in GGUF order (ne[0]
//    contiguous, i.e. row-major in the step graph's outermost-first shape).
//    Dequantization uses lib/quant (dequantize_row), row by row.
//  - get(constant) also checks the graph's declaration against the GGUF
//    (docs/ir.md): same element type, and a shape equal to the GGUF ne
//    reversed, else an lanec::Error naming the constant.
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

class WeightStore {
 public:
  // The GgufFile must outlive the store.
  explicit WeightStore(const GgufFile& gguf, unsigned threads = 0);

  const std::vector<float>& get(const std::string& gguf_name);
  const std::vector<float>& get(const Tensor& constant);

  const GgufFile& gguf() const { return gguf_; }
  size_t cached_tensors() const { return cache_.size(); }
  uint64_t cached_bytes() const;

 private:
  const GgufFile& gguf_;
  unsigned threads_;
  std::map<std::string, std::unique_ptr<std::vector<float>>, std::less<>> cache_;
};

}  // namespace lanec
