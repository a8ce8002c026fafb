// The size stage (size.h).
#include "lib/plan/size.h"

#include <algorithm>
#include <map>
#include <set>

#include "kernels/limits.h"
#include "lib/common/error.h"
#include "rules/gemv_argmax.h"
#include "rules/row_loop.h"
#include "rules/load_ahead.h"
#include "rules/rows_a_warp.h"
#include "rules/staged_weights.h"

namespace lanec {
namespace {

constexpr int64_t kQ8Block = 32;
// The kernels' launch geometry (kernels/limits.h).
constexpr int kGemvMaxSplit = kernels::kGemvMaxWarps;
constexpr int64_t kKeysPerSplit = kernels::kAttnMinKeysPerSplit;  // a split below this many keys costs more than it saves
constexpr int kMaxAttnSplits = kernels::kAttnMaxSplits;
// The splits an attention plans (7 clusters of 8): measured on the H200
// against 40, 48 and 64 at 4k-8k keys (docs/performance.md).
constexpr int64_t kPlannedAttnSplits = 56;
using kernels::kArgmaxMinPerBlock;
using kernels::kAttnClusterMaxGroup;  // the attention cluster merge's layout
using kernels::kAttnClusterSplits;
using kernels::kAttnWarps;

class Sizer {
 public:
  Sizer(const Graph& g, const LinkedPlan& linked, const Knobs& knobs, const SizeRules& rules, RuleTally& tally)
      : g_(g), linked_(linked), knobs_(knobs), rules_(rules), tally_(tally) {
    for (const ViewDecl& v : linked.views) {
      LANEC_ASSERT(!views_.count(v.tensor), "tensor " + v.tensor + " planned as two views");
      views_[v.tensor] = v;
    }
    for (const PackDecl& p : linked.packs) packs_[p.name] = p.elements;
    for (const Int8FormDecl& d : linked.int8_forms) int8_forms_[d.name] = d.tensor;
  }

  SizedPlan run() {
    SizedPlan out;
    out.launches = linked_.launches;
    add_int8_forms(out.launches);
    for (const Launch& l : out.launches)
      if (const auto* a = std::get_if<AttentionLaunch>(&l.params)) {
        if (!a->out.empty()) attention_outputs_.insert(a->out);
        if (!a->out_q8.empty()) attention_outputs_.insert(a->out_q8);
      }
    for (Launch& l : out.launches) {
      choose_parameters(l);
      if (const auto* f = std::get_if<FfnLaunch>(&l.params)) cols_weights_.insert(f->down);
    }
    settle_short_context_heads(out.launches);
    if (rules_.gemv_argmax) fold_argmax(out.launches);
    out.buffers = make_buffers(out.launches);
    return out;
  }

 private:
  // The storage a tensor's buffer resolves to.
  std::string root_of(std::string name) const {
    for (int depth = 0; depth < 16; ++depth) {
      auto it = views_.find(name);
      if (it == views_.end()) return name;
      name = it->second.of;
    }
    LANEC_ASSERT(false, "view chain too deep at " + name);
    return name;
  }

  bool f32_form_read(const std::vector<Launch>& launches, const std::string& tensor) const {
    std::optional<TensorId> id = g_.find(tensor);
    if (id) {
      const auto& outs = g_.outputs();
      if (std::find(outs.begin(), outs.end(), *id) != outs.end()) return true;
    }
    for (const Launch& l : launches)
      for (const std::string& r : l.reads()) {
        if (r == tensor) return true;
        // A reader of a view of the tensor reads it too.
        std::string at = r;
        for (int depth = 0; depth < 16 && views_.count(at); ++depth) {
          at = views_.at(at).of;
          if (at == tensor) return true;
        }
      }
    return false;
  }

  // The f32 output and int8-form slots of a launch that can write its output's
  // int8 form itself (rms_norm, attention, SwiGLU), or nulls: the quantize
  // math runs on values it holds in registers.
  struct Int8Writer {
    std::string* out = nullptr;
    std::string* out_q8 = nullptr;
  };
  static Int8Writer int8_writer(Launch& l) {
    if (auto* norm = std::get_if<RmsNormLaunch>(&l.params)) return {&norm->out, &norm->out_q8};
    if (auto* attn = std::get_if<AttentionLaunch>(&l.params)) return {&attn->out, &attn->out_q8};
    if (auto* glu = std::get_if<ElementwiseLaunch>(&l.params); glu && l.kind == LaunchKind::swiglu)
      return {&glu->out, &glu->out_q8};
    return {};
  }

