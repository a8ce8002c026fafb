// Schedule -> CUDA program text (emit_program.h). The file is laid out in the
// order a reader wants it: header (identity, knobs, build command), includes,
// the weights struct and its planned GGUF table, the buffers struct, the
// carving of both out of one allocation each, the table of step()'s launches
// (what --profile prints), step(), and main().
#include "emit/emit_program.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "kernels/limits.h"
#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/gguf/gguf_value.h"

namespace lanec {

namespace {

constexpr uint64_t kAlign = 256;  // every carved piece starts 256-byte aligned (16 needed by GEMV)
constexpr int kRingCapacity = 1024;  // generated-token ring argmax appends to (drained by the host)

uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// ---- text helpers -------------------------------------------------------------

std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);  // octal: cannot swallow following hex digits
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Comment-safe text: no newlines or "*/" trouble (line comments only).
std::string comment_text(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r') ? ' ' : c;
  return out;
}

// A float literal that reads back as the same float.
std::string float_literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<float>(v));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d));
  return "[" + join(dims, ", ") + "]";
}

std::string pad2(const std::string& digits) { return digits.size() < 2 ? "0" + digits : digits; }

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t_" + out;
  return out;
}

// "blk.3.attn_q.weight" -> "attn_q_l03", "blk.3.attn_q.bias" -> "attn_q_bias_l03",
// "token_embd.weight" -> "token_embd": the graph's own naming of layers.
std::string weight_ident(const std::string& gguf_name) {
  std::string n = gguf_name;
  const std::string suffix = ".weight";
  if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
    n.resize(n.size() - suffix.size());
  if (n.rfind("blk.", 0) == 0) {
    const size_t dot = n.find('.', 4);
    if (dot != std::string::npos && dot > 4) {
      const std::string layer = n.substr(4, dot - 4);
      if (layer.find_first_not_of("0123456789") == std::string::npos)
        return sanitize(n.substr(dot + 1) + "_l" + pad2(layer));
    }
  }
  return sanitize(n);
}

// ---- kernel-library names ---------------------------------------------------------

// The WeightFormat a weight is read in on the device: Q8_0 is repacked at load.
std::string weight_format(GgmlType type) {
  switch (type) {
    case GgmlType::F32: return "WeightFormat::f32";
    case GgmlType::F16: return "WeightFormat::f16";
    case GgmlType::BF16: return "WeightFormat::bf16";
    case GgmlType::Q8_0: return "WeightFormat::q8_0_split";
    case GgmlType::Q4_0: return "WeightFormat::q4_0";
    case GgmlType::Q4_K: return "WeightFormat::q4_k";
    case GgmlType::Q6_K: return "WeightFormat::q6_k";
    default: return "";
  }
}

bool gemv_has_kernel(GgmlType type) {
  return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::Q8_0;
}

std::string cache_precision(const Buffer& cache, const std::string& launch) {
  if (cache.type == GgmlType::F32) return "CachePrecision::f32";
  if (cache.type == GgmlType::F16) return "CachePrecision::f16";
  throw Error("launch " + launch + ": cache " + cache.name + " is " + ggml_type_name(cache.type) +
              "; the kernel library's caches are f32 or f16");
}

// ---- bytes a launch moves (the --profile table) --------------------------------------

// Bytes of a buffer's extent; a view owns no storage (bytes 0) but covers its
// elements of the owner.
uint64_t extent_bytes(const Buffer& b) {
  if (!b.is_view()) return b.bytes;
  const uint64_t n = static_cast<uint64_t>(b.elements);
  if (is_int8_form(b.form)) return int8_form_bytes(b.form, b.elements);
  return n * element_bytes(b.type);
}

struct LaunchBytes {
  uint64_t weights = 0;
  uint64_t activations = 0;
  uint64_t cache_per_position = 0;
};

// The context length of a launch that touches a KV cache (0 otherwise).
int64_t cache_rows(const Launch& l) {
  if (const auto* a = std::get_if<AttentionLaunch>(&l.params)) return a->n_ctx;
  if (const auto* k = std::get_if<KvWriteLaunch>(&l.params)) return k->n_ctx;
  if (const auto* r = std::get_if<RopeLaunch>(&l.params)) return r->n_ctx;  // row_write joined: 0 without
  return 0;
}

// What the launch reads and writes, as the schedule lists it (a buffer read
// and written, like a RoPE rotated in place, counts twice): weights whole
// except the embedding table (one row gathered); KV caches by position (a
// cache write stores one position, attention reads positions 0..pos, counted
// per position); attention workspaces only when the context is split.
LaunchBytes launch_bytes(const Schedule& s, const Launch& l) {
  LaunchBytes out;
  const auto* attention = std::get_if<AttentionLaunch>(&l.params);
  auto count = [&](const std::string& name, bool read) {
    const Buffer& b = s.buffer(name);
    const uint64_t bytes = extent_bytes(b);
    if (b.role == BufferRole::weight) {
      out.weights += l.weight_bytes_read(name, bytes);
    } else if (b.role == BufferRole::state && cache_rows(l) > 0) {
      const uint64_t row = bytes / static_cast<uint64_t>(cache_rows(l));
      if (read && attention != nullptr)
        out.cache_per_position += row;
      else
        out.activations += row;
    } else if (b.role == BufferRole::workspace && attention != nullptr && attention->n_split <= 1) {
      // unused: the kernel gets nullptr without splits
    } else {
      out.activations += bytes;
    }
  };
  for (const std::string& name : l.reads()) count(name, true);
  for (const std::string& name : l.writes()) count(name, false);
  return out;
}

