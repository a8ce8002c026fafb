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