  // The tensor an int8 form buffer holds, or "" for any other buffer.
  std::string int8_form_tensor(const std::string& name) const {
    auto it = int8_forms_.find(name);
    return it == int8_forms_.end() ? "" : it->second;
  }

  void add_int8_forms(std::vector<Launch>& launches) {
    for (const Int8FormDecl& form : linked_.int8_forms) {
      const std::string& q8 = form.name;
      const std::string& tensor = form.tensor;
      int64_t n = g_.tensor(g_.id_of(tensor)).numel();
      if (n % kQ8Block != 0)
        throw Error("no kernel for the int8 form of " + tensor + ": int8 activations come in blocks "
                    "of 32, got " + std::to_string(n) + " elements");
      // The rms_norm, attention or SwiGLU that makes the tensor writes its
      // int8 form, and no f32 form when only the int8 form is read. A SwiGLU
      // launch is then a quantize launch with a SwiGLU input: one launch,
      // where a glu_pair GEMV needs a quantize after it.
      auto maker = std::find_if(launches.begin(), launches.end(), [&](Launch& l) {
        const Int8Writer w = int8_writer(l);
        return w.out != nullptr && *w.out == tensor;
      });
      if (maker != launches.end()) {
        const Int8Writer w = int8_writer(*maker);
        *w.out_q8 = q8;
        if (!f32_form_read(launches, tensor)) w.out->clear();
        continue;
      }
      // A quantize launch just before the first GEMV reading the int8 form.
      size_t first = 0;
      while (first < launches.size()) {
        const auto& r = launches[first].reads();
        if (std::find(r.begin(), r.end(), q8) != r.end()) break;
        ++first;
      }
      Launch quant;
      quant.kind = LaunchKind::quantize;
      quant.name = "quantize_" + tensor;
      quant.layer = launches[first].layer;
      quant.params = QuantizeLaunch{tensor, q8, n};
      launches.insert(launches.begin() + static_cast<std::ptrdiff_t>(first), quant);
    }
  }

  // What the launch-stage GEMV rules ask of every GEMV launch.
  GemvQuery gemv_query(const GemvLaunch& p, int64_t rows) const {
    GemvQuery q;
    q.sms = knobs_.chip.sms;
    q.format = p.format;
    q.int8_activations = p.numerics != GemvNumerics::f32;
    q.swiglu = p.swiglu;
    q.rows = rows;
    q.k = p.k;
    return q;
  }

  // A launch-stage rule's verdict on launch l: counted declined with its
  // reason, or fired (recorded on the launch). True when it fired.
  bool settle(const char* rule, Launch& l, const std::optional<std::string>& declined) {
    return settle_launch_rule(tally_, rule, l, declined);
  }

  // staged_weights: the staged kernel's split and rows a warp replace the
  // register GEMV's where the rule fires.
  void choose_staging(Launch& l, GemvLaunch& p, int64_t rows) {
    StagedWeightsQuery q{gemv_query(p, rows)};
    q.arch_number = knobs_.arch_number();
    q.smem_kib_per_block = knobs_.chip.smem_kib_per_block;
    q.reads_attention_output = attention_outputs_.count(q.int8_activations ? p.x_q8 : p.x) > 0;
    q.register_split_k = p.split_k;
    q.register_loads_ahead = register_form_loads_ahead(p, rows);
    const StagedWeightsChoice choice = choose_staged_weights(q);
    if (!settle("staged_weights", l, choice.declined)) return;
    p.staged = true;
    p.split_k = choice.split_k;
    p.rows_per_warp = choice.rows_per_warp;
  }

  RowLoopQuery row_loop_query(const GemvLaunch& p, int64_t rows) const {
    RowLoopQuery q{gemv_query(p, rows)};
    q.warps_per_sm = resident_warps_per_sm(knobs_.arch_number());
    q.staged = p.staged;
    q.n_parts = static_cast<int>(p.parts.size());
    q.rows_per_warp = p.rows_per_warp;
    q.split_k = p.split_k;
    return q;
  }