// "ops 12-14 (gemv_parts)": the covered op indices as ranges, then the rules.
std::string ops_short(const Launch& l) {
  std::vector<std::string> ranges;
  for (size_t i = 0; i < l.ops.size();) {
    size_t j = i;
    while (j + 1 < l.ops.size() && l.ops[j + 1] == l.ops[j] + 1) ++j;
    ranges.push_back(std::to_string(l.ops[i]) + (j > i ? "-" + std::to_string(l.ops[j]) : ""));
    i = j + 1;
  }
  std::string t = l.ops.empty() ? std::string("no graph op")
                                : (l.ops.size() == 1 ? "op " : "ops ") + join(ranges, ", ");
  if (!l.rules.empty()) t += " (" + join(l.rules, ", ") + ")";
  return t;
}

// ---- the emitter ----------------------------------------------------------------

class ProgramEmitter {
 public:
  ProgramEmitter(const Schedule& s, const Graph& g, const ModelIdentity& id, const EmitOptions& o)
      : s_(s), g_(g), id_(id), o_(o) {}

  std::string run() {
    name_buffers();
    lay_out();
    header();
    includes();
    weights_struct();
    buffers_struct();
    carve();
    launch_table();
    step();
    program_spec();
    return out_.str();
  }

 private:
  struct Piece {
    const Buffer* buffer;
    uint64_t offset;
  };

  // ---- names and layout ----
  void name_buffers() {
    std::set<std::string> weight_names, buffer_names;
    for (const Buffer& b : s_.buffers) {
      const bool weight = b.role == BufferRole::weight;
      const std::string ident = weight ? weight_ident(b.gguf_name.empty() ? b.name : b.gguf_name) : sanitize(b.name);
      auto& taken = weight ? weight_names : buffer_names;
      LANEC_ASSERT(taken.insert(ident).second, "two buffers map to the C name " + ident);
      ident_[b.name] = (weight ? "w." : "b.") + ident;
      member_[b.name] = ident;
    }
    LANEC_ASSERT(!buffer_names.count("decode_ring") && !buffer_names.count("decode_ring_count"),
                 "a buffer is named like the decode ring");
  }

  // Weights in reading order: model-level tensors first, then layer by layer
  // (blk.2 before blk.10), by name within a layer.
  static std::tuple<int64_t, std::string> weight_order(const Buffer& b) {
    const std::string& n = b.gguf_name.empty() ? b.name : b.gguf_name;
    if (n.rfind("blk.", 0) == 0) {
      const size_t dot = n.find('.', 4);
      const std::string layer = n.substr(4, dot == std::string::npos ? std::string::npos : dot - 4);
      if (!layer.empty() && layer.size() < 10 && layer.find_first_not_of("0123456789") == std::string::npos)
        return {std::stoll(layer), n};
    }
    return {-1, n};
  }

  void lay_out() {
    std::vector<const Buffer*> weights;
    for (const Buffer& b : s_.buffers)
      if (b.role == BufferRole::weight) weights.push_back(&b);
    std::stable_sort(weights.begin(), weights.end(),
                     [](const Buffer* a, const Buffer* b) { return weight_order(*a) < weight_order(*b); });
    uint64_t w_off = 0;
    for (const Buffer* b : weights) {
      LANEC_ASSERT(!b->is_view(), "weight " + b->name + " is a view");
      weights_.push_back({b, w_off});
      w_off = align_up(w_off + b->bytes);
    }
    weight_bytes_ = w_off;
    uint64_t b_off = 0;
    for (BufferRole role : {BufferRole::param, BufferRole::state, BufferRole::activation, BufferRole::workspace}) {
      for (const Buffer& b : s_.buffers) {
        if (b.role != role) continue;
        if (b.is_view()) {
          views_.push_back(&b);
          continue;
        }
        pieces_.push_back({&b, b_off});
        b_off = align_up(b_off + b.bytes);
      }
    }
    ring_offset_ = b_off;
    b_off = align_up(b_off + kRingCapacity * 4);
    ring_count_offset_ = b_off;
    buffer_bytes_ = align_up(b_off + 4);
  }

  const Buffer& buf(const std::string& name) const { return s_.buffer(name); }

  // The expression naming a buffer's pointer ("b.q_l00", "w.attn_q_l00").
  std::string ptr(const std::string& name) const {
    if (name.empty()) return "nullptr";
    auto it = ident_.find(name);
    LANEC_ASSERT(it != ident_.end(), "launch names an unknown buffer " + name);
    return it->second;
  }
  std::string qs(const std::string& name) const { return ptr(name) + ".qs"; }
  // The argmax key (gemv_argmax): an i32 [2] workspace held as one u64.
  std::string key_ptr(const std::string& name) const {
    const Buffer& b = buf(name);
    LANEC_ASSERT(b.type == GgmlType::I32 && b.elements == 2, name + " is not the argmax key's i32 [2] workspace");
    return "reinterpret_cast<unsigned long long*>(" + ptr(name) + ")";
  }
  std::string qd(const std::string& name) const { return ptr(name) + ".d"; }
  std::string f32_ptr(const std::string& name) const {
    if (name.empty()) return "nullptr";
    const Buffer& b = buf(name);
    LANEC_ASSERT(b.form == BufferForm::plain && b.type == GgmlType::F32, name + " is not a plain f32 buffer");
    return ptr(name);
  }

  std::string c_type(const Buffer& b) const {
    if (is_int8_form(b.form)) return "Int8Vec";
    switch (b.type) {
      case GgmlType::F32: return "float*";
      case GgmlType::I32: return "int*";
      case GgmlType::F16: return "__half*";
      case GgmlType::BF16: return "__nv_bfloat16*";
      default: LANEC_ASSERT(false, "buffer " + b.name + " has an element type the program cannot hold");
    }
    return "";
  }

  std::string buffer_comment(const Buffer& b) const {
    std::string c = b.name + "  " + buffer_role_name(b.role) + " ";
    c += b.form == BufferForm::q8     ? std::string("int8 + f32 scale per 32")
         : b.form == BufferForm::q8x2 ? std::string("int8 high + int8 low + f32 scale per 32")
                                      : std::string(ggml_type_name(b.type));
    c += " " + shape_text(b.shape);
    if (!b.layout.empty()) c += " " + b.layout;
    return c;
  }

