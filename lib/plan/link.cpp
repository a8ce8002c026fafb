// The link stage (link.h): one launch per fused node, by node kind.
#include "lib/plan/link.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "lib/common/error.h"
#include "kernels/limits.h"
#include "lib/graph/text.h"

namespace lanec {
namespace {

[[noreturn]] void no_kernel(const Graph& g, size_t op_index, const std::string& why) {
  const Op& op = g.ops()[op_index];
  std::string out = op.outputs.empty() ? std::string("-") : g.tensor(op.outputs.front()).name;
  throw Error("no kernel for " + describe_op(g, op_index) + ": kind " + op_kind_name(op.kind) +
              ", output " + out + ": " + why);
}

// "_l03" suffix -> 3; "cache_k_l03" -> 3; otherwise -1.
int layer_of(const std::string& name) {
  size_t at = name.rfind("_l");
  if (at == std::string::npos || at + 2 >= name.size()) return -1;
  int value = 0;
  for (size_t i = at + 2; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    value = value * 10 + (name[i] - '0');
  }
  return value;
}

bool gemv_format_ok(GgmlType t) {
  return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::Q8_0;
}

int64_t gemv_k_multiple(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 4;
    case GgmlType::Q8_0: return 32;
    default: return 8;
  }
}

bool embed_format_ok(GgmlType t) {
  return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::Q8_0 ||
         t == GgmlType::Q4_0 || t == GgmlType::Q4_K || t == GgmlType::Q6_K;
}

class Linker {
 public:
  Linker(const FusedGraph& fused, const Knobs& knobs) : f_(fused), g_(fused.graph()), knobs_(knobs) {
    for (const Op& op : g_.ops())
      if (op.kind == OpKind::embed_get_rows) token_ = g_.tensor(op.inputs[1]).name;
    for (const Op& op : g_.ops())
      if (op.kind == OpKind::rope || op.kind == OpKind::kv_write)
        pos_ = g_.tensor(op.inputs[1]).name;
      else if (op.kind == OpKind::attention)
        pos_ = g_.tensor(op.inputs[3]).name;
  }

  LinkedPlan run() {
    for (const FusedNode& n : f_.nodes()) link_node(n);
    plan_packs();
    return std::move(plan_);
  }

 private:
  const std::string& name(TensorId t) const { return g_.tensor(t).name; }

  void emit(const FusedNode& n, LaunchKind kind, const std::string& primary, LaunchParams params) {
    Launch l;
    l.kind = kind;
    l.name = std::string(launch_kind_name(kind)) + "_" + primary;
    l.layer = layer_of(primary);
    l.ops = n.ops;
    l.rules = n.rules;
    l.params = std::move(params);
    plan_.launches.push_back(std::move(l));
  }

  void view(const std::string& tensor, const std::string& of, int64_t offset) {
    plan_.views.push_back({tensor, of, offset});
  }

  void link_node(const FusedNode& n) {
    switch (n.kind) {
      case NodeKind::single: return link_single(n, n.ops.front());
      case NodeKind::embed_norm: return link_embed(n, &f_.op(n.ops[1]));
      case NodeKind::add_norm: return link_add_norm(n);
      case NodeKind::gemv: return link_gemv(n);
      case NodeKind::rope: return link_rope(n);
      case NodeKind::kv_write: return link_kv_write(n);
      case NodeKind::ffn: return link_ffn(n);
      case NodeKind::view: {
        const Op& op = f_.op(n.ops.front());
        return view(name(op.outputs[0]), name(op.inputs[0]), op.get_int_or("offset", 0));
      }
      case NodeKind::join: {
        const Op& op = f_.op(n.ops.front());
        int64_t offset = 0;
        for (TensorId part : op.inputs) {
          view(name(part), name(op.outputs[0]), offset);
          offset += g_.tensor(part).numel();
        }
        return;
      }
    }
  }