  LoadAheadQuery load_ahead_query(const GemvLaunch& p, int64_t rows) const {
    LoadAheadQuery q{gemv_query(p, rows)};
    q.two_word = p.numerics == GemvNumerics::int8x2;
    q.staged = p.staged;
    q.row_loop = p.row_loop_chunks > 0;
    q.rows_per_warp = p.rows_per_warp;
    q.split_k = p.split_k;
    return q;
  }

  // Whether load_ahead, unless held, would take p in the register kernel
  // (not staged), the row loop settled as it would be: staged_weights
  // declines there (rules/staged_weights.h).
  bool register_form_loads_ahead(const GemvLaunch& p, int64_t rows) const {
    if (!rules_.load_ahead) return false;
    GemvLaunch reg = p;
    reg.staged = false;
    if (rules_.row_loop) reg.row_loop_chunks = lanec::choose_row_loop(row_loop_query(reg, rows)).chunks_per_lane;
    return !lanec::choose_load_ahead(load_ahead_query(reg, rows)).declined;
  }

  // row_loop: after the split and the staged kernel, which it needs settled.
  void choose_row_loop(Launch& l, GemvLaunch& p, int64_t rows) {
    const RowLoopChoice choice = lanec::choose_row_loop(row_loop_query(p, rows));
    if (settle("row_loop", l, choice.declined)) p.row_loop_chunks = choice.chunks_per_lane;
  }

  // load_ahead: last of the GEMV's kernel choices (it needs the split, the
  // staged kernel and the row loop settled).
  void choose_load_ahead(Launch& l, GemvLaunch& p, int64_t rows) {
    p.load_ahead = settle("load_ahead", l, lanec::choose_load_ahead(load_ahead_query(p, rows)).declined);
  }

  // An attention whose output a staged GEMV reads keeps its heads a block
  // in the short-context form too: the staged GEMV copies its weights
  // while the attention runs, and twice the attention blocks leave it less
  // room (Qwen3-1.7B: -0.3 to -0.7 % with one head a block, three runs,
  // docs/performance.md). Without a long-context form (at most one cluster
  // of splits at any length) the short form is the only one.
  void settle_short_context_heads(std::vector<Launch>& launches) const {
    std::set<std::string> staged_inputs;
    for (const Launch& l : launches)
      if (const auto* p = std::get_if<GemvLaunch>(&l.params); p != nullptr && p->staged) {
        staged_inputs.insert(p->x);
        staged_inputs.insert(p->x_q8);
      }
    for (Launch& l : launches) {
      auto* a = std::get_if<AttentionLaunch>(&l.params);
      if (a == nullptr) continue;
      if ((!a->out.empty() && staged_inputs.count(a->out)) || (!a->out_q8.empty() && staged_inputs.count(a->out_q8)))
        a->short_heads_per_block = a->heads_per_block;
      if (a->n_split <= kAttnClusterSplits) a->heads_per_block = a->short_heads_per_block;
    }
  }

  // gemv_argmax: once every GEMV has its kernel, each argmax whose logits a
  // foldable GEMV writes takes the finish form, and that GEMV the key.
  void fold_argmax(std::vector<Launch>& launches) {
    for (Launch& l : launches) {
      auto* am = std::get_if<ArgmaxLaunch>(&l.params);
      if (am == nullptr) continue;
      Launch* producer = nullptr;
      for (Launch& w : launches)
        for (const std::string& name : w.writes())
          if (name == am->logits) producer = &w;
      GemvArgmaxQuery q;
      q.n_vocab = am->n_vocab;
      q.producer_kind = producer ? launch_kind_name(producer->kind) : "missing";
      auto* g = producer ? std::get_if<GemvLaunch>(&producer->params) : nullptr;
      if (g != nullptr) {
        q.producer_is_gemv = true;
        q.n_parts = static_cast<int>(g->parts.size());
        q.swiglu = g->swiglu;
        q.staged = g->staged;
        q.row_loop = g->row_loop_chunks > 0;
        q.rows = g->parts.front().rows;
      }
      const GemvArgmaxChoice choice = choose_gemv_argmax(q);
      if (choice.declined) {
        tally_.declined("gemv_argmax", l.name, *choice.declined);
        continue;
      }
      am->key = am->out + ".key";
      am->n_blocks = 1;
      am->block_value.clear();
      am->block_index.clear();
      am->done.clear();
      g->argmax_key = am->key;
      std::vector<size_t> ops = producer->ops;
      ops.insert(ops.end(), l.ops.begin(), l.ops.end());
      tally_.fired("gemv_argmax", l.name, ops);
      l.rules.push_back("gemv_argmax");
      producer->rules.push_back("gemv_argmax");
    }
  }

