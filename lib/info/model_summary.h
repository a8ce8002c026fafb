// What `lanec info` reports about a GGUF file: identity, hyperparameters,
// tokenizer, tensors, totals by format and the weight bytes one decode step
// reads. Built from headers only (the mapping's data pages are not touched).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/gguf/gguf_file.h"

namespace lanec {

struct TensorSummary {
  std::string name;
  std::string shape;   // PyTorch order, outermost first: "[151936, 1024]"
  std::string format;  // "q8_0"
  uint64_t n_elements = 0;
  uint64_t bytes = 0;
  uint64_t bytes_per_step = 0;  // bytes one decode step reads of it
};

struct ModelSummary {
  std::string path;
  uint32_t gguf_version = 0;
  std::string architecture;
  std::string name;
  std::vector<std::pair<std::string, std::string>> hyperparameters;  // "<arch>.*" keys, file order
  std::vector<std::pair<std::string, std::string>> tokenizer;        // model, pre, tokens, merges, ...
  std::vector<TensorSummary> tensors;
  std::map<std::string, std::pair<uint64_t, uint64_t>> totals_by_format;  // format → (count, bytes)
  uint64_t n_parameters = 0;
  uint64_t weight_bytes = 0;
  uint64_t weight_bytes_per_step = 0;
};

ModelSummary summarize_model(const GgufFile& file);

}  // namespace lanec