  // ---- sections ----
  void header() {
    auto& o = out_;
    std::string file = o_.output_name + ".cu";
    o << "// " << file << ": generated by lanec from the schedule below. Do not edit: re-run `lanec plan`.\n";
    o << "//\n";
    o << "// model:       " << comment_text(s_.model_name.empty() ? "(unnamed)" : s_.model_name) << " (" << s_.arch
      << ")\n";
    o << "// fingerprint: " << id_.fingerprint << "  (FNV-1a 64 of the GGUF metadata and tensor table)\n";
    std::string knob_file = o_.knob_file;
    const size_t slash = knob_file.find_last_of('/');
    if (slash != std::string::npos) knob_file = knob_file.substr(slash + 1);
    o << "// knob file:   " << (knob_file.empty() ? "(none)" : comment_text(knob_file)) << "\n";
    o << "// knobs:       " << knobs_summary(s_.knobs) << "\n";
    o << "// held rules:  " << (s_.held.empty() ? "none" : join(s_.held, ", ")) << "\n";
    std::vector<std::string> kinds;
    for (const auto& [kind, n] : s_.census.launches) kinds.push_back(kind + " " + std::to_string(n));
    o << "// launches:    " << s_.launches.size() << " a step (" << join(kinds, ", ") << ")\n";
    o << "// memory:      weights " << weight_bytes_ << " bytes, buffers " << buffer_bytes_ << " bytes\n";
    o << "//\n";
    o << "// Build (LANEC_SRC is the lanec source tree; docs/emitted-program.md):\n";
    o << "//   " << nvcc_build_command("$LANEC_SRC", s_.knobs.chip.arch, file, o_.output_name) << "\n";
    o << "// Run:\n";
    o << "//   ./" << o_.output_name << " model.gguf -p \"Once upon a time\" -n 128   (--help lists the flags)\n\n";
  }

  void includes() {
    out_ << "#include \"kernels/lanec_kernels.cuh\"    // kernel families: launch_<family>(params, stream)\n";
    out_ << "#include \"kernels/runtime/program.cuh\"  // host runtime: GGUF upload, tokenizer, sampling, CLI, bench\n\n";
    out_ << "namespace model {\n\n";
    out_ << "using namespace lanec::kernels;\n";
    out_ << "using lanec::runtime::Int8Vec;\n\n";
  }

  void weights_struct() {
    auto& o = out_;
    o << "// ---- weights: one device allocation of " << weight_bytes_ << " bytes, uploaded from the GGUF ----\n";
    o << "// Q8_0 matrices are repacked at load into q8_0_split (kernels/blocks.h), same size.\n";
    o << "struct Weights {\n";
    for (const Piece& p : weights_) {
      const Buffer& b = *p.buffer;
      const std::string type = b.type == GgmlType::F32 ? "const float*" : "const void*";
      o << "  " << type << " " << member_.at(b.name) << ";  // " << b.gguf_name << "  " << ggml_type_name(b.type) << " "
        << shape_text(b.shape)
        << (b.type != GgmlType::Q8_0 ? "" : b.layout == "q8_0_cols" ? " (q8_0_cols)" : " (q8_0_split)") << "\n";
    }
    o << "};\n\n";
    o << "// What the GGUF must hold: name, ggml type, ne (innermost first), bytes, offset here.\n";
    o << "constexpr lanec::runtime::PlannedWeight kPlannedWeights[] = {\n";
    for (const Piece& p : weights_) {
      const Buffer& b = *p.buffer;
      std::vector<std::string> ne;
      for (auto it = b.shape.rbegin(); it != b.shape.rend(); ++it) ne.push_back(std::to_string(*it));
      o << "    {" << c_string(b.gguf_name) << ", " << static_cast<uint32_t>(b.type) << ", " << b.shape.size()
        << ", {" << join(ne, ", ") << "}, " << b.bytes << "u, " << p.offset << "u"
        << (b.layout == "q8_0_cols" ? ", true" : "") << "},  // " << ggml_type_name(b.type)
        << (b.layout == "q8_0_cols" ? " (q8_0_cols)" : "") << "\n";
    }
    o << "};\n\n";
    o << "// Model metadata the plan baked in; the program refuses a GGUF whose values differ.\n";
    o << "constexpr lanec::runtime::PlannedKey kPlannedMetadata[] = {\n";
    for (const auto& [key, value] : id_.checked_metadata)
      o << "    {" << c_string(key) << ", " << c_string(value) << "},\n";
    o << "};\n\n";
  }

  void buffers_struct() {
    auto& o = out_;
    o << "// ---- buffers: one device allocation of " << buffer_bytes_ << " bytes, zeroed at start ----\n";
    o << "struct Buffers {\n";
    BufferRole last = BufferRole::weight;
    for (const Piece& p : pieces_) {
      const Buffer& b = *p.buffer;
      if (b.role != last) {
        o << "  // " << buffer_role_name(b.role) << "\n";
        last = b.role;
      }
      o << "  " << c_type(b) << " " << member_.at(b.name) << ";  // " << buffer_comment(b) << "\n";
    }
    if (!views_.empty()) o << "  // views (pointers into the buffers above)\n";
    for (const Buffer* v : views_) {
      o << "  " << c_type(*v) << " " << member_.at(v->name) << ";  // " << buffer_comment(*v) << " = "
        << v->view_of << " + " << v->view_offset << "\n";
    }
    o << "  // decode state the argmax launch appends to (drained by the host runtime)\n";
    o << "  int* decode_ring;        // i32 [" << kRingCapacity << "] generated tokens\n";
    o << "  int* decode_ring_count;  // i32 [1] tokens appended so far\n";
    o << "};\n\n";
    o << "Weights w;\nBuffers b;\n\n";
  }