  void choose_parameters(Launch& l) {
    if (auto* p = std::get_if<GemvLaunch>(&l.params)) {
      const int64_t rows = gemv_rows(*p);
      if (rules_.rows_a_warp) {
        RowsAWarpChoice choice = choose_rows_a_warp(rows, p->format, p->numerics == GemvNumerics::f32,
                                                    knobs_.chip.sms);
        if (settle("rows_a_warp", l, choice.declined)) p->rows_per_warp = choice.rows_per_warp;
      }
      p->split_k = choose_gemv_split_k(rows, p->rows_per_warp, p->k, p->format, knobs_.chip.sms,
                                       resident_warps_per_sm(knobs_.arch_number()), p->swiglu);
      if (rules_.staged_weights) choose_staging(l, *p, rows);
      if (rules_.row_loop) choose_row_loop(l, *p, rows);
      if (rules_.load_ahead) choose_load_ahead(l, *p, rows);
    } else if (auto* a = std::get_if<AttentionLaunch>(&l.params)) {
      a->heads_per_block = attention_heads_per_block(a->n_head / a->n_kv_head, a->head_dim);
      int64_t smem = attention_smem_bytes(a->head_dim, a->heads_per_block);
      if (smem > static_cast<int64_t>(knobs_.chip.smem_kib_per_block) * 1024)
        throw Error("no kernel for " + l.name + ": attention needs " + std::to_string(smem) +
                    " bytes of shared memory a block, the chip " + knobs_.chip.name + " allows " +
                    std::to_string(knobs_.chip.smem_kib_per_block) + " KiB (" + knobs_.source + ")");
      a->n_split = choose_attention_splits(a->n_head, a->heads_per_block, a->n_ctx, knobs_.chip.sms);
      a->short_heads_per_block = kShortContextHeadsPerBlock;  // settle_short_context_heads may keep the group
      if (a->n_split > 1) {
        // Named after the output tensor (its f32 form may be unplanned: int8 only).
        const std::string stem = a->out.empty() ? int8_form_tensor(a->out_q8) : a->out;
        LANEC_ASSERT(!stem.empty(), "attention " + l.name + " writes no output");
        a->part_acc = stem + ".split_acc";
        a->part_ml = stem + ".split_ml";
        a->done = stem + ".split_done";
      }
    } else if (auto* f = std::get_if<FfnLaunch>(&l.params)) {
      const FfnShape shape = choose_ffn_shape(f->hidden, f->ffn, knobs_.chip.sms);
      f->chunks = shape.chunks;
      f->warps = shape.warps;
      f->preload_down = shape.preload_down;
    } else if (auto* am = std::get_if<ArgmaxLaunch>(&l.params)) {
      am->n_blocks = choose_argmax_blocks(am->n_vocab, knobs_.chip.sms);
      if (am->n_blocks > 1) {
        am->block_value = am->out + ".block_value";
        am->block_index = am->out + ".block_index";
        am->done = am->out + ".done";
      }
    }
  }

  static Buffer workspace(const std::string& name, GgmlType type, std::vector<int64_t> shape) {
    Buffer b;
    b.name = name;
    b.role = BufferRole::workspace;
    b.type = type;
    b.elements = 1;
    for (int64_t d : shape) b.elements *= d;
    b.shape = std::move(shape);
    b.bytes = static_cast<uint64_t>(b.elements) * 4;
    return b;
  }

