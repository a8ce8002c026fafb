// The schedule: what the planner hands to the emitter and to the CPU schedule
// executor. It is plain data, fully resolved: every launch names its kernel
// family (LaunchKind), the buffers it reads and writes by name, its shapes,
// weight formats and the per-launch parameters chosen from the chip (rows a
// warp, split counts). The emitter only fills templates from it; it makes no
// decisions of its own.
//
// Contract:
//  - Launches are in execution order; each lists the step-graph ops it covers
//    (indices into the recognized graph, sorted) and the rules that shaped it.
//  - Every buffer name a launch mentions is in Schedule::buffers. A buffer is
//    either storage of its own or a view (view_of + offset) into a larger
//    buffer of the same element type (Q, K and V as parts of one qkv buffer).
//  - An activation may have two forms: its f32 buffer and its int8 form
//    (BufferForm::q8: n int8 values then n/32 f32 block scales, the layout of
//    kernels/blocks.h), planned as separate buffers "<name>" and "<name>.q8".
//  - KV caches use the kernel library's head-major layout
//    [n_kv_head, n_ctx, head_dim] (kernels/kv_cache.cuh), whatever the step
//    graph's logical [n_ctx, n_kv_head, head_dim] shape is.
//  - Deterministic: vectors in a fixed order, maps sorted by key; no pointers.
// docs/planner.md describes each launch kind and how its parameters are chosen.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lib/gguf/ggml_types.h"
#include "lib/knobs/knobs.h"