  void carve() {
    auto& o = out_;
    o << "// Points the structs' members into the two allocations (offsets fixed by the planner's sizes).\n";
    o << "void carve(uint8_t* wbase, uint8_t* bbase) {\n";
    for (const Piece& p : weights_) {
      const Buffer& bf = *p.buffer;
      const std::string type = bf.type == GgmlType::F32 ? "const float*" : "const void*";
      o << "  w." << member_.at(bf.name) << " = reinterpret_cast<" << type << ">(wbase + " << p.offset << ");\n";
    }
    for (const Piece& p : pieces_) {
      const Buffer& bf = *p.buffer;
      const std::string m = "b." + member_.at(bf.name);
      if (is_int8_form(bf.form)) {
        // [n high][n low (two words)][n/32 scales]: Int8Vec {qs, d, lo}.
        const uint64_t n = static_cast<uint64_t>(bf.elements);
        const uint64_t words = bf.form == BufferForm::q8x2 ? 2 : 1;
        o << "  " << m << " = {reinterpret_cast<int8_t*>(bbase + " << p.offset << "), reinterpret_cast<float*>(bbase + "
          << p.offset + words * n << ")";
        if (words == 2) o << ", reinterpret_cast<int8_t*>(bbase + " << p.offset + n << ")";
        o << "};\n";
      } else {
        o << "  " << m << " = reinterpret_cast<" << c_type(bf) << ">(bbase + " << p.offset << ");\n";
      }
    }
    for (const Buffer* v : views_) {
      const auto [owner, offset] = s_.storage_of(v->name);
      LANEC_ASSERT(owner != nullptr && v->form == BufferForm::plain && owner->type == v->type,
                   "view " + v->name + " must be a plain view of its owner's element type");
      o << "  b." << member_.at(v->name) << " = b." << member_.at(owner->name) << " + " << offset << ";\n";
    }
    o << "  b.decode_ring = reinterpret_cast<int*>(bbase + " << ring_offset_ << ");\n";
    o << "  b.decode_ring_count = reinterpret_cast<int*>(bbase + " << ring_count_offset_ << ");\n";
    o << "}\n\n";
  }

  std::string ops_comment(const Launch& l) const {
    std::vector<std::string> ops;
    for (size_t i : l.ops) {
      if (i >= g_.ops().size()) {
        ops.push_back("#" + std::to_string(i));
        continue;
      }
      const Op& op = g_.ops()[i];
      std::string t = "#" + std::to_string(i) + " " + op_kind_name(op.kind);
      if (!op.outputs.empty()) t += " " + g_.tensor(op.outputs.front()).name;
      ops.push_back(t);
    }
    std::string c = l.name + ": " + (ops.empty() ? std::string("(no graph op: planned conversion)") : join(ops, ", "));
    c += l.rules.empty() ? "  [no rule]" : "  [" + join(l.rules, ", ") + "]";
    return c;
  }

  // The launch statement at `indent`, e.g. LANEC_CUDA_CHECK((launch_x<...>(p, stream)));
  static std::string launch_statement(const std::string& call, const std::string& indent) {
    return indent + "LANEC_CUDA_CHECK((" + call + "(p, stream)));\n";
  }
  // The launch statement, closing the launch's block.
  void launch_call(const std::string& call) { out_ << launch_statement(call, "    ") << "  }\n"; }

  void emit(const Launch& l, const EmbedLaunch& e) {
    const std::string fmt = weight_format(e.format);
    if (fmt.empty()) throw Error("launch " + l.name + ": embedding table format " + ggml_type_name(e.format) +
                                 " has no gather in kernels/embed.cuh");
    auto& o = out_;
    o << "    EmbedParams p{};\n";
    o << "    p.table = " << ptr(e.table) << ";\n";
    o << "    p.token = " << ptr(e.token) << ";\n";
    o << "    p.out = " << f32_ptr(e.out) << ";\n";
    o << "    p.norm_w = " << f32_ptr(e.norm_weight) << ";\n";
    o << "    p.eps = " << float_literal(e.eps) << ";\n";
    o << "    p.n_rows = " << e.n_rows << ";\n";
    o << "    p.dim = " << e.dim << ";\n";
    launch_call("launch_embed<" + fmt + ", " + (e.norm_weight.empty() ? "false" : "true") + ">");
  }

  // The out_qs / out_d (and, for a two-word form, out_lo) fields of a launch
  // that writes the int8 form `q8`.
  void int8_outputs(const std::string& q8) {
    out_ << "    p.out_qs = " << qs(q8) << ";\n";
    out_ << "    p.out_d = " << qd(q8) << ";\n";
    if (buf(q8).form == BufferForm::q8x2) out_ << "    p.out_lo = " << ptr(q8) << ".lo;\n";
  }

  void emit(const Launch& l, const RmsNormLaunch& r) {
    auto& o = out_;
    const bool add = !r.residual.empty();
    const bool quant = !r.out_q8.empty();
    o << "    RmsNormParams p{};\n";
    o << "    p.x = " << f32_ptr(r.x) << ";\n";
    if (add) {
      o << "    p.residual = " << f32_ptr(r.residual) << ";\n";
      o << "    p.h_out = " << f32_ptr(r.h_out) << ";\n";
    }
    o << "    p.w = " << f32_ptr(r.weight) << ";\n";
    o << "    p.out = " << f32_ptr(r.out) << ";\n";
    if (quant) int8_outputs(r.out_q8);
    o << "    p.eps = " << float_literal(r.eps) << ";\n";
    o << "    p.n = " << r.n << ";\n";
    launch_call(std::string("launch_rms_norm<") + (add ? "true" : "false") + ", " + (quant ? "true" : "false") +
                (l.early_trigger ? ", true" : "") + ">");
  }