  void link_single(const FusedNode& n, size_t index) {
    const Op& op = g_.ops()[index];
    switch (op.kind) {
      case OpKind::embed_get_rows: return link_embed(n, nullptr);
      case OpKind::rms_norm: {
        RmsNormLaunch p;
        p.x = name(op.inputs[0]);
        p.weight = name(op.inputs[1]);
        check_constant_weight(index, op.inputs[1]);
        p.out = name(op.outputs[0]);
        p.eps = op.get_float("eps");
        p.n = g_.tensor(op.inputs[0]).numel();
        check_norm_length(index, p.n);
        return emit(n, LaunchKind::rms_norm, p.out, p);
      }
      case OpKind::head_rms_norm:
      case OpKind::rope: return link_rope(n);
      case OpKind::matmul: return link_gemv(n);
      case OpKind::add:
      case OpKind::swiglu: {
        const Tensor& a = g_.tensor(op.inputs[0]);
        const Tensor& b = g_.tensor(op.inputs[1]);
        if (a.numel() != b.numel())
          no_kernel(g_, index, "the elementwise kernel takes two vectors of one length, got " +
                                   shape_to_string(a.shape) + " and " + shape_to_string(b.shape));
        ElementwiseLaunch p{a.name, b.name, name(op.outputs[0]), a.numel(), {}};
        return emit(n, op.kind == OpKind::add ? LaunchKind::add : LaunchKind::swiglu, p.out, p);
      }
      case OpKind::kv_write: return link_kv_write(n);
      case OpKind::attention: return link_attention(n, op, index);
      case OpKind::argmax: {
        ArgmaxLaunch p;
        p.logits = name(op.inputs[0]);
        p.out = name(op.outputs[0]);
        p.token = token_;
        p.pos = pos_;
        p.n_vocab = g_.tensor(op.inputs[0]).numel();
        return emit(n, LaunchKind::argmax, p.out, p);
      }
      case OpKind::reshape: return view(name(op.outputs[0]), name(op.inputs[0]), 0);
      case OpKind::slice:
        no_kernel(g_, index, "there is no copy kernel; slice_read reads contiguous slices in place"
                             " (held or declined here)");
      case OpKind::concat:
        no_kernel(g_, index, "there is no copy kernel; join_in_place writes the parts in place"
                             " (held or declined here)");
      default:
        no_kernel(g_, index, "no kernel family of kernels/ implements it yet");
    }
  }

  void link_embed(const FusedNode& n, const Op* norm) {
    const Op& op = f_.op(n.ops.front());
    const Tensor& table = g_.tensor(op.inputs[0]);
    if (!embed_format_ok(table.type))
      no_kernel(g_, n.ops.front(), std::string("the gather takes f32, f16, bf16, q8_0, q4_0, q4_k and "
                                               "q6_k tables, got ") + elem_type_name(table.type));
    EmbedLaunch p;
    p.table = table.name;
    p.format = table.type;
    p.token = name(op.inputs[1]);
    p.n_rows = table.shape[0];
    p.dim = table.cols();
    p.out = name(op.outputs[0]);
    if (norm) {
      p.out = name(norm->outputs[0]);
      p.norm_weight = name(norm->inputs[1]);
      p.eps = norm->get_float("eps");
    }
    emit(n, LaunchKind::embed, p.out, p);
  }

  void link_add_norm(const FusedNode& n) {
    const Op& add = f_.op(n.ops[0]);
    const Op& norm = f_.op(n.ops[1]);
    RmsNormLaunch p;
    p.x = name(add.inputs[0]);
    p.residual = name(add.inputs[1]);
    p.h_out = name(add.outputs[0]);
    p.weight = name(norm.inputs[1]);
    check_constant_weight(n.ops[1], norm.inputs[1]);
    p.out = name(norm.outputs[0]);
    p.eps = norm.get_float("eps");
    p.n = g_.tensor(add.outputs[0]).numel();
    check_norm_length(n.ops[1], p.n);
    emit(n, LaunchKind::rms_norm, p.out, p);
  }

  // kernels/rms_norm.cuh keeps the vector in the registers of each of its blocks.
  void check_norm_length(size_t index, int64_t n) const {
    if (n > kernels::kRmsNormMaxLength)
      no_kernel(g_, index, "the RMS norm kernel takes vectors of up to " + std::to_string(kernels::kRmsNormMaxLength) +
                               " elements (one block holds them in registers), got " + std::to_string(n));
  }

  // Norm weights load before the kernel waits on the previous launch
  // (kernels/common.cuh pdl_wait()): they must be model constants, never
  // something an earlier launch of the step writes.
  void check_constant_weight(size_t index, TensorId weight) const {
    if (g_.tensor(weight).role != Role::constant)
      no_kernel(g_, index, "the norm kernels read their weight before waiting on the previous launch, so it "
                           "must be a model constant; " + name(weight) + " is computed in the step");
  }