  Buffer tensor_buffer(const std::string& name) const {
    Buffer b;
    b.name = name;
    if (std::string base = int8_form_tensor(name); !base.empty()) {
      const Tensor& t = g_.tensor(g_.id_of(base));
      b.role = BufferRole::activation;
      b.form = knobs_.activations == ActivationNumerics::two_pass_int8 ? BufferForm::q8x2 : BufferForm::q8;
      b.type = GgmlType::I8;
      b.tensor = base;
      b.shape = {t.numel()};
      b.elements = t.numel();
      b.bytes = int8_form_bytes(b.form, t.numel());
      return b;
    }
    if (auto it = packs_.find(name); it != packs_.end()) {
      b.role = BufferRole::activation;
      b.shape = {it->second};
      b.elements = it->second;
      b.bytes = static_cast<uint64_t>(it->second) * 4;
      return b;
    }
    std::optional<TensorId> id = g_.find(name);
    LANEC_ASSERT(id.has_value(), "buffer '" + name + "' names no tensor, pack or workspace");
    const Tensor& t = g_.tensor(*id);
    b.tensor = t.name;
    b.shape = t.shape;
    b.elements = t.numel();
    b.type = t.type;
    switch (t.role) {
      case Role::param:
        b.role = BufferRole::param;
        b.bytes = static_cast<uint64_t>(t.numel()) * 4;
        break;
      case Role::constant: {
        b.role = BufferRole::weight;
        b.gguf_name = t.gguf_name;
        std::vector<uint64_t> ne(t.shape.rbegin(), t.shape.rend());
        std::optional<uint64_t> bytes = ggml_tensor_bytes(t.type, ne);
        LANEC_ASSERT(bytes.has_value(), "weight " + t.name + " has no byte size");
        b.bytes = *bytes;
        if (cols_weights_.count(t.name)) b.layout = "q8_0_cols";  // an ffn launch's down weight
        break;
      }
      case Role::state: {
        b.role = BufferRole::state;
        if (kv_caches_.count(t.name) && t.shape.size() == 3) {
          b.layout = "head_major";
          b.shape = {t.shape[1], t.shape[0], t.shape[2]};
          if (knobs_.cache_precision == CachePrecision::f16) b.type = GgmlType::F16;
        }
        b.bytes = static_cast<uint64_t>(t.numel()) * (b.type == GgmlType::F32 ? 4u : 2u);
        break;
      }
      case Role::activation: {
        b.role = BufferRole::activation;
        if (auto v = views_.find(name); v != views_.end()) {
          b.view_of = v->second.of;
          b.view_offset = v->second.offset;
          b.bytes = 0;
        } else {
          b.bytes = static_cast<uint64_t>(t.numel()) * 4;
        }
        break;
      }
    }
    return b;
  }

