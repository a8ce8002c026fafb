// Is this GGUF the model a program was planned for? Compares the file's
// tensors (name, ggml type, shape, bytes) and model metadata values with the
// program's planned tables (spec.h) and lists every difference, so the
// program can refuse a different file with a message saying what differs.
// Plain C++17 (unit-tested without CUDA).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/runtime/spec.h"
#include "lib/gguf/ggml_types.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_value.h"

namespace lanec::runtime {

constexpr uint32_t kGgmlQ8_0 = 8;

inline std::string ne_text(const int64_t* ne, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

inline std::string type_text(uint32_t id) {
  const GgmlTypeTraits* t = ggml_type_traits(id);
  return t != nullptr ? t->name : "type " + std::to_string(id);
}

// Every way `file` differs from the plan, one line each (empty: it matches).
inline std::vector<std::string> model_differences(const GgufFile& file, const ProgramSpec& spec) {
  std::vector<std::string> diffs;
  for (size_t i = 0; i < spec.n_metadata; ++i) {
    const PlannedKey& k = spec.metadata[i];
    const GgufValue* v = file.find(k.key);
    if (v == nullptr) {
      diffs.push_back(std::string("metadata ") + k.key + ": missing (planned " + k.value + ")");
      continue;
    }
    const std::string got = gguf_value_summary(*v, 4096);
    if (got != k.value) diffs.push_back(std::string("metadata ") + k.key + ": planned " + k.value + ", file has " + got);
  }
  for (size_t i = 0; i < spec.n_weights; ++i) {
    const PlannedWeight& w = spec.weights[i];
    const GgufTensorInfo* t = file.find_tensor(w.gguf_name);
    if (t == nullptr) {
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": missing");
      continue;
    }
    const bool same_type = static_cast<uint32_t>(t->type) == w.ggml_type;
    if (!same_type)
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": planned " + type_text(w.ggml_type) + ", file has " +
                      type_text(static_cast<uint32_t>(t->type)));
    std::vector<int64_t> ne(t->ne.begin(), t->ne.end());
    if (ne.size() != w.n_dims || !std::equal(ne.begin(), ne.end(), w.ne))
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": planned shape (ne) " + ne_text(w.ne, w.n_dims) +
                      ", file has " + ne_text(ne.data(), ne.size()));
    else if (same_type && t->n_bytes != w.bytes)  // a different type explains different bytes
      diffs.push_back(std::string("tensor ") + w.gguf_name + ": planned " + std::to_string(w.bytes) +
                      " bytes, file has " + std::to_string(t->n_bytes));
  }
  return diffs;
}

}  // namespace lanec::runtime