  void check_head_dim(size_t index, int64_t head_dim) const {
    if (head_dim > kernels::kRopeMaxHeadDim)
      no_kernel(g_, index, "the rope kernel takes head sizes up to " + std::to_string(kernels::kRopeMaxHeadDim) +
                               ", got " + std::to_string(head_dim));
  }

  void link_gemv(const FusedNode& n) {
    std::vector<size_t> matmuls;
    const Op* glu = nullptr;
    for (size_t i : n.ops) {
      if (f_.op(i).kind == OpKind::matmul) matmuls.push_back(i);
      if (f_.op(i).kind == OpKind::swiglu) glu = &f_.op(i);
    }
    LANEC_ASSERT(!matmuls.empty(), "gemv node without a matmul");
    GemvLaunch p;
    const Op& first = f_.op(matmuls.front());
    const Tensor& x = g_.tensor(first.inputs[0]);
    p.format = g_.tensor(first.inputs[1]).type;
    p.k = g_.tensor(first.inputs[1]).cols();
    for (size_t i : matmuls) {
      const Op& mm = f_.op(i);
      const Tensor& w = g_.tensor(mm.inputs[1]);
      if (!gemv_format_ok(w.type))
        no_kernel(g_, i, std::string("GEMV takes f32, f16, bf16 and q8_0 weights, got ") +
                             elem_type_name(w.type) + " (" + w.name + ")");
      if (w.cols() % gemv_k_multiple(w.type) != 0)
        no_kernel(g_, i, "GEMV over " + std::string(elem_type_name(w.type)) +
                             " weights needs k a multiple of " +
                             std::to_string(gemv_k_multiple(w.type)) + ", got " +
                             std::to_string(w.cols()));
      GemvPart part;
      part.weight = w.name;
      part.rows = w.numel() / w.cols();  // a rank-1 weight is one row
      part.y = name(mm.outputs[0]);
      for (size_t j : n.ops) {
        const Op& add = f_.op(j);
        if (add.kind != OpKind::add) continue;
        int side = add.inputs[0] == mm.outputs[0] ? 0 : add.inputs[1] == mm.outputs[0] ? 1 : -1;
        if (side < 0) continue;
        const Tensor& other = g_.tensor(add.inputs[static_cast<size_t>(1 - side)]);
        (other.role == Role::constant ? part.bias : part.residual) = other.name;
        part.y = name(add.outputs[0]);
      }
      p.parts.push_back(part);
    }
    if (glu) {
      LANEC_ASSERT(p.parts.size() == 2, "SwiGLU gemv node without exactly two parts");
      if (p.parts[0].y != name(glu->inputs[0])) std::swap(p.parts[0], p.parts[1]);
      p.parts[0].y = name(glu->outputs[0]);
      p.parts[1].y.clear();
      p.swiglu = true;
    }
    p.numerics = gemv_numerics(p.format, knobs_.activations);
    if (p.numerics != GemvNumerics::f32) {
      p.x_q8 = int8_form_of(x.name);
    } else {
      p.x = x.name;
    }
    if (!n.pack.empty())
      for (const GemvPart& part : p.parts) packed_[n.pack].push_back({part.y, part.rows});
    emit(n, LaunchKind::gemv, p.parts.front().y, p);
  }

  // ffn_fused: gate and up matmuls, the swiglu, the down matmul and its
  // residual add; the output is planned as a view of the residual, which
  // the launch adds its sums to.
  void link_ffn(const FusedNode& n) {
    const Op* glu = nullptr;
    const Op* add = nullptr;
    std::vector<const Op*> matmuls;
    for (size_t i : n.ops) {
      const Op& op = f_.op(i);
      if (op.kind == OpKind::swiglu) glu = &op;
      if (op.kind == OpKind::add) add = &op;
      if (op.kind == OpKind::matmul) matmuls.push_back(&op);
    }
    LANEC_ASSERT(glu && add && matmuls.size() == 3, "ffn node without its five ops");
    const Op* gate = nullptr;
    const Op* up = nullptr;
    const Op* down = nullptr;
    for (const Op* mm : matmuls)
      (mm->outputs[0] == glu->inputs[0] ? gate : mm->outputs[0] == glu->inputs[1] ? up : down) = mm;
    LANEC_ASSERT(gate && up && down, "ffn node without its gate, up and down matmuls");
    FfnLaunch p;
    p.gate = name(gate->inputs[1]);
    p.up = name(up->inputs[1]);
    p.down = name(down->inputs[1]);
    p.x_q8 = int8_form_of(name(gate->inputs[0]));
    p.residual = name(add->inputs[add->inputs[0] == down->outputs[0] ? 1 : 0]);
    p.y = name(add->outputs[0]);
    const Tensor& wg = g_.tensor(gate->inputs[1]);
    p.hidden = wg.cols();
    p.ffn = wg.numel() / wg.cols();
    view(p.y, p.residual, 0);
    emit(n, LaunchKind::ffn, p.y, p);
  }

