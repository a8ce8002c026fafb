// The sample graphs verify, and every op kind is exercised by one of them.
#include <catch2/catch.hpp>

#include <set>

#include "lib/common/error.h"
#include "lib/graph/verify.h"
#include "tests/graph/sample_graphs.h"

using namespace lanec;

TEST_CASE("a one-layer llama step graph verifies", "[graph]") {
  Graph g = test::build_llama_1layer();
  REQUIRE_NOTHROW(verify_graph(g));
  CHECK(g.ops().size() == 21);
  CHECK(g.tensor(g.id_of("q_l00")).shape == std::vector<int64_t>{4, 16});
  CHECK(g.tensor(g.id_of("blk.0.attn_q.weight")).gguf_name == "blk.0.attn_q.weight");
  CHECK(g.outputs().size() == 2);
}

TEST_CASE("the tour graph uses every op kind and verifies", "[graph]") {
  Graph g = test::build_every_kind();
  REQUIRE_NOTHROW(verify_graph(g));
  std::set<OpKind> used;
  for (const Op& op : g.ops()) used.insert(op.kind);
  for (OpKind kind : all_op_kinds()) {
    INFO(op_kind_name(kind));
    CHECK(used.count(kind) == 1);
  }
}

TEST_CASE("kind, role and type names round trip", "[graph]") {
  for (OpKind kind : all_op_kinds()) CHECK(op_kind_from_name(op_kind_name(kind)) == kind);
  for (Role r : {Role::param, Role::state, Role::constant, Role::activation})
    CHECK(role_from_name(role_name(r)) == r);
  CHECK(elem_type_from_name("q8_0") == GgmlType::Q8_0);
  CHECK(elem_type_from_name("Q8_0") == std::nullopt);
  CHECK(elem_type_is_quantized(GgmlType::MXFP4));
  CHECK_FALSE(elem_type_is_quantized(GgmlType::BF16));
}

TEST_CASE("the IR names exactly its element types, in lower case", "[graph]") {
  const std::set<std::string> expected = {"f32",  "f16",  "bf16", "i32",  "q8_0",
                                          "q4_0", "q4_1", "q5_0", "q5_1", "q2_k",
                                          "q3_k", "q4_k", "q5_k", "q6_k", "mxfp4"};
  const std::set<std::string> quantized = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1",
                                           "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "mxfp4"};
  std::set<std::string> named;
  for (const GgmlTypeTraits& row : kGgmlTypes) {
    const char* name = elem_type_name(row.type);
    if (name == nullptr) continue;
    CAPTURE(name);
    named.insert(name);
    CHECK(elem_type_from_name(name) == row.type);
    CHECK(elem_type_is_quantized(row.type) == (quantized.count(name) == 1));
  }
  CHECK(named == expected);
  CHECK(elem_type_name(GgmlType::IQ4_NL) == nullptr);
  CHECK(elem_type_from_name("q4_K") == std::nullopt);
  CHECK_FALSE(elem_type_is_quantized(GgmlType::Q8_1));
}

TEST_CASE("builder helpers", "[graph]") {
  CHECK(layer_name("attn_norm", 3) == "attn_norm_l03");
  CHECK(layer_name("x", 47) == "x_l47");
  GraphBuilder b;
  TensorId w = b.constant_from_ne("blk.0.attn_q.weight", GgmlType::Q8_0, {1024, 2048});
  CHECK(b.tensor(w).shape == std::vector<int64_t>{2048, 1024});
  CHECK(b.tensor(w).cols() == 1024);
  CHECK_THROWS_WITH(b.activation("blk.0.attn_q.weight", {4}),
                    "tensor blk.0.attn_q.weight: declared twice");
  CHECK_THROWS_WITH(b.activation("bad name", {4}),
                    Catch::Contains("expected a name of letters, digits"));
  CHECK_THROWS_WITH(b.activation("zero", {4, 0}),
                    "tensor zero: expected every dim >= 1, got [4, 0]");
}