  void emit(const Launch& l, const QuantizeLaunch& q) {
    auto& o = out_;
    o << "    QuantizeParams p{};\n";
    o << "    p.x = " << f32_ptr(q.x) << ";\n";
    int8_outputs(q.out_q8);
    o << "    p.n = " << q.n << ";\n";
    launch_call(l.early_trigger ? "launch_quantize_q8<false, true>" : "launch_quantize_q8");
  }

  void emit(const Launch& l, const GemvLaunch& g) {
    if (!gemv_has_kernel(g.format))
      throw Error("launch " + l.name + ": no GEMV kernel reads " + ggml_type_name(g.format) +
                  " weights (kernels/gemv.cuh takes f32, f16, bf16 and q8_0)");
    const bool int8 = g.numerics != GemvNumerics::f32;
    const bool two_words = g.numerics == GemvNumerics::int8x2;
    if (int8 && g.format != GgmlType::Q8_0)
      throw Error("launch " + l.name + ": int8 activations pair only with q8_0 weights, got " +
                  ggml_type_name(g.format));
    LANEC_ASSERT(!g.parts.empty() && g.parts.size() <= 4, "gemv " + l.name + " has 1..4 parts");
    auto& o = out_;
    o << "    GemvParams p{};\n";
    for (size_t i = 0; i < g.parts.size(); ++i) {
      const GemvPart& part = g.parts[i];
      o << "    p.parts[" << i << "] = {" << ptr(part.weight) << ", " << f32_ptr(part.y) << ", " << f32_ptr(part.bias)
        << ", " << f32_ptr(part.residual) << ", " << part.rows << "};\n";
    }
    o << "    p.n_parts = " << g.parts.size() << ";\n";
    o << "    p.k = " << g.k << ";\n";
    if (int8) {
      o << "    p.x_qs = " << qs(g.x_q8) << ";\n";
      o << "    p.x_d = " << qd(g.x_q8) << ";\n";
      if (two_words) o << "    p.x_lo = " << ptr(g.x_q8) << ".lo;\n";
    } else {
      o << "    p.x = " << f32_ptr(g.x) << ";\n";
    }
    o << "    p.split_k = " << g.split_k << ";\n";
    if (g.residual_early) o << "    p.residual_early = true;  // loaded before the wait\n";
    const bool argmax = !g.argmax_key.empty();  // gemv_argmax: the blocks fold the greedy winner
    if (argmax) {  // verify_schedule refused any other fold: one matrix, the register kernel or the row loop
      LANEC_ASSERT(!g.staged && !g.swiglu && g.parts.size() == 1, "launch " + l.name + ": an argmax fold with no kernel");
      o << "    p.argmax_best = " << key_ptr(g.argmax_key) << ";\n";
    }
    const std::string argmax_arg = argmax ? ", true" : "";
    // kernels/gemv.cuh's Activation enumerators carry the numerics' names.
    if (g.staged) {  // staged_weights: kernels/gemv_staged.cuh
      launch_call("launch_gemv_staged<Activation::" + std::string(gemv_numerics_name(g.numerics)) + ", " +
                  std::to_string(g.rows_per_warp) + ">");
      return;
    }
    if (g.row_loop_chunks > 0) {  // row_loop: kernels/gemv.cuh
      launch_call("launch_gemv_row_loop<" + weight_format(g.format) + ", Activation::" +
                  gemv_numerics_name(g.numerics) + ", " + std::to_string(g.row_loop_chunks) + argmax_arg + ">");
      return;
    }
    // load_ahead: launch_gemv's last template argument, after Argmax's
    // (verify_schedule refused the two together).
    const std::string tail = g.load_ahead ? ", false, true" : argmax_arg;
    launch_call("launch_gemv<" + weight_format(g.format) + ", Activation::" + gemv_numerics_name(g.numerics) +
                ", " + std::to_string(g.rows_per_warp) + ", " + (g.swiglu ? "true" : "false") + tail + ">");
  }

  void emit(const Launch& l, const RopeLaunch& r) {
    auto& o = out_;
    o << "    RopeParams p{};\n";
    std::string cache_type;  // the template's cache precision, when the launch stores cache rows
    auto note_cache = [&](const std::string& cache) {
      if (cache.empty()) return;
      const std::string prec = cache_precision(buf(cache), l.name);
      if (!cache_type.empty() && prec != cache_type)
        throw Error("launch " + l.name + ": its caches differ in precision (" + cache_type + ", " + prec + ")");
      cache_type = prec;
    };
    for (size_t i = 0; i < r.parts.size(); ++i) {
      const RopePart& part = r.parts[i];
      note_cache(part.cache);
      o << "    p.parts[" << i << "] = {" << f32_ptr(part.x) << ", " << f32_ptr(part.norm_weight) << ", " << part.n_head
        << ", " << ptr(part.cache) << ", " << (part.cache_only ? "true" : "false") << "};";
      if (part.cache_only) o << "  // rotated rows go only to the cache: no one reads " << part.x << " again";
      o << "\n";
    }
    o << "    p.n_parts = " << r.parts.size() << ";\n";
    o << "    p.pos = " << ptr(r.pos) << ";\n";
    o << "    p.head_dim = " << r.head_dim << ";\n";
    o << "    p.rope_dims = " << r.rope_dims << ";\n";
    o << "    p.theta_base = " << float_literal(r.theta_base) << ";\n";
    o << "    p.eps = " << float_literal(r.eps) << ";\n";
    if (!r.v.empty()) {
      note_cache(r.v_cache);
      o << "    p.v = " << f32_ptr(r.v) << ";\n";
      o << "    p.v_cache = " << ptr(r.v_cache) << ";\n";
      o << "    p.n_v_head = " << r.n_v_head << ";\n";
    }
    if (r.n_ctx > 0) o << "    p.n_ctx = " << r.n_ctx << ";\n";
    if (l.early_trigger && r.early_trigger_rows > 0)
      o << "    p.early_trigger_rows = " << r.early_trigger_rows << ";  // early trigger below this position only\n";
    // early_trigger: the third template argument, after the cache precision.
    const std::string cache_arg = !cache_type.empty() ? ", " + cache_type
                                  : l.early_trigger   ? std::string(", CachePrecision::f32")
                                                      : std::string();
    launch_call(std::string("launch_rope<") + (r.neox ? "RopeMode::neox" : "RopeMode::norm") + cache_arg +
                (l.early_trigger ? ", true" : "") + ">");
  }