  // The tensors sharing x's storage before the rope: x and what it views.
  std::vector<TensorId> alias_chain(TensorId x) const {
    std::vector<TensorId> chain{x};
    for (int depth = 0; depth < 8; ++depth) {
      std::optional<int> p = f_.producer(chain.back());
      if (!p) break;
      const FusedNode& maker = f_.node(*p);
      if (maker.kind != NodeKind::single || f_.only_op(maker).kind != OpKind::reshape) break;
      chain.push_back(f_.only_op(maker).inputs[0]);
    }
    return chain;
  }

  void check_in_place(const FusedNode& n, size_t rope_index, TensorId x) {
    size_t here = *f_.position(n.id);
    std::vector<TensorId> chain = alias_chain(x);
    for (TensorId t : chain) {
      if (f_.is_graph_output(t))
        no_kernel(g_, rope_index, "RoPE rotates in place, but " + name(t) + " is a graph output");
      for (int r : f_.readers(t)) {
        if (r == n.id || *f_.position(r) < here) continue;
        const FusedNode& reader = f_.node(r);
        bool chain_view = reader.kind == NodeKind::single &&
                          f_.only_op(reader).kind == OpKind::reshape &&
                          std::find(chain.begin(), chain.end(), f_.only_op(reader).outputs[0]) != chain.end();
        if (!chain_view)
          no_kernel(g_, rope_index, "RoPE rotates in place, but " + name(t) + " is read again by " +
                                        f_.describe(r));
      }
    }
  }

  void link_rope(const FusedNode& n) {
    RopeLaunch p;
    std::map<TensorId, size_t> part_of_rotated;  // rope output -> its part
    for (size_t i : n.ops) {
      const Op& op = f_.op(i);
      if (op.kind == OpKind::kv_write) continue;  // after the parts: link_rope_cache_writes
      if (op.kind == OpKind::head_rms_norm) {
        // A norm whose rope is in this node is that part's prologue.
        bool fused = false;
        for (size_t j : n.ops)
          fused = fused || (f_.op(j).kind == OpKind::rope && f_.op(j).inputs[0] == op.outputs[0]);
        if (fused) continue;
        // A head norm alone: a rope launch that rotates nothing (rope_dims 0).
        RopePart part;
        part.x = name(op.inputs[0]);
        part.norm_weight = name(op.inputs[1]);
        check_constant_weight(i, op.inputs[1]);
        part.n_head = g_.tensor(op.inputs[0]).shape[0];
        check_in_place(n, i, op.inputs[0]);
        view(name(op.outputs[0]), part.x, 0);
        p.head_dim = g_.tensor(op.inputs[0]).cols();
        check_head_dim(i, p.head_dim);
        p.eps = op.get_float("eps");
        p.pos = pos_;
        p.parts.push_back(part);
        continue;
      }
      if (op.kind != OpKind::rope) no_kernel(g_, i, "unexpected op in a rope node");
      if (op.inputs.size() == 3)
        no_kernel(g_, i, "the rope kernel has no per-frequency factors (" + name(op.inputs[2]) + ")");
      for (const char* key : {"freq_scale", "attn_factor"})
        if (op.has_attr(key) && op.get_float(key) != 1.0)
          no_kernel(g_, i, std::string("the rope kernel has no '") + key + "' (got " +
                               format_float(op.get_float(key)) + ")");
      if (op.has_attr("ext_factor") && op.get_float("ext_factor") != 0.0)
        no_kernel(g_, i, "the rope kernel has no YaRN extrapolation ('ext_factor')");
      TensorId x = op.inputs[0];
      RopePart part;
      // A head norm feeding this rope inside the node: rotate its input.
      std::optional<int> maker = f_.producer(x);
      if (maker && *maker == n.id) {
        const Op* norm = nullptr;
        for (size_t j : n.ops)
          if (f_.op(j).kind == OpKind::head_rms_norm && f_.op(j).outputs[0] == x) norm = &f_.op(j);
        LANEC_ASSERT(norm != nullptr, "rope node input made inside by a non-norm");
        part.norm_weight = name(norm->inputs[1]);
        check_constant_weight(i, norm->inputs[1]);
        p.eps = norm->get_float("eps");
        x = norm->inputs[0];
      }
      check_in_place(n, i, x);
      part.x = name(x);
      part.n_head = g_.tensor(x).shape[0];
      view(name(op.outputs[0]), part.x, 0);
      part_of_rotated[op.outputs[0]] = p.parts.size();
      p.parts.push_back(part);
      p.pos = name(op.inputs[1]);
      p.head_dim = g_.tensor(x).cols();
      check_head_dim(i, p.head_dim);
      p.rope_dims = op.get_int("n_rot");
      p.neox = op.get_string("mode") == "neox";
      p.theta_base = op.get_float("freq_base");
    }
    LANEC_ASSERT(!p.parts.empty(), "rope node without parts");
    link_rope_cache_writes(n, part_of_rotated, p);
    emit(n, LaunchKind::rope, p.parts.front().x, p);
  }