  std::vector<Buffer> make_buffers(const std::vector<Launch>& launches) {
    for (const Launch& l : launches)
      if (const auto* kv = std::get_if<KvWriteLaunch>(&l.params)) {
        if (!kv->k_cache.empty()) kv_caches_.insert(kv->k_cache);
        if (!kv->v_cache.empty()) kv_caches_.insert(kv->v_cache);
      } else if (const auto* rope = std::get_if<RopeLaunch>(&l.params)) {  // row_write joined
        for (const RopePart& part : rope->parts)
          if (!part.cache.empty()) kv_caches_.insert(part.cache);
        if (!rope->v_cache.empty()) kv_caches_.insert(rope->v_cache);
      }
    std::set<std::string> names;
    std::map<std::string, Buffer> workspaces;
    for (const Launch& l : launches) {
      for (const std::string& n : l.reads()) names.insert(n);
      for (const std::string& n : l.writes()) names.insert(n);
      if (const auto* a = std::get_if<AttentionLaunch>(&l.params); a && a->n_split > 1) {
        workspaces[a->part_acc] = workspace(a->part_acc, GgmlType::F32, {a->n_head, a->n_split, a->head_dim});
        workspaces[a->part_ml] = workspace(a->part_ml, GgmlType::F32, {a->n_head, a->n_split, 2});
        // Counters: one a group, or with the cluster merge one a group's share (8 a head).
        workspaces[a->done] = workspace(a->done, GgmlType::I32, {a->n_head, kAttnClusterSplits});
      }
      if (const auto* am = std::get_if<ArgmaxLaunch>(&l.params); am && !am->key.empty())
        workspaces[am->key] = workspace(am->key, GgmlType::I32, {2});  // one u64: kernels/argmax.cuh argmax_key
      if (const auto* am = std::get_if<ArgmaxLaunch>(&l.params); am && am->n_blocks > 1) {
        workspaces[am->block_value] = workspace(am->block_value, GgmlType::F32, {am->n_blocks});
        workspaces[am->block_index] = workspace(am->block_index, GgmlType::I32, {am->n_blocks});
        workspaces[am->done] = workspace(am->done, GgmlType::I32, {1});
      }
    }
    for (TensorId t : g_.outputs()) names.insert(g_.tensor(t).name);
    std::map<std::string, Buffer> out;
    std::vector<std::string> todo(names.begin(), names.end());
    while (!todo.empty()) {
      std::string n = todo.back();
      todo.pop_back();
      if (out.count(n)) continue;
      if (auto w = workspaces.find(n); w != workspaces.end()) {
        out[n] = w->second;
        continue;
      }
      Buffer b = tensor_buffer(n);
      if (b.is_view()) todo.push_back(b.view_of);
      out[n] = b;
    }
    std::vector<Buffer> sorted;
    for (auto& [name, b] : out) sorted.push_back(std::move(b));
    // A view takes its storage's element type (an f16 cache stays f16).
    for (Buffer& b : sorted)
      if (b.is_view()) {
        std::string root = root_of(b.name);
        for (const Buffer& r : sorted)
          if (r.name == root) b.type = r.type;
      }
    return sorted;
  }