namespace lanec {

// One kernel family of kernels/ each (docs/planner.md lists the mapping).
enum class LaunchKind : uint8_t {
  embed,      // embed.cuh      token row gather (+ RMS norm of the row: embed_norm)
  rms_norm,   // rms_norm.cuh   RMS norm (+ residual add: add_norm) (+ int8 output)
  quantize,   // quantize.cuh   f32 -> int8 activations
  gemv,       // gemv.cuh       y = W x: 1..4 parts, bias/residual epilogues, SwiGLU pair
  rope,       // rope.cuh       RoPE in place, 1..2 parts, optional per-head RMS norm (+ cache rows: row_write)
  kv_write,   // kv_cache.cuh   this step's K and/or V rows into the caches
  attention,  // attention.cuh  split-K decode attention, splits merged by the last split block
  swiglu,     // elementwise.cuh  out = silu(a) * b
  add,        // elementwise.cuh  out = a + b
  argmax,     // argmax.cuh     greedy token + advance of token and position on the device
  ffn,        // ffn.cuh        the SwiGLU FFN block: gate/up, SwiGLU, down, residual (ffn_fused)
};
const char* launch_kind_name(LaunchKind kind);
const std::vector<LaunchKind>& all_launch_kinds();

// Matmul numerics of one GEMV launch (the `activations` knob, per launch:
// only q8_0 weights take int8 activations).
// int8x2 (activations: two-pass-int8): int8 activations in two words, a
// high and a low byte per element (BufferForm::q8x2), two dp4a passes.
enum class GemvNumerics : uint8_t { f32, int8, int8x2 };
const char* gemv_numerics_name(GemvNumerics numerics);
// The numerics of a GEMV over weights of `format`: int8 activations (one or
// two words) only with q8_0 weights, as the knobs ask.
GemvNumerics gemv_numerics(GgmlType format, ActivationNumerics activations);

// ---- per-kind launch parameters -------------------------------------------

struct EmbedLaunch {
  std::string table;           // weight buffer [n_rows, dim]
  GgmlType format = GgmlType::F32;
  std::string token;           // param buffer (i32 [1])
  std::string out;             // f32 [dim]
  std::string norm_weight;     // embed_norm: f32 [dim]; empty = no norm
  double eps = 0.0;
  int64_t n_rows = 0;
  int64_t dim = 0;
};

struct RmsNormLaunch {
  std::string x;               // f32 [n]
  std::string residual;        // add_norm: h = x + residual; empty = no add
  std::string h_out;           // add_norm: where h goes (the new residual stream)
  std::string weight;          // f32 [n]
  std::string out;             // f32 result; empty when only the int8 form is needed
  std::string out_q8;          // int8 form of the result; empty = none
  double eps = 0.0;
  int64_t n = 0;
};

struct QuantizeLaunch {
  std::string x;               // f32 [n]
  std::string out_q8;          // int8 form [n] (+ n/32 scales)
  int64_t n = 0;
};

struct GemvPart {
  std::string weight;          // weight buffer [rows, k]
  std::string y;               // f32 [rows] (empty for the up part of a SwiGLU pair)
  std::string bias;            // gemv_bias: f32 [rows]; empty = none
  std::string residual;        // gemv_norm_epilogue: y = W x + residual; empty = none
  int64_t rows = 0;
};

struct GemvLaunch {
  std::vector<GemvPart> parts; // 1..4 (gemv_parts); exactly 2 when swiglu (gate, up)
  GgmlType format = GgmlType::F32;  // one format for all parts
  GemvNumerics numerics = GemvNumerics::f32;
  std::string x;               // f32 input (numerics f32)
  std::string x_q8;            // int8 input (numerics int8 and int8x2)
  int64_t k = 0;
  bool swiglu = false;         // glu_pair: parts[0].y = silu(gate x) * (up x)
  int rows_per_warp = 1;       // rows_a_warp: 1, 2 or 4
  int split_k = 1;             // warps sharing one row group (1..16; staged: 1, 2 or 4)
  bool staged = false;         // staged_weights: all weights copied to shared memory before the wait
  int row_loop_chunks = 0;     // row_loop: a one-wave grid of warps looping over rows, this many chunks a lane; 0 = off
  bool load_ahead = false;     // load_ahead: the register kernel loads a lane's second chunk with its first activations
  bool residual_early = false; // the register kernel loads its residual rows before its wait (mark_early_residuals
                               // in triggers.h: no launch still running then writes them)
  std::string argmax_key;      // gemv_argmax: the key the blocks fold the greedy winner into (workspace i32 [2],
                               // one u64); empty = none
};

// Whether some part of the GEMV adds a residual in its epilogue.
inline bool gemv_has_residual(const GemvLaunch& g) {
  for (const GemvPart& part : g.parts)
    if (!part.residual.empty()) return true;
  return false;
}

struct RopePart {
  std::string x;               // f32 [n_head, head_dim], rotated in place (unless cache_only)
  std::string norm_weight;     // head_norm_rope: f32 [head_dim]; empty = none
  int64_t n_head = 0;
  std::string cache;           // row_write: the cache whose row pos takes the rotated heads; empty = none
  bool cache_only = false;     // row_write: no one reads the rotated x, so only the cache takes it
};

struct RopeLaunch {
  std::vector<RopePart> parts; // 1..2 (rope_parts)
  std::string pos;             // param buffer (i32 [1])
  int64_t head_dim = 0;
  int64_t rope_dims = 0;       // rotated dims (n_rot), <= head_dim
  bool neox = false;           // pairs (i, i + rope_dims/2) rather than (2i, 2i+1)
  double theta_base = 10000.0;
  double eps = 0.0;            // per-head norm epsilon
  // row_write: this step's V rows stored unrotated at row pos of v_cache.
  std::string v;               // f32 [n_v_head, head_dim]; empty = none
  std::string v_cache;
  int64_t n_v_head = 0;
  int64_t n_ctx = 0;           // rows of the caches written (0 = no cache write)
  // early_trigger: the position from which the rope triggers after its wait
  // instead (a long GEMV before it, rules/early_trigger.h); 0 = every position.
  int64_t early_trigger_rows = 0;
};

struct KvWriteLaunch {
  std::string k, v;            // f32 [n_kv_head * head_dim]; one may be empty (row_write held)
  std::string k_cache, v_cache;// cache buffers, head-major [n_kv_head, n_ctx, head_dim]
  std::string pos;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;
  int64_t n_ctx = 0;
};

struct AttentionLaunch {
  std::string q;               // f32 [n_head, head_dim]
  std::string k_cache, v_cache;
  std::string out;             // f32 [n_head, head_dim]; empty when only out_q8 is read
  std::string out_q8;          // its int8 form (one or two words), written by the launch
  std::string pos;
  std::string part_acc;        // workspace [n_head, n_split, head_dim] (n_split > 1)
  std::string part_ml;         // workspace [n_head, n_split, 2] (n_split > 1)
  std::string done;            // workspace i32 [n_head, 8]: split counters, zero between launches (n_split > 1)
  double scale = 1.0;
  int64_t n_head = 0;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;
  int64_t n_ctx = 0;
  int n_split = 1;             // most context splits, from the SM count (the kernel uses fewer for short contexts)
  int heads_per_block = 1;     // query heads sharing a kv head that one block serves (long-context form)
  int short_heads_per_block = 1;  // the same where at most one cluster of splits is in use (the short-context form)
};

struct ElementwiseLaunch {     // swiglu (a = gate, b = up) and add
  std::string a, b, out;       // out empty: only the int8 form is needed
  int64_t n = 0;
  std::string out_q8;          // swiglu: int8 form of the result; empty = none
};

struct ArgmaxLaunch {
  std::string logits;          // f32 [n_vocab]
  std::string out;             // i32 [1] the graph's token output
  std::string token;           // param buffer advanced on the device
  std::string pos;             // param buffer advanced on the device
  int64_t n_vocab = 0;
  int n_blocks = 1;            // blocks over the logits, from the SM count (size stage)
  std::string block_value;     // workspace f32 [n_blocks]: each block's winner (n_blocks > 1)
  std::string block_index;     // workspace i32 [n_blocks]
  std::string done;            // workspace i32 [1]: blocks finished; zero between launches
  std::string key;             // gemv_argmax: the logits GEMV's folded key (finish form: one thread, no
                               // pass over the logits, no block workspaces); empty = the full argmax
};

// ffn_fused: y = residual + W_down q(silu(W_gate x) * (W_up x)) in one
// launch (kernels/ffn.cuh), q8_0 weights and two-word int8 activations. y is
// planned as a view of the residual: the launch adds its sums in place.
struct FfnLaunch {
  std::string gate, up;        // q8_0 weights [ffn, hidden] (q8_0_split at load)
  std::string down;            // q8_0 weight [hidden, ffn] (q8_0_cols at load: Buffer::layout)
  std::string x_q8;            // two-word int8 input [hidden]
  std::string residual;        // f32 [hidden]: the residual stream the sums are added to
  std::string y;               // f32 [hidden]: a view of residual
  int64_t hidden = 0;
  int64_t ffn = 0;
  int chunks = 1;              // 32-element intermediate blocks a thread block forms (size stage)
  int warps = 16;              // warps a thread block
  bool preload_down = false;   // a thread's first down-weight group loads before the wait
  int min_blocks = 1;          // blocks an SM the registers are capped for (__launch_bounds__)
  int ahead = 1;               // gate/up trips a lane loads before the wait (1 or 2)
  int split = 1;               // blocks a cluster sharing each set of intermediate blocks (1 or 2; sm_90)
};

using LaunchParams = std::variant<EmbedLaunch, RmsNormLaunch, QuantizeLaunch, GemvLaunch,
                                  RopeLaunch, KvWriteLaunch, AttentionLaunch, ElementwiseLaunch,
                                  ArgmaxLaunch, FfnLaunch>;

struct Launch {
  LaunchKind kind = LaunchKind::add;
  std::string name;            // stable, from the graph: "gemv_qkv_l03", "rms_norm_attn_norm_l03"
  int layer = -1;              // block index, -1 outside blocks
  std::vector<size_t> ops;     // step-graph op indices covered, sorted
  std::vector<std::string> rules;  // rules that shaped this launch, registry order
  LaunchParams params;
  bool early_trigger = false;  // early_trigger: the next launch may start before this one's wait