TEST_CASE("typed attribute access names the key", "[graph]") {
  Op op{OpKind::rope, {}, {}, {{"n_rot", int64_t{64}}, {"mode", std::string("neox")}}};
  CHECK(op.get_int("n_rot") == 64);
  CHECK(op.get_float("n_rot") == 64.0);
  CHECK(op.get_string("mode") == "neox");
  CHECK(op.get_float_or("freq_scale", 1.0) == 1.0);
  CHECK_THROWS_WITH(op.get_float("freq_base"), "op rope: missing attribute 'freq_base'");
  CHECK_THROWS_WITH(op.get_int("mode"), "op rope: attribute 'mode' expected int, got string");
}

TEST_CASE("producers and consumers", "[graph]") {
  Graph g = test::build_llama_1layer();
  GraphUses uses = compute_uses(g);
  TensorId n = g.id_of("attn_norm_l00");
  CHECK(uses.producer[n] == size_t{1});
  CHECK(uses.consumers[n] == std::vector<size_t>{2, 3, 4});
  TensorId cache = g.id_of("cache_k_l00");
  CHECK(uses.producer[cache] == size_t{7});
  CHECK(uses.consumers[cache] == std::vector<size_t>{9});
  CHECK_FALSE(uses.producer[g.id_of("pos")].has_value());
}

TEST_CASE("removing unused activations renumbers the graph", "[graph]") {
  Graph g = test::build_llama_1layer();
  Graph original = g;
  CHECK(remove_unused_activations(g) == 0);
  CHECK(g == original);

  // Fuse swiglu's producers away by hand: ffn_act reads the norm directly
  // through a stand-in, leaving ffn_gate/ffn_up dead once their ops go.
  auto& ops = g.mutable_ops();
  ops.erase(ops.begin() + 13, ops.begin() + 15);  // the gate and up matmuls
  ops[13].inputs = {g.id_of("ffn_norm_l00"), g.id_of("ffn_norm_l00")};
  g.tensor(g.id_of("ffn_act_l00")).shape = {64};
  g.tensor(g.id_of("blk.0.ffn_down.weight")).shape = {64, 64};
  CHECK(remove_unused_activations(g) == 2);
  CHECK_FALSE(g.find("ffn_gate_l00").has_value());
  CHECK_FALSE(g.find("ffn_up_l00").has_value());
  CHECK(g.tensor(g.ops()[13].outputs[0]).name == "ffn_act_l00");
  CHECK(g.tensor(g.outputs()[1]).name == "next_token");
  CHECK_NOTHROW(verify_graph(g));
}

