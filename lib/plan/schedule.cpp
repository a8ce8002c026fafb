// Names and buffer queries of the schedule (schedule.h).
#include "lib/plan/schedule.h"

#include <algorithm>

#include "lib/common/error.h"

namespace lanec {

const char* launch_kind_name(LaunchKind kind) {
  switch (kind) {
    case LaunchKind::embed: return "embed";
    case LaunchKind::rms_norm: return "rms_norm";
    case LaunchKind::quantize: return "quantize";
    case LaunchKind::gemv: return "gemv";
    case LaunchKind::rope: return "rope";
    case LaunchKind::kv_write: return "kv_write";
    case LaunchKind::attention: return "attention";
    case LaunchKind::swiglu: return "swiglu";
    case LaunchKind::add: return "add";
    case LaunchKind::argmax: return "argmax";
    case LaunchKind::ffn: return "ffn";
  }
  return "?";
}

const std::vector<LaunchKind>& all_launch_kinds() {
  static const std::vector<LaunchKind> kinds = {
      LaunchKind::embed,    LaunchKind::rms_norm,  LaunchKind::quantize, LaunchKind::gemv,
      LaunchKind::rope,     LaunchKind::kv_write,  LaunchKind::attention, LaunchKind::swiglu,
      LaunchKind::add,      LaunchKind::argmax,    LaunchKind::ffn};
  return kinds;
}

const char* gemv_numerics_name(GemvNumerics numerics) {
  switch (numerics) {
    case GemvNumerics::int8: return "int8";
    case GemvNumerics::int8x2: return "int8x2";
    default: return "f32";
  }
}

GemvNumerics gemv_numerics(GgmlType format, ActivationNumerics activations) {
  if (format != GgmlType::Q8_0 || activations == ActivationNumerics::dequant) return GemvNumerics::f32;
  return activations == ActivationNumerics::two_pass_int8 ? GemvNumerics::int8x2 : GemvNumerics::int8;
}

const char* buffer_role_name(BufferRole role) {
  switch (role) {
    case BufferRole::param: return "param";
    case BufferRole::state: return "state";
    case BufferRole::weight: return "weight";
    case BufferRole::activation: return "activation";
    case BufferRole::workspace: return "workspace";
  }
  return "?";
}

uint64_t element_bytes(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::I32: return 4;
    case GgmlType::F16:
    case GgmlType::BF16: return 2;
    case GgmlType::I8: return 1;
    default: return 0;
  }
}

namespace {

void push(std::vector<std::string>& out, const std::string& name) {
  if (!name.empty()) out.push_back(name);
}

struct ReadsOf {
  std::vector<std::string> r;
  void operator()(const EmbedLaunch& l) { push(r, l.table); push(r, l.token); push(r, l.norm_weight); }
  void operator()(const RmsNormLaunch& l) { push(r, l.x); push(r, l.residual); push(r, l.weight); }
  void operator()(const QuantizeLaunch& l) { push(r, l.x); }
  void operator()(const GemvLaunch& l) {
    push(r, l.x);
    push(r, l.x_q8);
    for (const GemvPart& p : l.parts) {
      push(r, p.weight);
      push(r, p.bias);
      push(r, p.residual);
    }
  }
  void operator()(const RopeLaunch& l) {
    for (const RopePart& p : l.parts) {
      push(r, p.x);
      push(r, p.norm_weight);
    }
    push(r, l.v);
    push(r, l.pos);
  }
  void operator()(const KvWriteLaunch& l) { push(r, l.k); push(r, l.v); push(r, l.pos); }
  void operator()(const AttentionLaunch& l) {
    push(r, l.q); push(r, l.k_cache); push(r, l.v_cache); push(r, l.pos);
  }
  void operator()(const ElementwiseLaunch& l) { push(r, l.a); push(r, l.b); }
  void operator()(const FfnLaunch& l) {
    push(r, l.x_q8); push(r, l.gate); push(r, l.up); push(r, l.down); push(r, l.residual);
  }
  void operator()(const ArgmaxLaunch& l) {
    push(r, l.key.empty() ? l.logits : l.key);  // the finish form reads the GEMV's key, not the logits
    push(r, l.token);
    push(r, l.pos);
  }
};

struct WritesOf {
  std::vector<std::string> w;
  void operator()(const EmbedLaunch& l) { push(w, l.out); }
  void operator()(const RmsNormLaunch& l) { push(w, l.h_out); push(w, l.out); push(w, l.out_q8); }
  void operator()(const QuantizeLaunch& l) { push(w, l.out_q8); }
  void operator()(const GemvLaunch& l) {
    for (const GemvPart& p : l.parts) push(w, p.y);
    push(w, l.argmax_key);
  }
  void operator()(const RopeLaunch& l) {
    for (const RopePart& p : l.parts)
      if (!p.cache_only) push(w, p.x);
    for (const RopePart& p : l.parts) push(w, p.cache);
    push(w, l.v_cache);
  }
  void operator()(const KvWriteLaunch& l) {
    if (!l.k.empty()) push(w, l.k_cache);
    if (!l.v.empty()) push(w, l.v_cache);
  }
  void operator()(const AttentionLaunch& l) {
    push(w, l.out); push(w, l.out_q8); push(w, l.part_acc); push(w, l.part_ml); push(w, l.done);
  }
  void operator()(const ElementwiseLaunch& l) { push(w, l.out); push(w, l.out_q8); }
  void operator()(const FfnLaunch& l) { push(w, l.y); }
  void operator()(const ArgmaxLaunch& l) {
    push(w, l.out); push(w, l.token); push(w, l.pos);
    push(w, l.block_value); push(w, l.block_index); push(w, l.done); push(w, l.key);
  }
};

}  // namespace