  const Graph& g_;
  const LinkedPlan& linked_;
  const Knobs& knobs_;
  SizeRules rules_;
  std::set<std::string> attention_outputs_;  // f32 and int8 forms the attention launches write
  std::set<std::string> cols_weights_;       // down weights of ffn launches: repacked to q8_0_cols at load
  RuleTally& tally_;
  std::map<std::string, ViewDecl> views_;
  std::map<std::string, int64_t> packs_;
  std::map<std::string, std::string> int8_forms_;  // form buffer -> tensor
  std::set<std::string> kv_caches_;
};

}  // namespace

namespace {

// Q8_0 (measured on an H200 with int8 activations, docs/performance.md):
// split 1 where one warp a row fills two thirds of the chip's resident
// warps (a SwiGLU pair, two rows a warp and more registers, from 16k rows):
// Qwen3-8B's 6,144-row Q/K/V (73 %) gained 1.1 % a token at 1, twice,
// where 1.7B's 4,096-row one (48 %) lost 1.5 %; else 2,
// doubled while the warps still fit the resident warps once: the short-row
// down projections of Qwen3-0.6B and 1.7B gained 1.7 % and 3.1 % a token at
// split 4, where Qwen3-8B's (4,096 rows, 16,384 warps at 4) lost 0.9 %. At
// least 1.5 chunks a lane, or one while the warps fill at most half the
// chip: one chunk a lane lost with many warps (Qwen3-0.6B's Q/K/V at split
// 2, 8,192 warps: -3.3 %; 1.7B's output GEMV at 4: -1.8 %) and paid with few
// (0.6B's output GEMV at 4, 4,096 warps: +1.1 %).
int q8_0_split_k(int64_t rows, int64_t groups, int64_t k, int sms, int warps_per_sm, bool swiglu) {
  const int64_t resident_warps = static_cast<int64_t>(sms) * warps_per_sm;
  if (swiglu ? rows >= 16384 : 3 * groups >= 2 * resident_warps) return 1;
  int split = 2;
  while (split < kGemvMaxSplit && groups * split * 2 <= resident_warps) split *= 2;
  const int64_t chunks = k / gemv_chunk_elems(GgmlType::Q8_0);  // 16-byte chunks a row
  auto lanes_busy = [&](int s) {
    const int64_t lane_slots = 32 * static_cast<int64_t>(s);  // a warp's lanes over the split
    return 2 * chunks >= 3 * lane_slots || (chunks >= lane_slots && 2 * groups * s <= resident_warps);
  };
  while (split > 1 && !lanes_busy(split)) split /= 2;
  return split;
}

// 16-bit and f32 weights (docs/kernels.md): 1 for tall matrices (16k rows
// and up), 4 when k is long against the rows (ffn_down) or the rows are
// many, else 2; then more while the row groups give fewer than
// kGemvWarpsPerSm warps an SM, and never below two 16-byte chunks a lane.
int wide_split_k(int64_t rows, int64_t groups, int64_t k, GgmlType format, int sms) {
  int split = 1;
  if (rows < 16384) split = (k >= 3 * rows || rows >= 8192) ? 4 : 2;
  const int64_t wanted = static_cast<int64_t>(sms) * kGemvWarpsPerSm;
  while (split < kGemvMaxSplit && groups * split < wanted) split *= 2;
  const int64_t max_split = std::max<int64_t>(1, k / gemv_chunk_elems(format) / 32 / 2);
  while (split > max_split) split /= 2;
  return split;
}

}  // namespace

int64_t gemv_chunk_elems(GgmlType format) {
  switch (format) {
    case GgmlType::F32: return 4;
    case GgmlType::Q8_0: return 16;
    default: return 8;
  }
}

int64_t gemv_rows(const GemvLaunch& g) {
  if (g.swiglu) return g.parts.front().rows;
  int64_t rows = 0;
  for (const GemvPart& part : g.parts) rows += part.rows;
  return rows;
}

bool settle_launch_rule(RuleTally& tally, const char* rule, Launch& l, const std::optional<std::string>& declined) {
  if (declined) {
    tally.declined(rule, l.name, *declined);
    return false;
  }
  tally.fired(rule, l.name, l.ops);
  l.rules.push_back(rule);
  return true;
}

int64_t gemv_chunks_a_lane(GgmlType format, int64_t k, int split_k) {
  // Lane l of slice s takes chunks s*32 + l, then every 32*split_k after.
  const int64_t stride = 32 * static_cast<int64_t>(split_k);
  return (k / gemv_chunk_elems(format) + stride - 1) / stride;
}

int choose_gemv_split_k(int64_t rows, int rows_per_warp, int64_t k, GgmlType format, int sms, int warps_per_sm,
                        bool swiglu) {
  const int64_t groups = (rows + rows_per_warp - 1) / rows_per_warp;
  if (format == GgmlType::Q8_0) return q8_0_split_k(rows, groups, k, sms, warps_per_sm, swiglu);
  return wide_split_k(rows, groups, k, format, sms);
}

std::optional<int> known_resident_warps_per_sm(int arch_number) {
  // The CUDA programming guide's "maximum number of resident warps per SM".
  switch (arch_number) {
    case 75: return 32;
    case 70: case 72: case 80: case 90: case 100: case 103: return 64;
    case 86: case 87: case 89: case 120: case 121: return 48;
    default: return std::nullopt;
  }
}

int resident_warps_per_sm(int arch_number) {
  return known_resident_warps_per_sm(arch_number).value_or(kAssumedResidentWarpsPerSm);
}

int choose_attention_splits(int64_t n_head, int64_t heads_per_block, int64_t n_ctx, int sms) {
  const int64_t blocks_per_split = n_head / heads_per_block;
  // The most splits the kernel may use (it takes fewer for short contexts:
  // at least kKeysPerSplit keys each): kPlannedAttnSplits at any length, and
  // at least enough that blocks x splits cover the SMs twice at full length;
  // each split at least kKeysPerSplit rows of the full cache.
  const int64_t cover = (2 * static_cast<int64_t>(sms) + blocks_per_split - 1) / blocks_per_split;
  const int64_t by_keys = std::max<int64_t>(1, n_ctx / kKeysPerSplit);
  const int64_t splits = std::clamp<int64_t>(std::min(std::max(kPlannedAttnSplits, cover), by_keys), 1, kMaxAttnSplits);
  // A multiple of the cluster where the kernel merges up to 8 used splits in
  // shared memory (blocks of 1-4 heads; n_split a multiple of 8): splits the
  // context does not need cost an exit each.
  if (splits == 1 || heads_per_block > kAttnClusterMaxGroup) return static_cast<int>(splits);
  return static_cast<int>((splits + kAttnClusterSplits - 1) / kAttnClusterSplits * kAttnClusterSplits);
}

int attention_heads_per_block(int64_t gqa, int64_t head_dim) {
  // The kernel's own rule (kernels/limits.h); link bounds head_dim first.
  return kernels::attention_heads_per_block(static_cast<int>(gqa), static_cast<int>(head_dim));
}

FfnShape choose_ffn_shape(int64_t hidden, int64_t ffn, int sms) {
  FfnShape shape;
  int64_t best_waves = 0;
  for (int chunks = 1; chunks <= kFfnMaxChunks; ++chunks) {
    if (ffn % (chunks * kQ8Block) != 0) continue;
    const int64_t blocks = ffn / (chunks * kQ8Block);
    const int64_t waves = (blocks + sms - 1) / sms;  // knobs: sms >= 1
    if (best_waves == 0 || waves < best_waves) {
      best_waves = waves;
      shape.chunks = chunks;
    }
  }
  shape.preload_down = hidden / 4 <= static_cast<int64_t>(shape.warps) * 32;
  return shape;
}

int choose_argmax_blocks(int64_t n_vocab, int sms) {
  // One block per SM at most (one wave; the last block's reduction of the
  // winners grows with the count), and no block with fewer than
  // kArgmaxMinPerBlock logits (one float4 a thread) while more than one runs.
  const int64_t by_vocab = (n_vocab + kArgmaxMinPerBlock - 1) / kArgmaxMinPerBlock;
  return static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(by_vocab, sms), 1, std::max<int64_t>(1, n_vocab)));
}

