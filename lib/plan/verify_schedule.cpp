// Schedule checks (verify_schedule.h).
#include "lib/plan/verify_schedule.h"

#include <map>
#include <optional>
#include <set>
#include <variant>

#include "kernels/limits.h"
#include "lib/common/error.h"
#include "lib/plan/size.h"
#include "lib/plan/triggers.h"

namespace lanec {
namespace {

[[noreturn]] void bad(const Launch& l, const std::string& why) {
  LANEC_ASSERT(false, "schedule: launch " + l.name + ": " + why);
  throw Error(why);  // not reached
}

// kernels/gemv.cuh launch_gemv_row_loop: one matrix, split 1, 1 row a warp,
// not staged, and C (1, 2 or 4) the chunks a lane of a row.
bool row_loop_fits(const GemvLaunch& g) {
  const int c = g.row_loop_chunks;
  return g.parts.size() == 1 && !g.swiglu && g.split_k == 1 && g.rows_per_warp == 1 && !g.staged &&
         (c == 1 || c == 2 || c == 4) && c == gemv_chunks_a_lane(g.format, g.k);
}

void check_params(const Launch& l) {
  if (const auto* g = std::get_if<GemvLaunch>(&l.params)) {
    if (g->parts.empty() || g->parts.size() > 4) bad(l, "GEMV with " + std::to_string(g->parts.size()) + " parts");
    if (g->swiglu && g->parts.size() != 2) bad(l, "SwiGLU GEMV without exactly two parts");
    if (g->rows_per_warp != 1 && g->rows_per_warp != 2 && g->rows_per_warp != 4)
      bad(l, "rows_per_warp " + std::to_string(g->rows_per_warp));
    if (g->split_k < 1 || g->split_k > 16) bad(l, "split_k " + std::to_string(g->split_k));
    if ((g->numerics != GemvNumerics::f32) != g->x.empty() || g->x.empty() == g->x_q8.empty())
      bad(l, "GEMV input does not match its numerics");
    // kernels/gemv.cuh gemv_ahead_kernel: a form of the register kernel.
    if (g->load_ahead && (g->staged || g->row_loop_chunks != 0 || !g->argmax_key.empty()))
      bad(l, "load-ahead GEMV outside the register kernel (or with an argmax fold)");
    // kernels/gemv.cuh GemvParams::residual_early: the register kernel's, with a residual.
    if (g->residual_early && (g->staged || g->row_loop_chunks != 0 || !gemv_has_residual(*g)))
      bad(l, "early residual on a GEMV outside the register kernel or without a residual");
    // kernels/gemv_staged.cuh: q8_0 with int8 activations, split 1, 2 or 4, no SwiGLU.
    if (g->staged && (g->format != GgmlType::Q8_0 || g->numerics == GemvNumerics::f32 || g->swiglu ||
                      (g->split_k != 1 && g->split_k != 2 && g->split_k != 4) || g->k % kernels::kGemvStagedKMultiple != 0))
      bad(l, "staged GEMV outside what the staged kernel takes");
    if (g->row_loop_chunks != 0 && !row_loop_fits(*g)) bad(l, "row-loop GEMV outside what the row loop takes");
    // kernels/gemv.cuh Argmax forms: one matrix, no SwiGLU, register kernel or row loop.
    if (!g->argmax_key.empty() && (g->parts.size() != 1 || g->swiglu || g->staged))
      bad(l, "argmax-folding GEMV outside what its kernels take");
  }
  // kernels/ffn.cuh: a block shape ffn_kernel takes (whole gate/up row pairs
  // a warp, a warp for each intermediate block's quantize) and lengths in
  // whole blocks; verify_schedule checks the output's storage.
  if (const auto* f = std::get_if<FfnLaunch>(&l.params)) {
    if (f->chunks < 1 || f->warps < f->chunks || f->warps > 32 || (32 * f->chunks) % f->warps != 0)
      bad(l, "ffn block shape outside the kernel's");
    if (f->min_blocks < 1 || f->min_blocks * f->warps > 64 || (f->ahead != 1 && f->ahead != 2) ||
        (f->split != 1 && f->split != 2))
      bad(l, "ffn form outside the kernel's (min_blocks " + std::to_string(f->min_blocks) + ", ahead " +
                 std::to_string(f->ahead) + ", split " + std::to_string(f->split) + ")");
    if (f->hidden % (32 * f->split) != 0)
      bad(l, "ffn split " + std::to_string(f->split) + " of hidden " + std::to_string(f->hidden) +
                 " into unequal halves");
    if (f->hidden <= 0 || f->hidden % 32 != 0 || f->ffn <= 0 || f->ffn % (32 * f->chunks) != 0)
      bad(l, "ffn lengths " + std::to_string(f->hidden) + " x " + std::to_string(f->ffn) + " outside whole blocks");
  }
  if (const auto* r = std::get_if<RopeLaunch>(&l.params)) {
    if (r->parts.empty() || r->parts.size() > 2) bad(l, "rope with " + std::to_string(r->parts.size()) + " parts");
    bool caches = !r->v.empty();
    for (const RopePart& part : r->parts) {
      if (part.cache_only && part.cache.empty()) bad(l, "rope part " + part.x + " stores only a cache it lacks");
      caches = caches || !part.cache.empty();
    }
    if (r->v.empty() != r->v_cache.empty() || (!r->v.empty() && r->n_v_head <= 0))
      bad(l, "rope V rows without their cache or heads");
    if (caches != (r->n_ctx > 0)) bad(l, "rope cache rows without a context length (or the reverse)");
  }
}

// Whether `running` writes the storage of buffer `name`.
bool writes_storage_of(const Schedule& s, const Launch& running, const std::string& name) {
  const std::string root = s.storage_of(name).first->name;
  for (const std::string& written : running.writes())
    if (s.storage_of(written).first->name == root) return true;
  return false;
}

// Attention loads its position and the cache rows of earlier positions
// before its wait (kernels/attention.cuh, LANEC_ATTN_EARLY): a launch still
// running then must not write the position, and may write the caches only
// as this step's row (rope's row_write or the cache write, at the same
// position).
std::optional<std::string> attention_early_clash(const Schedule& s, const Launch& running, const Launch& attn) {
  const auto& a = std::get<AttentionLaunch>(attn.params);
  auto root = [&](const std::string& name) { return s.storage_of(name).first->name; };
  std::string row_pos;  // the position at which `running` writes a cache row, if it does
  if (const auto* r = std::get_if<RopeLaunch>(&running.params)) row_pos = r->pos;
  if (const auto* w = std::get_if<KvWriteLaunch>(&running.params)) row_pos = w->pos;
  for (const std::string& name : running.writes()) {
    const std::string written = root(name);
    if (written == root(a.pos)) return running.name + " writes its position " + a.pos;
    if ((written == root(a.k_cache) || written == root(a.v_cache)) && row_pos != a.pos)
      return running.name + " writes its cache " + name + " other than at row " + a.pos;
  }
  return std::nullopt;
}

// Rope loads its position before its wait (kernels/rope.cuh,
// LANEC_ROPE_EARLY_POS): a launch still running then must not write it.
std::optional<std::string> rope_early_clash(const Schedule& s, const Launch& running, const Launch& rope) {
  const auto& r = std::get<RopeLaunch>(rope.params);
  if (writes_storage_of(s, running, r.pos)) return running.name + " writes its position " + r.pos;
  return std::nullopt;
}

// A GEMV with residual_early loads its residual rows before its wait
// (kernels/gemv.cuh): a launch still running then must not write them.
std::optional<std::string> gemv_early_clash(const Schedule& s, const Launch& running, const Launch& gemv) {
  const auto& g = std::get<GemvLaunch>(gemv.params);
  if (!g.residual_early) return std::nullopt;
  for (const GemvPart& part : g.parts)
    if (!part.residual.empty() && writes_storage_of(s, running, part.residual))
      return running.name + " writes its residual " + part.residual;
  return std::nullopt;
}

// early_trigger: the kernels that take it (pdl_trigger_early).
void check_early_trigger(const Launch& l) {
  if (l.early_trigger && !takes_early_trigger(l)) bad(l, "early trigger on a kernel without one");
}

// gemv_argmax: an argmax's key comes from the one GEMV before it that
// writes its logits and folds into that key, and no launch between them
// writes those logits again; no GEMV folds into a key that no argmax after
// it finishes (it would never be set back to zero).
void check_argmax_keys(const Schedule& s) {
  std::map<std::string, const GemvLaunch*> folding;  // key -> the GEMV folding into it, not yet finished
  for (const Launch& l : s.launches) {
    for (const auto& [key, g] : folding)
      for (const std::string& name : l.writes())
        if (name == g->parts.front().y)
          bad(l, "writes the logits " + name + " after the GEMV that folds their argmax into " + key);
    if (const auto* g = std::get_if<GemvLaunch>(&l.params); g && !g->argmax_key.empty()) {
      if (!folding.emplace(g->argmax_key, g).second) bad(l, "a second GEMV folds into the key " + g->argmax_key);
    }
    const auto* a = std::get_if<ArgmaxLaunch>(&l.params);
    if (a == nullptr || a->key.empty()) continue;
    auto it = folding.find(a->key);
    if (it == folding.end()) bad(l, "finishes the key " + a->key + " that no GEMV before it folds into");
    if (it->second->parts.front().y != a->logits || it->second->parts.front().rows != a->n_vocab)
      bad(l, "finishes the key " + a->key + " of a GEMV that does not write its logits " + a->logits);
    folding.erase(it);
  }
  for (const auto& [key, g] : folding) LANEC_ASSERT(false, "schedule: no argmax finishes the key " + key);
}

}  // namespace

std::optional<std::string> early_read_clash(const Schedule& s, const Launch& running, const Launch& reader) {
  if (std::holds_alternative<AttentionLaunch>(reader.params)) return attention_early_clash(s, running, reader);
  if (std::holds_alternative<RopeLaunch>(reader.params)) return rope_early_clash(s, running, reader);
  if (std::holds_alternative<GemvLaunch>(reader.params)) return gemv_early_clash(s, running, reader);
  return std::nullopt;  // the other kernels read only constants before their wait
}

std::optional<std::string> early_read_clash_before(const Schedule& s, const Launch& reader, size_t from) {
  for (size_t j = from; j-- > 0;) {
    if (auto clash = early_read_clash(s, s.launches[j], reader)) return clash;
    if (!s.launches[j].early_trigger) break;
  }
  return std::nullopt;
}

void verify_schedule(const Schedule& s) {
  for (size_t i = 1; i < s.buffers.size(); ++i)
    LANEC_ASSERT(s.buffers[i - 1].name < s.buffers[i].name, "schedule buffers not sorted/unique at " + s.buffers[i].name);
  for (const Buffer& b : s.buffers) {
    if (!b.is_view()) continue;
    auto [root, offset] = s.storage_of(b.name);
    LANEC_ASSERT(offset >= 0 && offset + b.elements <= root->elements,
                 "view " + b.name + " overruns " + root->name);
    LANEC_ASSERT(root->type == b.type, "view " + b.name + " changes the element type of " + root->name);
  }
  std::set<std::string> written;  // storage roots written so far
  for (size_t i = 0; i < s.launches.size(); ++i) {
    const Launch& l = s.launches[i];
    check_params(l);
    check_early_trigger(l);
    if (const auto* f = std::get_if<FfnLaunch>(&l.params)) {
      if (s.storage_of(f->y) != s.storage_of(f->residual))
        bad(l, "adds into " + f->y + ", which is not the storage of its residual " + f->residual);
      // Thread-block clusters: the launcher refuses them below sm_90 (kernels/common.cuh).
      if (f->split > 1 && s.knobs.arch_number() < 90)
        bad(l, "ffn split " + std::to_string(f->split) + " needs thread-block clusters (sm_90), not " +
                   s.knobs.chip.arch);
    }
    // Launch i starts once every block of launch i - 1 has triggered.
    if (auto clash = early_read_clash_before(s, l, i)) bad(l, "may start while " + *clash);
    for (const std::string& name : l.reads()) {
      const Buffer* b = s.find_buffer(name);
      if (!b) bad(l, "reads unknown buffer " + name);
      if (b->role != BufferRole::activation) continue;
      std::string root = s.storage_of(name).first->name;
      if (!written.count(root)) bad(l, "reads " + name + " before any launch writes it");
      if (is_int8_form(b->form) && l.kind != LaunchKind::gemv && l.kind != LaunchKind::ffn)
        bad(l, "reads the int8 form " + name + " but is not a GEMV");
    }
    for (const std::string& name : l.writes()) {
      if (!s.find_buffer(name)) bad(l, "writes unknown buffer " + name);
      written.insert(s.storage_of(name).first->name);
    }
  }
  for (const std::string& out : s.outputs)
    LANEC_ASSERT(written.count(s.storage_of(out).first->name), "output " + out + " is never written");
  check_argmax_keys(s);
}

}  // namespace lanec