uint64_t Launch::weight_bytes_read(const std::string& buffer, uint64_t bytes) const {
  const auto* embed = std::get_if<EmbedLaunch>(&params);
  const bool gathered = embed != nullptr && embed->table == buffer && embed->n_rows > 0;
  return gathered ? bytes / static_cast<uint64_t>(embed->n_rows) : bytes;
}

std::vector<std::string> Launch::reads() const {
  ReadsOf v;
  std::visit(v, params);
  return v.r;
}

std::vector<std::string> Launch::writes() const {
  WritesOf v;
  std::visit(v, params);
  return v.w;
}

const Buffer* Schedule::find_buffer(const std::string& name) const {
  auto it = std::lower_bound(buffers.begin(), buffers.end(), name,
                             [](const Buffer& b, const std::string& n) { return b.name < n; });
  if (it == buffers.end() || it->name != name) return nullptr;
  return &*it;
}

const Buffer& Schedule::buffer(const std::string& name) const {
  const Buffer* b = find_buffer(name);
  LANEC_ASSERT(b != nullptr, "schedule has no buffer '" + name + "'");
  return *b;
}

std::pair<const Buffer*, int64_t> Schedule::storage_of(const std::string& name) const {
  const Buffer* b = &buffer(name);
  int64_t offset = 0;
  for (int depth = 0; b->is_view(); ++depth) {
    LANEC_ASSERT(depth < 16, "view chain too deep at '" + name + "'");
    offset += b->view_offset;
    b = &buffer(b->view_of);
  }
  return {b, offset};
}

std::pair<const Buffer*, uint64_t> Schedule::storage_bytes_of(const std::string& name) const {
  auto [root, offset] = storage_of(name);
  uint64_t size = element_bytes(root->type);
  LANEC_ASSERT(offset == 0 || size > 0, "view '" + name + "' into block-format storage " + root->name);
  return {root, static_cast<uint64_t>(offset) * size};
}

uint64_t Schedule::weight_bytes_read(const Launch& l) const {
  uint64_t bytes = 0;
  for (const std::string& name : l.reads())
    if (const Buffer& b = buffer(name); b.role == BufferRole::weight) bytes += l.weight_bytes_read(name, b.bytes);
  return bytes;
}

const ArgmaxLaunch* Schedule::find_argmax() const {
  const ArgmaxLaunch* found = nullptr;
  for (const Launch& l : launches)
    if (const auto* a = std::get_if<ArgmaxLaunch>(&l.params)) found = a;
  return found;
}

std::string Schedule::token_param() const {
  if (const ArgmaxLaunch* a = find_argmax(); a != nullptr && !a->token.empty()) return a->token;
  std::string token = "token";
  for (const Launch& l : launches)
    if (const auto* e = std::get_if<EmbedLaunch>(&l.params); e != nullptr && !e->token.empty()) token = e->token;
  return token;
}

std::string Schedule::pos_param() const {
  if (const ArgmaxLaunch* a = find_argmax(); a != nullptr && !a->pos.empty()) return a->pos;
  return "pos";
}

std::string Schedule::logits_output() const {
  for (const std::string& out : outputs)
    if (buffer(out).type == GgmlType::F32) return out;
  return "";
}

}  // namespace lanec