int64_t attention_smem_bytes(int64_t head_dim, int64_t heads_per_block) {
  // sm_acc[kAttnWarps][heads x head_dim] and sm_ml[kAttnWarps][heads][2]
  // floats, the merge's sm_w/sm_l[heads][kMaxAttnSplits] floats, one flag;
  // with the cluster merge also a slot for each split's partials of the
  // block's share and of every head's m and l; with the tensor-core loop
  // (kernels/attention_tc.cuh) the queries' fragments.
  const int64_t elems = heads_per_block * head_dim;
  const int64_t share = elems / kernels::attention_merge_owners(static_cast<int>(elems), static_cast<int>(head_dim));
  const int64_t cluster =
      heads_per_block <= kAttnClusterMaxGroup ? kAttnClusterSplits * (share + 2 * heads_per_block) * 4 : 0;
  // The tensor-core form's query fragments (with any cache precision: the
  // count is an upper bound).
  const int64_t tc = kernels::attention_tc_group(static_cast<int>(heads_per_block))
                         ? kernels::attention_tc_query_bytes(static_cast<int>(head_dim))
                         : 0;
  return kAttnWarps * elems * 4 + kAttnWarps * heads_per_block * 2 * 4 + 2 * heads_per_block * kMaxAttnSplits * 4 +
         1 + cluster + tc;
}

SizedPlan size_plan(const Graph& graph, const LinkedPlan& linked, const Knobs& knobs,
                    const SizeRules& rules, RuleTally& tally) {
  return Sizer(graph, linked, knobs, rules, tally).run();
}

std::string print_buffers(const std::vector<Buffer>& buffers) {
  std::string out;
  for (const Buffer& b : buffers) {
    std::string shape;
    for (size_t i = 0; i < b.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(b.shape[i]);
    out += b.name + " " + buffer_role_name(b.role) + " " +
           (b.form == BufferForm::q8x2 ? std::string("q8x2") : b.form == BufferForm::q8 ? std::string("q8") : std::string(elem_type_name(b.type) ? elem_type_name(b.type) : "?")) +
           " [" + shape + "] bytes=" + std::to_string(b.bytes);
    if (!b.layout.empty()) out += " layout=" + b.layout;
    if (b.is_view()) out += " view_of=" + b.view_of + "+" + std::to_string(b.view_offset);
    if (!b.gguf_name.empty() && b.gguf_name != b.name) out += " gguf=" + b.gguf_name;
    out += "\n";
  }
  return out;
}

}  // namespace lanec
