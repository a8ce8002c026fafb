#include "lib/info/model_summary.h"

#include <algorithm>

namespace lanec {
namespace {

std::string torch_shape(const GgufTensorInfo& t) {
  std::string s = "[";
  for (size_t i = t.ne.size(); i-- > 0;) {
    s += std::to_string(t.ne[i]);
    if (i) s += ", ";
  }
  return s + "]";
}

bool is_expert_tensor(const std::string& name) { return name.find("_exps.") != std::string::npos; }

// One decode step gathers one row of the embedding, unless the embedding is
// also the output head (tied), which reads all of it. Routed experts are
// read in the proportion used / count.
uint64_t bytes_per_step(const GgufFile& file, const GgufTensorInfo& t, const std::string& arch) {
  if (t.name == "token_embd.weight") {
    return file.find_tensor("output.weight") ? t.row_bytes() : t.n_bytes;
  }
  if (is_expert_tensor(t.name)) {
    const uint64_t count = file.get_uint_or(arch + ".expert_count", 0);
    const uint64_t used = file.get_uint_or(arch + ".expert_used_count", count);
    if (count) return t.n_bytes / count * used;
  }
  return t.n_bytes;
}

std::vector<std::pair<std::string, std::string>> tokenizer_summary(const GgufFile& file) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add_string = [&](const char* label, const char* key) {
    if (const GgufValue* v = file.find(key)) out.emplace_back(label, gguf_value_summary(*v));
  };
  auto add_count = [&](const char* label, const char* key) {
    if (const GgufValue* v = file.find(key); v && v->type == GgufValueType::ARRAY)
      out.emplace_back(label, std::to_string(std::get<GgufArray>(v->data).items.size()));
  };
  auto add_token = [&](const char* label, const char* key) {
    const GgufValue* v = file.find(key);
    if (!v) return;
    std::string text = gguf_value_summary(*v);
    const GgufValue* tokens = file.find("tokenizer.ggml.tokens");
    const uint64_t id = file.get_uint_or(key, UINT64_MAX);
    if (tokens && tokens->type == GgufValueType::ARRAY) {
      const auto& items = std::get<GgufArray>(tokens->data).items;
      if (id < items.size() && items[id].type == GgufValueType::STRING)
        text += " " + std::get<std::string>(items[id].data);
    }
    out.emplace_back(label, text);
  };
  add_string("model", "tokenizer.ggml.model");
  add_string("pre-tokenizer", "tokenizer.ggml.pre");
  add_count("tokens", "tokenizer.ggml.tokens");
  add_count("merges", "tokenizer.ggml.merges");
  add_token("bos", "tokenizer.ggml.bos_token_id");
  add_token("eos", "tokenizer.ggml.eos_token_id");
  add_token("padding", "tokenizer.ggml.padding_token_id");
  add_string("add bos", "tokenizer.ggml.add_bos_token");
  return out;
}

}  // namespace

ModelSummary summarize_model(const GgufFile& file) {
  ModelSummary s;
  s.path = file.path();
  s.gguf_version = file.version();
  s.architecture = file.get_string_or("general.architecture", "");
  s.name = file.get_string_or("general.name", "");
  const std::string prefix = s.architecture + ".";
  for (const auto& [key, value] : file.metadata()) {
    if (!s.architecture.empty() && key.rfind(prefix, 0) == 0)
      s.hyperparameters.emplace_back(key.substr(prefix.size()), gguf_value_summary(value));
  }
  s.tokenizer = tokenizer_summary(file);
  for (const GgufTensorInfo& t : file.tensors()) {
    TensorSummary ts{t.name, torch_shape(t), ggml_type_name(t.type), t.n_elements, t.n_bytes,
                     bytes_per_step(file, t, s.architecture)};
    auto& total = s.totals_by_format[ts.format];
    total.first += 1;
    total.second += ts.bytes;
    s.n_parameters += ts.n_elements;
    s.weight_bytes += ts.bytes;
    s.weight_bytes_per_step += ts.bytes_per_step;
    s.tensors.push_back(std::move(ts));
  }
  return s;
}

}  // namespace lanec