  // Bytes of weight buffer `buffer` (of `bytes` in all) this launch reads
  // once: one row of an embedding table it gathers, else all of them.
  uint64_t weight_bytes_read(const std::string& buffer, uint64_t bytes) const;

  // Buffers read / written (by name, in a fixed order, views as themselves).
  std::vector<std::string> reads() const;
  std::vector<std::string> writes() const;
};

// ---- buffers ----------------------------------------------------------------

enum class BufferRole : uint8_t {
  param,       // per-step input (token, position), i32
  state,       // carried across steps (KV caches), zero-filled at start
  weight,      // a GGUF tensor, uploaded as is (format = its ggml type)
  activation,  // computed within the step
  workspace,   // scratch of one launch (attention splits, argmax block winners), zero-filled at start
};
const char* buffer_role_name(BufferRole role);

// Bytes of one element of a plain buffer of this type (f32/i32 4, f16/bf16
// 2); 0 for block formats (weights), whose size comes from their layout.
uint64_t element_bytes(GgmlType type);

enum class BufferForm : uint8_t {
  plain,  // elements of `type`
  q8,     // int8 activations: n int8 then n/32 f32 scales (kernels/blocks.h)
  q8x2,   // two-word int8 activations: n int8 high, n int8 low, n/32 f32 scales
};
// Either int8 form.
inline bool is_int8_form(BufferForm form) { return form != BufferForm::plain; }
// Bytes of an int8 form of n elements.
inline uint64_t int8_form_bytes(BufferForm form, int64_t n) {
  const uint64_t values = static_cast<uint64_t>(n) * (form == BufferForm::q8x2 ? 2u : 1u);
  return values + static_cast<uint64_t>(n / 32) * 4;
}

struct Buffer {
  std::string name;            // unique; the tensor's name, "<tensor>.q8" for int8 forms
  BufferRole role = BufferRole::activation;
  BufferForm form = BufferForm::plain;
  GgmlType type = GgmlType::F32;   // element type: weights their format, caches f32/f16
  std::vector<int64_t> shape;  // outermost first, in the buffer's layout
  int64_t elements = 0;
  uint64_t bytes = 0;          // 0 for a view (it owns no storage)
  std::string tensor;          // the step-graph tensor it holds (empty for workspaces)
  std::string gguf_name;       // weights: the GGUF tensor to upload
  std::string layout;          // "" (row-major as shaped), "head_major" (KV caches) or
                               // "q8_0_cols" (the down weight of an ffn launch, repacked at load)
  std::string view_of;         // non-empty: a view into this buffer
  int64_t view_offset = 0;     // elements into view_of