  void emit(const Launch& l, const KvWriteLaunch& k) {
    if (k.k.empty() && k.v.empty()) throw Error("launch " + l.name + ": a cache write with neither K nor V");
    // The kernel stores K and V together. A launch with one of them (rule
    // row_write held) passes that one as both: the second store repeats the
    // first (same value, same address, same thread), so nothing else changes.
    const std::string src_k = k.k.empty() ? k.v : k.k, src_v = k.v.empty() ? k.k : k.v;
    const std::string cache_k = k.k.empty() ? k.v_cache : k.k_cache, cache_v = k.v.empty() ? k.k_cache : k.v_cache;
    const std::string prec = cache_precision(buf(cache_k), l.name);
    LANEC_ASSERT(buf(cache_v).type == buf(cache_k).type, "K and V caches differ in precision");
    auto& o = out_;
    o << "    KvWriteParams p{};\n";
    if (k.k.empty() || k.v.empty())
      o << "    // " << (k.k.empty() ? "V" : "K") << " only: passed as both K and V (the kernel stores both)\n";
    o << "    p.k = " << f32_ptr(src_k) << ";\n";
    o << "    p.v = " << f32_ptr(src_v) << ";\n";
    o << "    p.k_cache = " << ptr(cache_k) << ";\n";
    o << "    p.v_cache = " << ptr(cache_v) << ";\n";
    o << "    p.pos = " << ptr(k.pos) << ";\n";
    o << "    p.n_kv_head = " << k.n_kv_head << ";\n";
    o << "    p.head_dim = " << k.head_dim << ";\n";
    o << "    p.n_ctx = " << k.n_ctx << ";\n";
    launch_call("launch_kv_write<" + prec + ">");
  }

  void emit(const Launch& l, const AttentionLaunch& a) {
    if (a.head_dim % 32 != 0 || a.head_dim > 256)
      throw Error("launch " + l.name + ": head_dim " + std::to_string(a.head_dim) +
                  " is not supported by kernels/attention.cuh (a multiple of 32, at most 256)");
    const std::string prec = cache_precision(buf(a.k_cache), l.name);
    auto& o = out_;
    o << "    AttentionParams p{};\n";
    o << "    p.q = " << f32_ptr(a.q) << ";\n";
    o << "    p.k_cache = " << ptr(a.k_cache) << ";\n";
    o << "    p.v_cache = " << ptr(a.v_cache) << ";\n";
    o << "    p.out = " << f32_ptr(a.out) << ";\n";
    o << "    p.part_acc = " << (a.n_split > 1 ? f32_ptr(a.part_acc) : "nullptr") << ";\n";
    o << "    p.part_ml = " << (a.n_split > 1 ? f32_ptr(a.part_ml) : "nullptr") << ";\n";
    o << "    p.done = " << (a.n_split > 1 ? ptr(a.done) : "nullptr") << ";\n";
    if (!a.out_q8.empty()) int8_outputs(a.out_q8);
    o << "    p.pos = " << ptr(a.pos) << ";\n";
    o << "    p.scale = " << float_literal(a.scale) << ";\n";
    o << "    p.n_head = " << a.n_head << ";\n";
    o << "    p.n_kv_head = " << a.n_kv_head << ";\n";
    o << "    p.n_ctx = " << a.n_ctx << ";\n";
    // Where more than one cluster of splits can be in use, long-context steps
    // merge the clusters in a launch of their own (kernels/attention.cuh),
    // and short-context steps launch only the one cluster they use.
    if (a.n_split > kernels::kAttnClusterSplits) {
      o << "    p.n_split = long_context ? " << a.n_split << " : lanec::runtime::short_context_splits(" << a.n_split
        << ");\n";
      o << "    p.merge_launch = long_context ? 1 : 0;\n";
    } else {
      o << "    p.n_split = " << a.n_split << ";\n";
    }
    auto call = [&](int heads_per_block) {
      return "launch_attention<" + std::to_string(a.head_dim) + ", " + prec + ", " + std::to_string(heads_per_block) + ">";
    };
    if (a.short_heads_per_block == a.heads_per_block) {
      launch_call(call(a.heads_per_block));
      return;
    }
    // The short-context form serves fewer query heads a block (lib/plan/size.h).
    o << "    if (long_context)\n" << launch_statement(call(a.heads_per_block), "      ");
    o << "    else\n" << launch_statement(call(a.short_heads_per_block), "      ") << "  }\n";
  }

  void emit(const Launch& l, const ElementwiseLaunch& e) {
    auto& o = out_;
    if (!e.out_q8.empty()) {  // a SwiGLU with its int8 form: a quantize launch forming silu(gate) * up
      LANEC_ASSERT(l.kind == LaunchKind::swiglu, l.name + ": only a SwiGLU launch writes an int8 form");
      o << "    QuantizeParams p{};\n";
      o << "    p.x = " << f32_ptr(e.a) << ";\n";
      o << "    p.up = " << f32_ptr(e.b) << ";\n";
      o << "    p.out = " << f32_ptr(e.out) << ";\n";
      int8_outputs(e.out_q8);
      o << "    p.n = " << e.n << ";\n";
      launch_call(l.early_trigger ? "launch_quantize_q8<true, true>" : "launch_quantize_q8<true>");
      return;
    }
    o << "    ElementwiseParams p{};\n";
    o << "    p.a = " << f32_ptr(e.a) << ";\n";
    o << "    p.b = " << f32_ptr(e.b) << ";\n";
    o << "    p.out = " << f32_ptr(e.out) << ";\n";
    o << "    p.n = " << e.n << ";\n";
    launch_call(std::string("launch_elementwise<") +
                (l.kind == LaunchKind::swiglu ? "ElementwiseOp::swiglu" : "ElementwiseOp::add") + ">");
  }

