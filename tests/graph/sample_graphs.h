// Hand-built step graphs for the graph tests: a one-layer llama-like decode
// step, and a graph that uses every op kind (the dense, MoE, gated-delta-net
// and gpt-oss shapes of docs/ir.md) at tiny sizes.
#pragma once

#include "lib/graph/builder.h"

namespace lanec::test {

struct LlamaDims {
  int64_t d = 64, n_head = 4, n_kv = 2, head_dim = 16, ff = 128, vocab = 100, ctx = 32;
};

inline Graph build_llama_1layer(const LlamaDims& m = {}) {
  GraphBuilder b;
  b.set_metadata("arch", std::string("llama"));
  b.set_metadata("n_layer", int64_t{1});
  b.set_metadata("rms_eps", 1e-5);
  const GgmlType q8 = GgmlType::Q8_0, f32 = GgmlType::F32;
  TensorId token = b.param("token", GgmlType::I32, {1});
  TensorId pos = b.param("pos", GgmlType::I32, {1});
  TensorId embd = b.constant("token_embd.weight", q8, {m.vocab, m.d});
  TensorId attn_norm_w = b.constant("blk.0.attn_norm.weight", f32, {m.d});
  TensorId wq = b.constant("blk.0.attn_q.weight", q8, {m.n_head * m.head_dim, m.d});
  TensorId wk = b.constant("blk.0.attn_k.weight", q8, {m.n_kv * m.head_dim, m.d});
  TensorId wv = b.constant("blk.0.attn_v.weight", q8, {m.n_kv * m.head_dim, m.d});
  TensorId wo = b.constant("blk.0.attn_output.weight", q8, {m.d, m.n_head * m.head_dim});
  TensorId ffn_norm_w = b.constant("blk.0.ffn_norm.weight", f32, {m.d});
  TensorId wg = b.constant("blk.0.ffn_gate.weight", q8, {m.ff, m.d});
  TensorId wu = b.constant("blk.0.ffn_up.weight", q8, {m.ff, m.d});
  TensorId wd = b.constant("blk.0.ffn_down.weight", q8, {m.d, m.ff});
  TensorId out_norm_w = b.constant("output_norm.weight", f32, {m.d});
  TensorId w_out = b.constant("output.weight", GgmlType::Q6_K, {m.vocab, m.d});
  TensorId k_cache = b.state("cache_k_l00", f32, {m.ctx, m.n_kv, m.head_dim});
  TensorId v_cache = b.state("cache_v_l00", f32, {m.ctx, m.n_kv, m.head_dim});

  Attrs eps{{"eps", 1e-5}};
  Attrs rope{{"mode", std::string("norm")}, {"n_rot", m.head_dim}, {"freq_base", 10000.0}};
  TensorId x = b.apply(OpKind::embed_get_rows, "x_l00", {m.d}, {embd, token});
  TensorId n = b.apply_like(OpKind::rms_norm, "attn_norm_l00", {x, attn_norm_w}, eps);
  TensorId q = b.apply(OpKind::matmul, "q_l00", {m.n_head, m.head_dim}, {n, wq});
  TensorId k = b.apply(OpKind::matmul, "k_l00", {m.n_kv, m.head_dim}, {n, wk});
  TensorId v = b.apply(OpKind::matmul, "v_l00", {m.n_kv, m.head_dim}, {n, wv});
  TensorId qr = b.apply_like(OpKind::rope, "q_rope_l00", {q, pos}, rope);
  TensorId kr = b.apply_like(OpKind::rope, "k_rope_l00", {k, pos}, rope);
  b.op(OpKind::kv_write, {kr, pos}, {k_cache});
  b.op(OpKind::kv_write, {v, pos}, {v_cache});
  TensorId att = b.apply(OpKind::attention, "attn_l00", {m.n_head, m.head_dim},
                         {qr, k_cache, v_cache, pos}, {{"scale", 0.25}});
  TensorId ao = b.apply(OpKind::matmul, "attn_out_l00", {m.d}, {att, wo});
  TensorId h = b.apply_like(OpKind::add, "attn_res_l00", {x, ao});
  TensorId fn = b.apply_like(OpKind::rms_norm, "ffn_norm_l00", {h, ffn_norm_w}, eps);
  TensorId g = b.apply(OpKind::matmul, "ffn_gate_l00", {m.ff}, {fn, wg});
  TensorId u = b.apply(OpKind::matmul, "ffn_up_l00", {m.ff}, {fn, wu});
  TensorId act = b.apply_like(OpKind::swiglu, "ffn_act_l00", {g, u});
  TensorId down = b.apply(OpKind::matmul, "ffn_down_l00", {m.d}, {act, wd});
  TensorId x1 = b.apply_like(OpKind::add, "x_l01", {h, down});
  TensorId on = b.apply_like(OpKind::rms_norm, "output_norm", {x1, out_norm_w}, eps);
  TensorId logits = b.apply(OpKind::matmul, "logits", {m.vocab}, {on, w_out});
  TensorId next = b.apply(OpKind::argmax, "next_token", {1}, {logits}, {}, GgmlType::I32);
  b.output(logits);
  b.output(next);
  return b.finish();
}

// One graph that uses every op kind, wired as the architectures of docs/ir.md
// use them (not a whole model: a tour of the vocabulary).
inline Graph build_every_kind() {
  GraphBuilder b;
  b.set_metadata("arch", std::string("tour"));
  b.set_metadata("note", std::string("quote \" backslash \\ tab \t"));
  const GgmlType f32 = GgmlType::F32, i32 = GgmlType::I32;
  const int64_t d = 32;
  TensorId token = b.param("token", i32, {1});
  TensorId pos = b.param("pos", i32, {1});
  TensorId embd = b.constant("token_embd.weight", GgmlType::BF16, {50, d});
  TensorId norm_w = b.constant("blk.0.attn_norm.weight", f32, {d});
  // gemma3: scaled embedding, GELU, sliding window
  TensorId x0 = b.apply(OpKind::embed_get_rows, "embd", {d}, {embd, token});
  TensorId x = b.apply_like(OpKind::scale, "x_l00", {x0}, {{"scale", 5.656854249492381}});
  TensorId n = b.apply_like(OpKind::rms_norm, "attn_norm_l00", {x, norm_w}, {{"eps", 1e-6}});

  // attention with a packed q+gate projection (qwen3next), per-head norm,
  // neox partial rope with freq factors, sinks and a sliding window (gpt-oss).
  TensorId wqg = b.constant("blk.0.attn_q.weight", GgmlType::Q8_0, {4 * 16, d});
  TensorId wk = b.constant("blk.0.attn_k.weight", GgmlType::Q4_K, {2 * 8, d});
  TensorId wv = b.constant("blk.0.attn_v.weight", GgmlType::Q5_0, {2 * 8, d});
  TensorId bk = b.constant("blk.0.attn_k.bias", f32, {2, 8});
  TensorId qnorm = b.constant("blk.0.attn_q_norm.weight", f32, {8});
  TensorId ff = b.constant("rope_freqs.weight", f32, {2});
  TensorId sinks = b.constant("blk.0.attn_sinks.weight", f32, {4});
  TensorId kc = b.state("cache_k_l00", GgmlType::F16, {8, 2, 8});
  TensorId vc = b.state("cache_v_l00", GgmlType::F16, {8, 2, 8});
  TensorId qg = b.apply(OpKind::matmul, "qg_l00", {4, 16}, {n, wqg});
  TensorId q = b.apply(OpKind::slice, "q_l00", {4, 8}, {qg}, {{"offset", int64_t{0}}});
  TensorId gate = b.apply(OpKind::slice, "q_gate_l00", {4, 8}, {qg}, {{"offset", int64_t{8}}});
  TensorId k0 = b.apply(OpKind::matmul, "k0_l00", {2, 8}, {n, wk});
  TensorId k = b.apply_like(OpKind::add, "k_l00", {k0, bk});
  TensorId v = b.apply(OpKind::matmul, "v_l00", {2, 8}, {n, wv});
  TensorId qn = b.apply_like(OpKind::head_rms_norm, "q_norm_l00", {q, qnorm}, {{"eps", 1e-6}});
  Attrs rope{{"mode", std::string("neox")}, {"n_rot", int64_t{4}}, {"freq_base", 1e6},
             {"freq_scale", 0.25}, {"ext_factor", 1.0}, {"attn_factor", 1.0},
             {"beta_fast", 32.0}, {"beta_slow", 1.0}, {"n_ctx_orig", int64_t{4096}}};
  TensorId qr = b.apply_like(OpKind::rope, "q_rope_l00", {qn, pos, ff}, rope);
  TensorId kr = b.apply_like(OpKind::rope, "k_rope_l00", {k, pos, ff}, rope);
  b.op(OpKind::kv_write, {kr, pos}, {kc});
  b.op(OpKind::kv_write, {v, pos}, {vc});
  TensorId att = b.apply(OpKind::attention, "attn_l00", {4, 8}, {qr, kc, vc, pos, sinks},
                         {{"scale", 0.35355339059327379}, {"window", int64_t{8}}});
  TensorId sg = b.apply_like(OpKind::sigmoid, "attn_gate_l00", {gate});
  TensorId gated = b.apply_like(OpKind::mul, "attn_gated_l00", {att, sg});
  TensorId flat = b.apply(OpKind::reshape, "attn_flat_l00", {32}, {gated});

  // MoE (qwen3moe / gpt-oss) with biases and the clamped swiglu.
  TensorId wr = b.constant("blk.0.ffn_gate_inp.weight", f32, {4, d});
  TensorId ge = b.constant("blk.0.ffn_gate_exps.weight", GgmlType::MXFP4, {4, 64, d});
  TensorId ue = b.constant("blk.0.ffn_up_exps.weight", GgmlType::MXFP4, {4, 64, d});
  TensorId de = b.constant("blk.0.ffn_down_exps.weight", GgmlType::MXFP4, {4, d, 64});
  TensorId gb = b.constant("blk.0.ffn_gate_exps.bias", f32, {4, 64});
  TensorId ub = b.constant("blk.0.ffn_up_exps.bias", f32, {4, 64});
  TensorId db = b.constant("blk.0.ffn_down_exps.bias", f32, {4, d});
  TensorId rl = b.apply(OpKind::matmul, "router_l00", {4}, {flat, wr});
  TensorId ids = b.activation("expert_ids_l00", {2}, i32);
  TensorId wts = b.activation("expert_weights_l00", {2});
  b.op(OpKind::moe_route, {rl}, {ids, wts},
       {{"k", int64_t{2}}, {"gating", std::string("topk_softmax")}, {"normalize", int64_t{0}}});
  TensorId moe = b.apply(OpKind::moe_experts, "moe_l00", {d}, {flat, ids, wts, ge, ue, de, gb, ub, db},
                         {{"act", std::string("swiglu_oai")}, {"alpha", 1.702}, {"limit", 7.0}});

  // Gated delta net (qwen3next): conv ring, l2 norms, gates, recurrence.
  TensorId conv_w = b.constant("blk.1.ssm_conv1d.weight", f32, {24, 4});
  TensorId ring = b.state("conv_ring_l01", f32, {3, 24});
  TensorId dstate = b.state("delta_state_l01", GgmlType::BF16, {4, 4, 2});
  TensorId ssm_a = b.constant("blk.1.ssm_a", f32, {4});
  TensorId dt_b = b.constant("blk.1.ssm_dt.bias", f32, {4});
  TensorId mix = b.apply(OpKind::slice, "qkv_mixed_l01", {24}, {moe}, {{"offset", int64_t{8}}});
  TensorId conv = b.activation("conv_l01", {24});
  b.op(OpKind::short_conv, {mix, conv_w}, {conv, ring});
  TensorId cs = b.apply_like(OpKind::silu, "conv_silu_l01", {conv});
  TensorId cq = b.apply(OpKind::slice, "dq_l01", {4}, {cs}, {{"offset", int64_t{0}}});
  TensorId ck = b.apply(OpKind::slice, "dk_l01", {4}, {cs}, {{"offset", int64_t{4}}});
  TensorId cv = b.apply(OpKind::slice, "dv_l01", {8}, {cs}, {{"offset", int64_t{8}}});
  TensorId q2 = b.apply(OpKind::reshape, "dq_heads_l01", {1, 4}, {cq});
  TensorId k2 = b.apply(OpKind::reshape, "dk_heads_l01", {1, 4}, {ck});
  TensorId v2 = b.apply(OpKind::reshape, "dv_heads_l01", {4, 2}, {cv});
  TensorId ql = b.apply_like(OpKind::l2_norm, "dq_l2_l01", {q2}, {{"eps", 1e-6}});
  TensorId kl = b.apply_like(OpKind::l2_norm, "dk_l2_l01", {k2}, {{"eps", 1e-6}});
  TensorId alpha = b.apply(OpKind::slice, "alpha_l01", {4}, {cs}, {{"offset", int64_t{16}}});
  TensorId beta_raw = b.apply(OpKind::slice, "beta_raw_l01", {4}, {cs}, {{"offset", int64_t{20}}});
  TensorId ab = b.apply_like(OpKind::add, "alpha_biased_l01", {alpha, dt_b});
  TensorId sp = b.apply_like(OpKind::softplus, "alpha_sp_l01", {ab});
  TensorId g = b.apply_like(OpKind::mul, "decay_l01", {sp, ssm_a});
  TensorId beta = b.apply_like(OpKind::sigmoid, "beta_l01", {beta_raw});
  TensorId delta = b.activation("delta_l01", {4, 2});
  b.op(OpKind::gated_delta_rule, {ql, kl, v2, g, beta}, {delta, dstate},
       {{"scale", 0.5}, {"head_repeat", std::string("interleave")}});
  TensorId dflat = b.apply(OpKind::reshape, "delta_flat_l01", {8}, {delta});

  // Remaining elementwise kinds and the output.
  TensorId e = b.apply_like(OpKind::exp, "exp_l01", {dflat});
  TensorId ge2 = b.apply_like(OpKind::gelu, "gelu_l01", {e});
  TensorId gg = b.apply_like(OpKind::geglu, "geglu_l01", {ge2, dflat});
  TensorId sw = b.apply_like(OpKind::swiglu, "swiglu_l01", {gg, dflat});
  TensorId so = b.apply_like(OpKind::swiglu_oai, "swiglu_oai_l01", {sw, dflat},
                             {{"alpha", 1.702}, {"limit", 7.0}});
  TensorId cat = b.apply(OpKind::concat, "cat_l01", {40}, {so, moe});
  TensorId sm = b.apply_like(OpKind::softmax, "probs", {cat});
  TensorId next = b.apply(OpKind::argmax, "next_token", {1}, {sm}, {}, i32);
  b.output(sm);
  b.output(next);
  return b.finish();
}

}  // namespace lanec::test