  // row_write joined this node's cache writes: a rotated row goes into its
  // part's cache, any other row (V) is copied as it is.
  void link_rope_cache_writes(const FusedNode& n, const std::map<TensorId, size_t>& part_of_rotated, RopeLaunch& p) {
    for (size_t i : n.ops) {
      const Op& op = f_.op(i);
      if (op.kind != OpKind::kv_write) continue;
      const Tensor& cache = g_.tensor(op.outputs[0]);
      const Tensor& row = g_.tensor(op.inputs[0]);
      if (cache.shape.size() != 3)
        no_kernel(g_, i, "the cache write takes [n_ctx, n_kv_head, head_dim] caches, got " +
                             shape_to_string(cache.shape));
      if (cache.shape[2] != p.head_dim || row.numel() != cache.shape[1] * cache.shape[2])
        no_kernel(g_, i, "the RoPE launch stores rows of its head size " + std::to_string(p.head_dim) + ", got " +
                             shape_to_string(row.shape) + " into " + shape_to_string(cache.shape));
      if (name(op.inputs[1]) != p.pos) no_kernel(g_, i, "the RoPE launch stores rows at its own position only");
      if (p.n_ctx != 0 && p.n_ctx != cache.shape[0])
        no_kernel(g_, i, "the caches of one RoPE launch must have one length");
      p.n_ctx = cache.shape[0];
      auto rotated = part_of_rotated.find(op.inputs[0]);
      if (rotated != part_of_rotated.end()) {
        RopePart& part = p.parts[rotated->second];
        if (!part.cache.empty()) no_kernel(g_, i, "a RoPE part stores its rows into one cache");
        part.cache = cache.name;
        part.cache_only = only_the_cache_reads(op.inputs[0]);
        continue;
      }
      if (!p.v.empty()) no_kernel(g_, i, "a RoPE launch copies one set of unrotated rows");
      p.v = row.name;
      p.v_cache = cache.name;
      p.n_v_head = cache.shape[1];
    }
  }

  // The rotated rows are read by no one but this node's cache write: nothing
  // outside the node reads them or a view of them, and they are no graph
  // output. check_in_place already proved that the rotated input (and what
  // it views) is not read after the launch, so the launch may leave x
  // unrotated and store the rows only into the cache.
  bool only_the_cache_reads(TensorId rotated) const {
    return f_.readers(rotated).empty() && !f_.is_graph_output(rotated);
  }

  // Which cache of an attention a state is: "k", "v" or "".
  std::string cache_role(TensorId cache) const {
    for (const Op& op : g_.ops()) {
      if (op.kind != OpKind::attention) continue;
      if (op.inputs[1] == cache) return "k";
      if (op.inputs[2] == cache) return "v";
    }
    return "";
  }