  void emit(const Launch& l, const FfnLaunch& f) {
    if (buf(f.x_q8).form != BufferForm::q8x2)
      throw Error("launch " + l.name + ": the fused FFN kernel reads two-word int8 activations, " + f.x_q8 +
                  " is not one");
    auto& o = out_;
    o << "    FfnParams p{};\n";
    o << "    p.gate = " << ptr(f.gate) << ";\n";
    o << "    p.up = " << ptr(f.up) << ";\n";
    o << "    p.down = " << ptr(f.down) << ";  // q8_0_cols\n";
    o << "    p.x_qs = " << qs(f.x_q8) << ";\n";
    o << "    p.x_lo = " << ptr(f.x_q8) << ".lo;\n";
    o << "    p.x_d = " << qd(f.x_q8) << ";\n";
    o << "    p.y = " << f32_ptr(f.y) << ";  // = " << f.residual << ": the sums are added in place\n";
    o << "    p.hidden = " << f.hidden << ";\n";
    o << "    p.ffn = " << f.ffn << ";\n";
    // The kernel's defaults stay unwritten (Ahead 1, Split 1).
    std::string args = std::to_string(f.chunks) + ", " + std::to_string(f.warps) + ", " +
                       std::to_string(f.min_blocks) + ", " + (f.preload_down ? "true" : "false");
    if (f.ahead != 1 || f.split != 1) args += ", " + std::to_string(f.ahead);
    if (f.split != 1) args += ", " + std::to_string(f.split);
    launch_call("launch_ffn<" + args + ">");
  }

  void emit(const Launch&, const ArgmaxLaunch& a) {
    auto& o = out_;
    o << "    ArgmaxParams p{};\n";
    if (a.key.empty()) o << "    p.logits = " << f32_ptr(a.logits) << ";\n";  // the finish form reads no logits
    o << "    p.token = " << ptr(a.token) << ";\n";
    o << "    p.pos = " << ptr(a.pos) << ";\n";
    o << "    p.ring = b.decode_ring;\n";
    o << "    p.ring_count = b.decode_ring_count;\n";
    o << "    p.n_vocab = " << a.n_vocab << ";\n";
    o << "    p.ring_capacity = " << kRingCapacity << ";\n";
    if (!a.key.empty()) {  // gemv_argmax: the finish form reads the logits GEMV's key
      o << "    p.best = " << key_ptr(a.key) << ";\n";
      launch_call("launch_argmax");
      return;
    }
    o << "    p.n_blocks = " << a.n_blocks << ";\n";
    o << "    p.block_value = " << f32_ptr(a.block_value) << ";\n";
    o << "    p.block_index = " << ptr(a.block_index) << ";\n";
    o << "    p.done = " << ptr(a.done) << ";\n";
    launch_call("launch_argmax");
  }

  void launch_table() {
    auto& o = out_;
    o << "// step()'s launches for --profile: name, kind, ops covered (rules), and the bytes each moves as\n";
    o << "// the planner sizes its buffers: weights read, activations read + written (cache rows written),\n";
    o << "// KV cache bytes read per cached position (attention reads positions 0..pos).\n";
    o << "constexpr lanec::runtime::LaunchInfo kLaunches[] = {\n";
    for (size_t i = 0; i < s_.launches.size(); ++i) {
      const Launch& l = s_.launches[i];
      const LaunchBytes bytes = launch_bytes(s_, l);
      o << "    {" << c_string(l.name) << ", " << c_string(launch_kind_name(l.kind)) << ", " << c_string(ops_short(l))
        << ", " << bytes.weights << "u, " << bytes.activations << "u, " << bytes.cache_per_position << "u},  // " << i
        << "\n";
    }
    o << "};\n\n";
  }

  void step() {
    auto& o = out_;
    o << "// ---- one decode step: " << s_.launches.size()
      << " launches, captured once as a CUDA graph and replayed per token ----\n";
    o << "// --profile runs it outside the graph with a profiler, which marks the end of launch i.\n";
    o << "// long_context: the form for lengths where attention can merge several clusters of splits,\n";
    o << "// captured as a second graph (long_context_from in kernels/runtime/program.cuh).\n";
    o << "void step(cudaStream_t stream, lanec::runtime::LaunchProfiler* prof, bool long_context) {\n";
    if (max_attention_splits() <= kernels::kAttnClusterSplits) o << "  (void)long_context;  // one graph serves every length\n";
    int layer = -2;
    for (size_t i = 0; i < s_.launches.size(); ++i) {
      const Launch& l = s_.launches[i];
      if (l.layer != layer) {
        layer = l.layer;
        if (layer >= 0)
          o << "  // ---- layer " << layer << "\n";
        else
          o << "  // ---- " << (&l == &s_.launches.front() ? "input" : "output") << "\n";
      }
      o << "  {  // " << ops_comment(l) << "\n";
      std::visit([&](const auto& params) { emit(l, params); }, l.params);
      o << "  if (prof) prof->mark(stream, " << i << ");\n";
    }
    o << "}\n\n";
  }

  const ArgmaxLaunch& argmax() const {
    const ArgmaxLaunch* found = s_.find_argmax();
    if (found == nullptr) throw Error("the schedule has no argmax launch: the emitted program needs the greedy token");
    return *found;
  }