TEST_CASE("typed builder helpers build the same graph as generic ops", "[graph]") {
  test::LlamaDims m;
  GraphBuilder b;
  b.set_metadata("arch", std::string("llama"));
  b.set_metadata("n_layer", int64_t{1});
  b.set_metadata("rms_eps", 1e-5);
  const GgmlType q8 = GgmlType::Q8_0, f32 = GgmlType::F32;
  TensorId token = b.param("token", GgmlType::I32, {1});
  TensorId pos = b.param("pos", GgmlType::I32, {1});
  TensorId embd = b.constant("token_embd.weight", q8, {m.vocab, m.d});
  TensorId attn_norm_w = b.constant("blk.0.attn_norm.weight", f32, {m.d});
  TensorId wq = b.constant("blk.0.attn_q.weight", q8, {64, m.d});
  TensorId wk = b.constant("blk.0.attn_k.weight", q8, {32, m.d});
  TensorId wv = b.constant("blk.0.attn_v.weight", q8, {32, m.d});
  TensorId wo = b.constant("blk.0.attn_output.weight", q8, {m.d, 64});
  TensorId ffn_norm_w = b.constant("blk.0.ffn_norm.weight", f32, {m.d});
  TensorId wg = b.constant("blk.0.ffn_gate.weight", q8, {m.ff, m.d});
  TensorId wu = b.constant("blk.0.ffn_up.weight", q8, {m.ff, m.d});
  TensorId wd = b.constant("blk.0.ffn_down.weight", q8, {m.d, m.ff});
  TensorId out_norm_w = b.constant("output_norm.weight", f32, {m.d});
  TensorId w_out = b.constant("output.weight", GgmlType::Q6_K, {m.vocab, m.d});
  TensorId kc = b.state("cache_k_l00", f32, {m.ctx, m.n_kv, m.head_dim});
  TensorId vc = b.state("cache_v_l00", f32, {m.ctx, m.n_kv, m.head_dim});

  GraphBuilder::RopeSpec rope;
  rope.mode = "norm";
  rope.n_rot = m.head_dim;
  rope.freq_base = 10000.0;
  TensorId x = b.apply(OpKind::embed_get_rows, "x_l00", {m.d}, {embd, token});
  TensorId n = b.rms_norm(layer_name("attn_norm", 0), x, attn_norm_w, 1e-5);
  TensorId q = b.matmul("q_l00", n, wq, {m.n_head, m.head_dim});
  TensorId k = b.matmul("k_l00", n, wk, {m.n_kv, m.head_dim});
  TensorId v = b.matmul("v_l00", n, wv, {m.n_kv, m.head_dim});
  TensorId qr = b.rope("q_rope_l00", q, pos, rope);
  TensorId kr = b.rope("k_rope_l00", k, pos, rope);
  b.kv_write(kc, kr, pos);
  b.kv_write(vc, v, pos);
  TensorId att = b.attention("attn_l00", qr, kc, vc, pos, 0.25);
  TensorId ao = b.matmul("attn_out_l00", att, wo);
  TensorId h = b.add("attn_res_l00", x, ao);
  TensorId fn = b.rms_norm("ffn_norm_l00", h, ffn_norm_w, 1e-5);
  TensorId g = b.matmul("ffn_gate_l00", fn, wg);
  TensorId u = b.matmul("ffn_up_l00", fn, wu);
  TensorId act = b.apply_like(OpKind::swiglu, "ffn_act_l00", {g, u});
  TensorId down = b.matmul("ffn_down_l00", act, wd);
  TensorId x1 = b.add("x_l01", h, down);
  TensorId on = b.rms_norm("output_norm", x1, out_norm_w, 1e-5);
  TensorId logits = b.matmul("logits", on, w_out);
  b.output(logits);
  b.output(b.argmax("next_token", logits));
  CHECK(b.finish() == test::build_llama_1layer());
}

TEST_CASE("typed helpers for windows, sinks, routing and views", "[graph]") {
  GraphBuilder b;
  TensorId pos = b.param("pos", GgmlType::I32, {1});
  TensorId q = b.activation("q", {4, 8});
  TensorId kc = b.state("kc", GgmlType::F16, {16, 2, 8});
  TensorId vc = b.state("vc", GgmlType::F16, {16, 2, 6});
  TensorId sinks = b.constant("blk.0.attn_sinks.weight", GgmlType::F32, {4});
  TensorId att = b.attention("att", q, kc, vc, pos, 0.5, 16, sinks);
  CHECK(b.tensor(att).shape == std::vector<int64_t>{4, 6});
  const Op& op = b.graph().ops().back();
  CHECK(op.get_int("window") == 16);
  CHECK(op.inputs.size() == 5);
  TensorId s = b.slice("s", att, 2, 3);
  CHECK(b.tensor(s).shape == std::vector<int64_t>{4, 3});
  TensorId r = b.reshape("r", s, {12});
  auto [ids, weights] = b.moe_route("ids", "w", r, 3, "softmax_topk", true);
  CHECK(b.tensor(ids).type == GgmlType::I32);
  CHECK(b.tensor(weights).shape == std::vector<int64_t>{3});
  CHECK(b.graph().ops().back().get_int("normalize") == 1);
}