  void link_kv_write(const FusedNode& n) {
    KvWriteLaunch p;
    for (size_t i : n.ops) {
      const Op& op = f_.op(i);
      const Tensor& cache = g_.tensor(op.outputs[0]);
      if (cache.shape.size() != 3)
        no_kernel(g_, i, "the cache write takes [n_ctx, n_kv_head, head_dim] caches, got " +
                             shape_to_string(cache.shape));
      bool is_v = cache_role(op.outputs[0]) == "v";
      bool slot_taken = is_v ? !p.v.empty() : !p.k.empty();
      if (slot_taken) is_v = !is_v;
      (is_v ? p.v : p.k) = name(op.inputs[0]);
      (is_v ? p.v_cache : p.k_cache) = cache.name;
      p.pos = name(op.inputs[1]);
      p.n_ctx = cache.shape[0];
      p.n_kv_head = cache.shape[1];
      p.head_dim = cache.shape[2];
    }
    emit(n, LaunchKind::kv_write, p.k_cache.empty() ? p.v_cache : p.k_cache, p);
  }

  void link_attention(const FusedNode& n, const Op& op, size_t index) {
    const Tensor& q = g_.tensor(op.inputs[0]);
    const Tensor& kc = g_.tensor(op.inputs[1]);
    const Tensor& vc = g_.tensor(op.inputs[2]);
    if (op.inputs.size() == 5) no_kernel(g_, index, "the attention kernel has no attention sinks");
    if (op.get_int_or("window", 0) != 0)
      no_kernel(g_, index, "the attention kernel has no sliding window");
    int64_t hd = q.cols();
    if (vc.cols() != hd)
      no_kernel(g_, index, "the attention kernel needs equal key and value head sizes, got " +
                               std::to_string(hd) + " and " + std::to_string(vc.cols()));
    if (hd % 32 != 0 || hd > kernels::kAttnMaxHeadDim)
      no_kernel(g_, index, "the attention kernel takes head sizes that are multiples of 32 up to " +
                               std::to_string(kernels::kAttnMaxHeadDim) + " (one warp lane per 32 elements), got " +
                               std::to_string(hd));
    AttentionLaunch p;
    p.q = q.name;
    p.k_cache = kc.name;
    p.v_cache = vc.name;
    p.out = name(op.outputs[0]);
    p.pos = name(op.inputs[3]);
    p.scale = op.get_float("scale");
    p.n_head = q.shape[0];
    p.n_kv_head = kc.shape[1];
    p.head_dim = hd;
    p.n_ctx = kc.shape[0];
    emit(n, LaunchKind::attention, p.out, p);
  }

  // The name of the int8 form of `tensor`, declared once.
  std::string int8_form_of(const std::string& tensor) {
    const std::string form = tensor + ".q8";
    for (const Int8FormDecl& d : plan_.int8_forms)
      if (d.name == form) return form;
    plan_.int8_forms.push_back({form, tensor});
    return form;
  }

  void plan_packs() {
    for (const auto& [pack, parts] : packed_) {
      int64_t offset = 0;
      for (const auto& [tensor, rows] : parts) {
        view(tensor, pack, offset);
        offset += rows;
      }
      plan_.packs.push_back({pack, offset});
    }
  }