  // The most context splits of any attention launch (0 without attention).
  int max_attention_splits() const {
    int most = 0;
    for (const Launch& l : s_.launches)
      if (const auto* a = std::get_if<AttentionLaunch>(&l.params)) most = std::max(most, static_cast<int>(a->n_split));
    return most;
  }

  int64_t n_ctx() const {
    for (const Launch& l : s_.launches) {
      if (const auto* a = std::get_if<AttentionLaunch>(&l.params)) return a->n_ctx;
      if (const auto* k = std::get_if<KvWriteLaunch>(&l.params)) return k->n_ctx;
      if (const auto* r = std::get_if<RopeLaunch>(&l.params); r && r->n_ctx > 0) return r->n_ctx;
    }
    throw Error("the schedule has no attention launch: cannot tell the context length");
  }

  void program_spec() {
    auto& o = out_;
    const ArgmaxLaunch& a = argmax();
    o << "lanec::runtime::DecodeSlots bind(uint8_t* wbase, uint8_t* bbase) {\n";
    o << "  carve(wbase, bbase);\n";
    o << "  return {" << ptr(a.token) << ", " << ptr(a.pos) << ", " << f32_ptr(a.logits)
      << ", b.decode_ring, b.decode_ring_count};\n";
    o << "}\n\n";
    o << "constexpr lanec::runtime::ProgramSpec kProgram = {\n";
    o << "    " << c_string(s_.model_name) << ",  // model\n";
    o << "    " << c_string(s_.arch) << ",  // architecture\n";
    o << "    " << c_string(id_.fingerprint) << ",  // fingerprint\n";
    o << "    " << c_string(knobs_summary(s_.knobs)) << ",\n";
    o << "    " << s_.knobs.arch_number() << ",  // planned for sm_" << s_.knobs.arch_number() << "\n";
    o << "    kPlannedWeights, sizeof(kPlannedWeights) / sizeof(kPlannedWeights[0]), " << weight_bytes_ << "u,\n";
    o << "    kPlannedMetadata, sizeof(kPlannedMetadata) / sizeof(kPlannedMetadata[0]),\n";
    o << "    " << buffer_bytes_ << "u,  // buffer bytes\n";
    o << "    " << a.n_vocab << ",  // n_vocab\n";
    o << "    " << n_ctx() << ",  // n_ctx (KV cache rows)\n";
    o << "    " << kRingCapacity << ",  // decode ring capacity\n";
    o << "    bind,\n";
    o << "    step,\n";
    o << "    kLaunches, sizeof(kLaunches) / sizeof(kLaunches[0]),\n";
    o << "    " << max_attention_splits() << ",  // most attention splits\n";
    o << "};\n\n";
    o << "}  // namespace model\n\n";
    o << "int main(int argc, char** argv) { return lanec::runtime::run_program(argc, argv, model::kProgram); }\n";
  }

  const Schedule& s_;
  const Graph& g_;
  const ModelIdentity& id_;
  const EmitOptions& o_;
  std::ostringstream out_;
  std::map<std::string, std::string> ident_;   // buffer name -> "b.member" / "w.member"
  std::map<std::string, std::string> member_;  // buffer name -> member
  std::vector<Piece> weights_;
  std::vector<Piece> pieces_;
  std::vector<const Buffer*> views_;
  uint64_t weight_bytes_ = 0;
  uint64_t buffer_bytes_ = 0;
  uint64_t ring_offset_ = 0;
  uint64_t ring_count_offset_ = 0;
};

// FNV-1a 64.
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // field separator
    h *= 1099511628211ull;
  }
};

}  // namespace

ModelIdentity model_identity(const GgufFile& gguf) {
  ModelIdentity id;
  Fnv fnv;
  const std::string arch = gguf.get_string_or("general.architecture", "");
  const std::string prefix = arch + ".";
  for (const auto& [key, value] : gguf.metadata()) {
    const std::string text = gguf_value_summary(value, static_cast<size_t>(-1));
    fnv.add(key);
    fnv.add(text);
    if (key == "general.architecture" || (!arch.empty() && key.rfind(prefix, 0) == 0))
      id.checked_metadata.emplace_back(key, gguf_value_summary(value, 4096));
  }
  for (const GgufTensorInfo& t : gguf.tensors()) {
    fnv.add(t.name);
    fnv.add(ggml_type_name(t.type));
    for (uint64_t d : t.ne) fnv.add(std::to_string(d));
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, fnv.h);
  id.fingerprint = buf;
  return id;
}

const std::vector<std::string>& runtime_sources() {
  static const std::vector<std::string> sources = {
      "lib/common/error.cpp",         "lib/gguf/ggml_types.cpp",        "lib/gguf/gguf_file.cpp",
      "lib/gguf/gguf_value.cpp",      "lib/tokenizer/bpe_model.cpp",    "lib/tokenizer/byte_unicode.cpp",
      "lib/tokenizer/gguf_vocab.cpp", "lib/tokenizer/pre_tokenizer.cpp", "lib/tokenizer/spm_model.cpp",
      "lib/tokenizer/tokenizer.cpp"};
  return sources;
}

std::string nvcc_build_command(const std::string& src_dir, const std::string& arch, const std::string& cu_file,
                               const std::string& output) {
  std::string cmd = "nvcc -std=c++17 -O3 -arch=" + arch + " -I" + src_dir + " -o " + output + " " + cu_file;
  for (const std::string& s : runtime_sources()) cmd += " " + src_dir + "/" + s;
  return cmd + " -lpcre2-8";
}

std::string emit_program(const Schedule& schedule, const Graph& graph, const ModelIdentity& identity,
                         const EmitOptions& options) {
  return ProgramEmitter(schedule, graph, identity, options).run();
}

}  // namespace lanec
