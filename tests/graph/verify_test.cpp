// The verifier: each kind of error, with the message it must give.
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "lib/graph/verify.h"
#include "tests/graph/sample_graphs.h"

using namespace lanec;

namespace {

// The verifier's message for g; fails the test when g verifies.
std::string verify_error(const Graph& g) {
  try {
    verify_graph(g);
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected verify_graph to reject the graph");
  return "";
}

Op& op_at(Graph& g, size_t i) { return g.mutable_ops()[i]; }

size_t find_op(const Graph& g, OpKind kind) {
  for (size_t i = 0; i < g.ops().size(); ++i)
    if (g.ops()[i].kind == kind) return i;
  FAIL("no op of the kind");
  return 0;
}

}  // namespace

TEST_CASE("verifier: operand counts", "[graph]") {
  Graph g = test::build_llama_1layer();
  op_at(g, 1).inputs.pop_back();
  CHECK(verify_error(g) == "op #1 (rms_norm -> attn_norm_l00): expected 2 inputs, got 1");

  Graph t = test::build_every_kind();
  op_at(t, find_op(t, OpKind::moe_experts)).inputs.pop_back();
  CHECK_THAT(verify_error(t), Catch::Contains("(moe_experts -> moe_l00): expected 6 inputs (no "
                                              "biases) or 9 (with gate, up and down biases), got 8"));
}

TEST_CASE("verifier: shapes", "[graph]") {
  SECTION("norm weight") {
    Graph g = test::build_llama_1layer();
    g.tensor(g.id_of("blk.0.attn_norm.weight")).shape = {32};
    CHECK(verify_error(g) ==
          "op #1 (rms_norm -> attn_norm_l00): input 1 (weight blk.0.attn_norm.weight): expected "
          "shape [64], got [32]");
  }
  SECTION("matmul output elements") {
    Graph g = test::build_llama_1layer();
    g.tensor(g.id_of("q_l00")).shape = {4, 8};
    CHECK(verify_error(g) ==
          "op #2 (matmul -> q_l00): output 0 (y q_l00): expected 64 elements, got 32 (shape [4, 8])");
  }
  SECTION("cache row shape") {
    Graph g = test::build_llama_1layer();
    g.tensor(g.id_of("cache_k_l00")).shape = {32, 3, 16};
    CHECK(verify_error(g) ==
          "op #7 (kv_write -> cache_k_l00): output 0 (cache cache_k_l00): expected shape "
          "[32, 2, 16], got [32, 3, 16]");
  }
  SECTION("broadcast operand") {
    Graph g = test::build_llama_1layer();
    g.tensor(g.id_of("attn_out_l00")).shape = {8, 8};
    op_at(g, 11).inputs[0] = g.id_of("attn_out_l00");
    op_at(g, 11).inputs[1] = g.id_of("x_l00");
    CHECK(verify_error(g) ==
          "op #11 (add -> attn_res_l00): input 1 (b x_l00): expected shape [8, 8], a suffix of it "
          "or one element, got [64]");
  }
  SECTION("grouped heads") {
    test::LlamaDims m;
    m.n_head = 3;
    m.n_kv = 2;
    CHECK_THROWS_WITH(test::build_llama_1layer(m),
                      "op #9 (attention -> attn_l00): input 0 (q q_rope_l00): expected a head "
                      "count divisible by the 2 kv heads of cache_k_l00, got 3");
  }
}

TEST_CASE("verifier: element types and roles of operands", "[graph]") {
  Graph g = test::build_llama_1layer();
  SECTION("position is i32") {
    g.tensor(g.id_of("pos")).type = GgmlType::F32;
    CHECK(verify_error(g) ==
          "op #5 (rope -> q_rope_l00): input 1 (pos pos): expected element type i32, got f32");
  }
  SECTION("matmul weight is a constant") {
    op_at(g, 2).inputs[1] = g.id_of("x_l00");
    CHECK(verify_error(g) ==
          "op #2 (matmul -> q_l00): input 1 (weight x_l00): expected role const, got act");
  }
  SECTION("activation types") {
    g.tensor(g.id_of("x_l00")).type = GgmlType::F16;
    CHECK(verify_error(g) == "act x_l00: expected element type f32 or i32, got f16");
  }
  SECTION("state types") {
    g.tensor(g.id_of("cache_v_l00")).type = GgmlType::Q8_0;
    CHECK(verify_error(g) == "state cache_v_l00: expected element type f32, f16 or bf16, got q8_0");
  }
  SECTION("constants name their GGUF tensor") {
    g.tensor(g.id_of("output.weight")).gguf_name.clear();
    CHECK(verify_error(g) ==
          "const output.weight: expected a GGUF tensor name (gguf=\"...\"), got none");
  }
  SECTION("only constants name a GGUF tensor") {
    g.tensor(g.id_of("x_l00")).gguf_name = "token_embd.weight";
    CHECK(verify_error(g) ==
          "act x_l00: only constants name a GGUF tensor, got gguf=\"token_embd.weight\"");
  }
}

TEST_CASE("verifier: attributes", "[graph]") {
  Graph g = test::build_llama_1layer();
  SECTION("missing") {
    op_at(g, 1).attrs.erase("eps");
    CHECK(verify_error(g) == "op #1 (rms_norm -> attn_norm_l00): missing attribute 'eps' (float)");
  }
  SECTION("unknown") {
    op_at(g, 1).attrs["epsilon"] = 1e-5;
    CHECK(verify_error(g) == "op #1 (rms_norm -> attn_norm_l00): unknown attribute 'epsilon' "
                             "(expected one of: eps)");
  }
  SECTION("wrong type") {
    op_at(g, 9).attrs["scale"] = int64_t{1};
    CHECK(verify_error(g) ==
          "op #9 (attention -> attn_l00): attribute 'scale': expected float, got int");
  }
  SECTION("bad enumerated value") {
    op_at(g, 5).attrs["mode"] = std::string("gptj");
    CHECK(verify_error(g) == "op #5 (rope -> q_rope_l00): attribute 'mode': expected one of "
                             "\"norm\", \"neox\", got \"gptj\"");
  }
  SECTION("rope dims") {
    op_at(g, 5).attrs["n_rot"] = int64_t{17};
    CHECK(verify_error(g) == "op #5 (rope -> q_rope_l00): attribute 'n_rot': expected an even "
                             "value in [2, 16] (head_dim of q_l00), got 17");
  }
  SECTION("window larger than the cache") {
    op_at(g, 9).attrs["window"] = int64_t{64};
    CHECK(verify_error(g) == "op #9 (attention -> attn_l00): attribute 'window': expected 0 "
                             "(none) or a value in [1, 32] (cache rows of cache_k_l00), got 64");
  }
  SECTION("non-positive eps") {
    op_at(g, 12).attrs["eps"] = 0.0;
    CHECK(verify_error(g) ==
          "op #12 (rms_norm -> ffn_norm_l00): attribute 'eps': expected a value > 0");
  }
}

TEST_CASE("verifier: definitions and order", "[graph]") {
  Graph g = test::build_llama_1layer();
  SECTION("defined twice") {
    op_at(g, 11).outputs[0] = g.id_of("x_l00");
    CHECK(verify_error(g) ==
          "op #11 (add -> x_l00): writes x_l00, already written by op #0 (embed_get_rows -> "
          "x_l00); every tensor is defined once");
  }
  SECTION("used before defined") {
    std::swap(op_at(g, 1), op_at(g, 2));
    CHECK(verify_error(g) ==
          "op #1 (matmul -> q_l00): input 0 (attn_norm_l00) is used before it is defined by op "
          "#2 (rms_norm -> attn_norm_l00); ops must be in topological order");
  }
  SECTION("used but never defined") {
    TensorId orphan = g.add_tensor(Tensor{"orphan", Role::activation, GgmlType::F32, {64}, ""});
    op_at(g, 11).inputs[1] = orphan;
    CHECK(verify_error(g) ==
          "op #11 (add -> attn_res_l00): input 1 (orphan) is an activation that no op defines");
  }
  SECTION("declared but never defined") {
    g.add_tensor(Tensor{"orphan", Role::activation, GgmlType::F32, {64}, ""});
    CHECK(verify_error(g) == "act orphan: declared but no op defines it");
  }
}

TEST_CASE("verifier: roles of written tensors", "[graph]") {
  Graph g = test::build_llama_1layer();
  SECTION("params are never written") {
    op_at(g, 20).outputs[0] = g.id_of("token");
    CHECK(verify_error(g) == "op #20 (argmax -> token): writes param token; params and constants "
                             "are never written by ops");
  }
  SECTION("constants are never written") {
    op_at(g, 1).outputs[0] = g.id_of("blk.0.ffn_norm.weight");
    CHECK_THAT(verify_error(g), Catch::Contains("writes const blk.0.ffn_norm.weight"));
  }
  SECTION("only state kinds write states") {
    op_at(g, 10).outputs[0] = g.id_of("cache_k_l00");
    CHECK(verify_error(g) == "op #10 (matmul -> cache_k_l00): writes state cache_k_l00; only "
                             "kv_write, short_conv and gated_delta_rule write states");
  }
  SECTION("a state has one writer") {
    op_at(g, 8).outputs[0] = g.id_of("cache_k_l00");
    CHECK(verify_error(g) ==
          "op #8 (kv_write -> cache_k_l00): writes cache_k_l00, already written by op #7 "
          "(kv_write -> cache_k_l00); every tensor is defined once");
  }
  SECTION("a state is read after its update") {
    Op attention = op_at(g, 9);
    g.mutable_ops().erase(g.mutable_ops().begin() + 9);
    g.mutable_ops().insert(g.mutable_ops().begin() + 7, attention);
    CHECK(verify_error(g) == "op #7 (attention -> attn_l00): input 1 (cache_k_l00) reads state "
                             "cache_k_l00 before op #8 (kv_write -> cache_k_l00) updates it; "
                             "readers of a state follow its writer");
  }
  SECTION("a state output must be a state") {
    Graph t = test::build_every_kind();
    size_t conv = find_op(t, OpKind::short_conv);
    TensorId ring = t.ops()[conv].outputs[1];
    t.tensor(ring).role = Role::activation;
    CHECK_THAT(verify_error(t),
               Catch::Contains("(short_conv -> conv_l01): output 1 (ring conv_ring_l01): "
                               "expected role state, got act"));
  }
}

TEST_CASE("verifier: recurrent and expert kinds", "[graph]") {
  Graph t = test::build_every_kind();
  SECTION("delta-rule state shape") {
    t.tensor(t.id_of("delta_state_l01")).shape = {4, 2, 4};
    CHECK_THAT(verify_error(t),
               Catch::Contains("(gated_delta_rule -> delta_l01): output 1 (state "
                               "delta_state_l01): expected shape [4, 4, 2], got [4, 2, 4]"));
  }
  SECTION("moe route k") {
    Op& route = op_at(t, find_op(t, OpKind::moe_route));
    route.attrs["k"] = int64_t{5};
    CHECK_THAT(verify_error(t), Catch::Contains("(moe_route -> expert_ids_l00): attribute 'k': "
                                                "expected a value in [1, 4] (experts in "
                                                "router_l00), got 5"));
  }
  SECTION("clamped experts need alpha and limit") {
    op_at(t, find_op(t, OpKind::moe_experts)).attrs.erase("limit");
    CHECK_THAT(verify_error(t), Catch::Contains("attributes 'alpha' and 'limit': expected exactly "
                                                "when act=\"swiglu_oai\""));
  }
  SECTION("slice range") {
    Op& s = op_at(t, find_op(t, OpKind::slice));
    s.attrs["offset"] = int64_t{9};
    CHECK_THAT(verify_error(t), Catch::Contains("(slice -> q_l00): attribute 'offset': expected a "
                                                "value in [0, 8] (slicing 8 of 16 columns of "
                                                "qg_l00), got 9"));
  }
}

TEST_CASE("verifier: a recurrent op's activation output is not a state", "[graph]") {
  Graph t = test::build_every_kind();
  size_t conv = find_op(t, OpKind::short_conv);
  t.tensor(t.ops()[conv].outputs[0]).role = Role::state;
  CHECK_THAT(verify_error(t), Catch::Contains("(short_conv -> conv_l01): output 0 (y conv_l01): "
                                              "expected role act, got state"));
}

TEST_CASE("verifier: fusion labels are names", "[graph]") {
  Graph g = test::build_llama_1layer();
  op_at(g, 3).fusion = "gemv parts";
  CHECK(verify_error(g) == "op #3 (matmul -> k_l00): fusion label: expected letters, digits, '_', "
                           "'.' and '-', got \"gemv parts\"");
}

TEST_CASE("verifier: a rank-1 matmul weight is one output row", "[graph]") {
  GraphBuilder b;
  TensorId x = b.constant("x_src", GgmlType::F32, {8});
  TensorId gate_w = b.constant("blk.0.ffn_gate_inp_shexp.weight", GgmlType::F32, {8});
  TensorId n = b.apply_like(OpKind::scale, "x", {x}, {{"scale", 1.0}});
  TensorId g = b.matmul("shexp_gate_l00", n, gate_w);
  CHECK(b.tensor(g).shape == std::vector<int64_t>{1});
  CHECK_NOTHROW(b.finish());
  b.graph().tensor(g).shape = {2};
  CHECK(verify_error(b.graph()) == "op #1 (matmul -> shexp_gate_l00): output 0 (y shexp_gate_l00): "
                                   "expected 1 elements, got 2 (shape [2])");
}