  const FusedGraph& f_;
  const Graph& g_;
  const Knobs& knobs_;
  std::string token_ = "token";
  std::string pos_ = "pos";
  LinkedPlan plan_;
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> packed_;
};

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

LinkedPlan link_launches(const FusedGraph& fused, const Knobs& knobs) {
  return Linker(fused, knobs).run();
}

namespace {

struct ParamText {
  std::string s;
  void operator()(const EmbedLaunch& l) {
    s = std::string("format=") + elem_type_name(l.format) + " dim=" + std::to_string(l.dim) +
        (l.norm_weight.empty() ? "" : " norm eps=" + format_float(l.eps));
  }
  void operator()(const RmsNormLaunch& l) {
    s = "n=" + std::to_string(l.n) + " eps=" + format_float(l.eps) +
        (l.residual.empty() ? "" : " +residual") + (l.out_q8.empty() ? "" : " +int8") +
        (l.out.empty() ? " int8-only" : "");
  }
  void operator()(const QuantizeLaunch& l) { s = "n=" + std::to_string(l.n); }
  void operator()(const GemvLaunch& l) {
    s = std::string("format=") + elem_type_name(l.format) + " numerics=" +
        gemv_numerics_name(l.numerics) + " k=" + std::to_string(l.k) + " rows=";
    for (size_t i = 0; i < l.parts.size(); ++i)
      s += (i ? "+" : "") + std::to_string(l.parts[i].rows) +
           (l.parts[i].bias.empty() ? "" : "(bias)") + (l.parts[i].residual.empty() ? "" : "(residual)");
    if (l.swiglu) s += " swiglu";
    s += " rows_per_warp=" + std::to_string(l.rows_per_warp) + " split_k=" + std::to_string(l.split_k);
    if (l.staged) s += " staged";
    if (l.row_loop_chunks > 0) s += " row_loop=" + std::to_string(l.row_loop_chunks);
    if (l.load_ahead) s += " load_ahead";
    if (l.residual_early) s += " residual_early";
    if (!l.argmax_key.empty()) s += " +argmax";
  }
  void operator()(const RopeLaunch& l) {
    s = std::string(l.neox ? "neox" : "norm") + " head_dim=" + std::to_string(l.head_dim) +
        " rope_dims=" + std::to_string(l.rope_dims) + " theta=" + format_float(l.theta_base) +
        " heads=";
    for (size_t i = 0; i < l.parts.size(); ++i)
      s += (i ? "+" : "") + std::to_string(l.parts[i].n_head) +
           (l.parts[i].norm_weight.empty() ? "" : "(norm)") +
           (l.parts[i].cache.empty() ? "" : l.parts[i].cache_only ? "(cache only)" : "(cache)");
    if (!l.v.empty()) s += " v_rows=" + std::to_string(l.n_v_head);
    if (l.n_ctx > 0) s += " n_ctx=" + std::to_string(l.n_ctx);
    if (l.early_trigger_rows > 0) s += " early_trigger_rows=" + std::to_string(l.early_trigger_rows);
  }
  void operator()(const KvWriteLaunch& l) {
    s = "n_kv_head=" + std::to_string(l.n_kv_head) + " head_dim=" + std::to_string(l.head_dim) +
        " n_ctx=" + std::to_string(l.n_ctx);
  }
  void operator()(const AttentionLaunch& l) {
    s = "n_head=" + std::to_string(l.n_head) + " n_kv_head=" + std::to_string(l.n_kv_head) +
        " head_dim=" + std::to_string(l.head_dim) + " n_ctx=" + std::to_string(l.n_ctx) +
        " n_split=" + std::to_string(l.n_split) + " heads_per_block=" + std::to_string(l.heads_per_block) +
        (l.short_heads_per_block == l.heads_per_block ? ""
                                                      : " short_heads_per_block=" + std::to_string(l.short_heads_per_block)) +
        (l.out_q8.empty() ? "" : " +int8") + (l.out.empty() ? " int8-only" : "");
  }
  void operator()(const ElementwiseLaunch& l) {
    s = "n=" + std::to_string(l.n) + (l.out_q8.empty() ? "" : " +int8") +
        (l.out.empty() && !l.out_q8.empty() ? " int8-only" : "");
  }
  void operator()(const FfnLaunch& l) {
    s = "hidden=" + std::to_string(l.hidden) + " ffn=" + std::to_string(l.ffn) + " chunks=" +
        std::to_string(l.chunks) + " warps=" + std::to_string(l.warps) + (l.preload_down ? " preload_down" : "") +
        (l.min_blocks == 1 ? "" : " min_blocks=" + std::to_string(l.min_blocks)) +
        (l.ahead == 1 ? "" : " ahead=" + std::to_string(l.ahead)) +
        (l.split == 1 ? "" : " split=" + std::to_string(l.split));
  }
  void operator()(const ArgmaxLaunch& l) {
    s = "n_vocab=" + std::to_string(l.n_vocab) +
        (l.key.empty() ? " n_blocks=" + std::to_string(l.n_blocks) : std::string(" finish"));
  }
};

}  // namespace

std::string print_launch(const Launch& l) {
  ParamText text;
  std::visit(text, l.params);
  std::string ops;
  for (size_t op : l.ops) ops += (ops.empty() ? "" : ",") + std::to_string(op);
  std::string s = l.name + " " + launch_kind_name(l.kind) + " ops=[" + ops + "]";
  if (!l.rules.empty()) s += " rules=[" + join_names(l.rules) + "]";
  s += " " + text.s + (l.early_trigger ? " early_trigger" : "") + " reads=[" + join_names(l.reads()) + "] writes=[" + join_names(l.writes()) + "]";
  return s;
}

std::string print_launches(const std::vector<Launch>& launches) {
  std::string out;
  for (const Launch& l : launches) out += print_launch(l) + "\n";
  return out;
}

}  // namespace lanec