  bool is_view() const { return !view_of.empty(); }
};

// ---- census -----------------------------------------------------------------

// What one rule did over the whole plan.
struct RuleCount {
  std::string rule;
  std::string status;          // "active", "held", or "waiting for architecture X"
  int matched = 0;             // sites where the pattern matched
  int fired = 0;               // sites rewritten
  std::map<std::string, int> declined;  // reason -> sites
};

// One firing: the rule and the step-graph ops it covered.
struct Firing {
  std::string rule;
  std::vector<size_t> ops;     // sorted
};

struct Census {
  std::map<std::string, int> launches;       // launch kind name -> count
  std::vector<RuleCount> rules;              // registry order, all 33 rules
  std::map<std::string, uint64_t> buffer_bytes;  // role name -> bytes (views count 0)
  uint64_t weight_bytes_per_step = 0;        // bytes of weights the launches read once per step
};

// ---- the schedule -----------------------------------------------------------

struct Schedule {
  std::string arch;                // model architecture ("llama")
  std::string model_name;          // general.name, for headers
  Knobs knobs;
  std::vector<std::string> held;   // rules held back, registry order
  std::vector<Launch> launches;
  std::vector<Buffer> buffers;     // sorted by name
  std::vector<Firing> firings;     // in the order they fired
  std::vector<std::string> outputs;  // buffers holding the graph outputs (logits, token)
  Census census;

  const Buffer* find_buffer(const std::string& name) const;
  // Error (internal) when absent.
  const Buffer& buffer(const std::string& name) const;
  // Follows views to the buffer that owns the storage; adds up offsets.
  std::pair<const Buffer*, int64_t> storage_of(const std::string& name) const;
  // The same with the offset in bytes (what the emitter adds to the owning
  // allocation's device pointer).
  std::pair<const Buffer*, uint64_t> storage_bytes_of(const std::string& name) const;
  // Weight bytes launch `l` streams once a step (Launch::weight_bytes_read
  // over its weight buffers): the census's count and the early-trigger rule's.
  uint64_t weight_bytes_read(const Launch& l) const;

  // The step's inputs and outputs, answered here once for their readers
  // (the emitter, the CPU schedule executor, `lanec ref`):
  // The last argmax launch (greedy token; it advances token and pos on the
  // device); nullptr when the schedule has none.
  const ArgmaxLaunch* find_argmax() const;
  // The i32 [1] param buffer fed the step's token: the argmax's, else the
  // embed launch's, else the step graph's name "token".
  std::string token_param() const;
  // The i32 [1] param buffer fed the step's position: the argmax's, else "pos".
  std::string pos_param() const;
  // The logits: the first f32 output; empty when there is none.
  std::string logits_output() const;
};

}  // namespace lanec
