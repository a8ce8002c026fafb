#include "lib/ref/weights.h"

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/quant/codecs.h"
#include "lib/ref/parallel.h"

namespace lanec {

WeightStore::WeightStore(const GgufFile& gguf, unsigned threads) : gguf_(gguf), threads_(threads) {}

const std::vector<float>& WeightStore::get(const std::string& gguf_name) {
  auto found = cache_.find(gguf_name);
  if (found != cache_.end()) return *found->second;
  const GgufTensorInfo& info = gguf_.tensor(gguf_name);
  if (!can_dequantize(info.type))
    throw Error(gguf_.path() + ": " + gguf_name + ": cannot dequantize element type " +
                ggml_type_name(info.type));
  const uint64_t row_elems = info.ne.empty() ? 1 : info.ne[0];
  const uint64_t rows = info.rows();
  const uint64_t row_bytes = info.row_bytes();
  auto values = std::make_unique<std::vector<float>>(info.n_elements);
  float* dst = values->data();
  parallel_for(static_cast<int64_t>(rows), threads_, static_cast<int64_t>(row_elems),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r)
                   dequantize_row(info.type, info.data + static_cast<uint64_t>(r) * row_bytes,
                                  dst + static_cast<uint64_t>(r) * row_elems, row_elems);
               });
  return *cache_.emplace(gguf_name, std::move(values)).first->second;
}

const std::vector<float>& WeightStore::get(const Tensor& constant) {
  LANEC_ASSERT(constant.role == Role::constant, "WeightStore::get on a non-constant " + constant.name);
  const GgufTensorInfo* info = gguf_.find_tensor(constant.gguf_name);
  if (!info)
    throw Error("const " + constant.name + ": GGUF tensor \"" + constant.gguf_name +
                "\" not found in " + gguf_.path());
  if (info->type != constant.type)
    throw Error("const " + constant.name + ": expected element type " +
                ggml_type_name(constant.type) + " (from the graph), got " +
                ggml_type_name(info->type) + " in " + gguf_.path());
  // docs/ir.md: a constant's shape is its GGUF tensor's ne reversed.
  const std::vector<int64_t> gguf_shape(info->ne.rbegin(), info->ne.rend());
  if (gguf_shape != constant.shape)
    throw Error("const " + constant.name + ": expected shape " + shape_to_string(constant.shape) +
                " (from the graph), got " + shape_to_string(gguf_shape) + " (ne " +
                info->shape_string() + ") in " + gguf_.path());
  return get(constant.gguf_name);
}

uint64_t WeightStore::cached_bytes() const {
  uint64_t bytes = 0;
  for (const auto& entry : cache_) bytes += entry.second->size() * sizeof(float);
  return bytes;
}

}  // namespace lanec
