// Recognizers on tiny synthetic models: graph structure per architecture,
// tied and untied heads, GQA and head sizes, RoPE layouts, and the errors for
// unknown architectures and missing or misshapen tensors.
#include <catch2/catch.hpp>

#include "lib/common/error.h"
#include "lib/graph/recognize/recognize.h"
#include "lib/graph/text.h"
#include "lib/graph/verify.h"
#include "tests/recognize/tiny_models.h"

using namespace lanec;
using lanec::testing::make_tiny_model;
using lanec::testing::TinyOptions;

namespace {

const Op& op_defining(const Graph& g, const std::string& name) {
  const TensorId id = g.id_of(name);
  for (const Op& op : g.ops())
    for (TensorId out : op.outputs)
      if (out == id) return op;
  FAIL("no op defines " << name);
  throw std::logic_error("unreachable");
}

std::string input_name(const Graph& g, const Op& op, size_t i) {
  return g.tensor(op.inputs.at(i)).name;
}

size_t count_kind(const Graph& g, OpKind kind) {
  size_t n = 0;
  for (const Op& op : g.ops()) n += op.kind == kind;
  return n;
}

}  // namespace

TEST_CASE("qwen3 recognizer: per-head Q/K norm before NEOX rope, GQA, head_dim from key_length",
          "[ref][recognize]") {
  for (bool tied : {true, false}) {
    TinyOptions o;
    o.tied = tied;
    auto m = make_tiny_model("qwen3-tiny", o);
    const Graph g = recognize_model(*m->gguf);
    REQUIRE_NOTHROW(verify_graph(g));
    CHECK(std::get<std::string>(g.metadata().at("arch")) == "qwen3");
    CHECK(std::get<int64_t>(g.metadata().at("head_dim")) == 32);  // != 64 / 4
    CHECK(std::get<int64_t>(g.metadata().at("n_layer")) == 2);

    CHECK(g.tensor(g.id_of("q_l00")).shape == std::vector<int64_t>{4, 32});
    CHECK(g.tensor(g.id_of("k_l00")).shape == std::vector<int64_t>{2, 32});
    const Op& q_norm = op_defining(g, "q_norm_l01");
    CHECK(q_norm.kind == OpKind::head_rms_norm);
    CHECK(input_name(g, q_norm, 1) == "blk.1.attn_q_norm.weight");
    const Op& k_rope = op_defining(g, "k_rope_l01");
    CHECK(k_rope.kind == OpKind::rope);
    CHECK(input_name(g, k_rope, 0) == "k_norm_l01");
    CHECK(k_rope.get_string("mode") == "neox");
    CHECK(k_rope.get_int("n_rot") == 32);
    CHECK(k_rope.get_float("freq_base") == 1000000.0);
    CHECK(count_kind(g, OpKind::add) == 4);  // two residuals a layer, no biases

    const Op& attn = op_defining(g, "attn_l00");
    CHECK(input_name(g, attn, 1) == "cache_k_l00");
    CHECK(attn.get_float("scale") == Approx(1.0 / std::sqrt(32.0)));
    CHECK(g.tensor(g.id_of("cache_v_l01")).shape == std::vector<int64_t>{256, 2, 32});
    CHECK(g.tensor(g.id_of("cache_v_l01")).role == Role::state);

    const Op& logits = op_defining(g, "logits");
    CHECK(input_name(g, logits, 1) == (tied ? "token_embd.weight" : "output.weight"));
    CHECK(g.find("output.weight").has_value() == !tied);
    REQUIRE(g.outputs().size() == 2);
    CHECK(g.tensor(g.outputs()[0]).name == "logits");
    CHECK(g.tensor(g.outputs()[0]).shape == std::vector<int64_t>{512});
    CHECK(g.tensor(g.outputs()[1]).name == "next_token");
    CHECK(g.tensor(g.outputs()[1]).type == GgmlType::I32);
    CHECK(op_defining(g, "next_token").kind == OpKind::argmax);
  }
}

TEST_CASE("qwen2 recognizer: Q/K/V biases added before NEOX rope", "[ref][recognize]") {
  for (bool tied : {true, false}) {
    TinyOptions o;
    o.tied = tied;
    auto m = make_tiny_model("qwen2-tiny", o);
    const Graph g = recognize_model(*m->gguf);
    CHECK(std::get<std::string>(g.metadata().at("arch")) == "qwen2");
    for (const char* p : {"q", "k", "v"}) {
      const Op& bias = op_defining(g, std::string(p) + "_bias_l00");
      CHECK(bias.kind == OpKind::add);
      CHECK(input_name(g, bias, 1) == std::string("blk.0.attn_") + p + ".bias");
      const Op& heads = op_defining(g, std::string(p) + "_l00");
      CHECK(heads.kind == OpKind::reshape);
    }
    CHECK(g.tensor(g.id_of("k_l00")).shape == std::vector<int64_t>{1, 32});
    CHECK(op_defining(g, "q_rope_l00").get_string("mode") == "neox");
    CHECK(input_name(g, op_defining(g, "q_rope_l00"), 0) == "q_l00");
    CHECK(count_kind(g, OpKind::head_rms_norm) == 0);
    CHECK(input_name(g, op_defining(g, "logits"), 1) == (tied ? "token_embd.weight" : "output.weight"));
  }
}

TEST_CASE("llama recognizer: NORM rope straight on the projections", "[ref][recognize]") {
  for (bool tied : {true, false}) {
    TinyOptions o;
    o.tied = tied;
    auto m = make_tiny_model("llama-tiny", o);
    const Graph g = recognize_model(*m->gguf);
    CHECK(std::get<std::string>(g.metadata().at("arch")) == "llama");
    const Op& rope = op_defining(g, "q_rope_l01");
    CHECK(rope.get_string("mode") == "norm");
    CHECK(rope.get_float("freq_base") == 10000.0);
    CHECK(input_name(g, rope, 0) == "q_l01");
    CHECK(op_defining(g, "q_l01").kind == OpKind::matmul);
    CHECK(g.tensor(g.id_of("q_l01")).shape == std::vector<int64_t>{2, 32});
    CHECK(g.tensor(g.id_of("k_l01")).shape == std::vector<int64_t>{1, 32});
    CHECK(count_kind(g, OpKind::head_rms_norm) == 0);
    CHECK(count_kind(g, OpKind::reshape) == 0);
    CHECK(op_defining(g, "attn_norm_l00").get_float("eps") == 1e-5);
    CHECK(input_name(g, op_defining(g, "logits"), 1) == (tied ? "token_embd.weight" : "output.weight"));
  }
}

TEST_CASE("recognizer keeps quantized weight formats and caps the cache", "[ref][recognize]") {
  TinyOptions o;
  o.type = GgmlType::Q8_0;
  auto m = make_tiny_model("qwen3-tiny", o);
  RecognizeOptions options;
  options.max_ctx = 40;
  const Graph g = recognize_model(*m->gguf, options);
  CHECK(g.tensor(g.id_of("blk.0.attn_q.weight")).type == GgmlType::Q8_0);
  CHECK(g.tensor(g.id_of("blk.0.attn_norm.weight")).type == GgmlType::F32);
  CHECK(g.tensor(g.id_of("cache_k_l00")).shape == std::vector<int64_t>{40, 2, 32});
  CHECK(std::get<int64_t>(g.metadata().at("n_ctx")) == 40);
  CHECK(std::get<int64_t>(g.metadata().at("n_ctx_train")) == 256);
  // A cap above the context changes nothing.
  options.max_ctx = 100000;
  CHECK(recognize_model(*m->gguf, options).tensor(g.id_of("cache_k_l00")).shape[0] == 256);
}

TEST_CASE("recognizer output round-trips through the text form", "[ref][recognize]") {
  for (const char* preset : {"qwen3-tiny", "qwen2-tiny", "llama-tiny"}) {
    auto m = make_tiny_model(preset);
    const Graph g = recognize_model(*m->gguf);
    CHECK(parse_graph(print_graph(g)) == g);
  }
}

TEST_CASE("recognizer errors: unknown architecture", "[ref][recognize]") {
  TinyOptions o;
  o.edit_writer = [](GgufWriter& w) { w.set("general.architecture", GgufValue::string("mamba")); };
  auto m = make_tiny_model("qwen3-tiny", o);
  CHECK_THROWS_WITH(recognize_model(*m->gguf),
                    "qwen3-tiny: general.architecture: unknown architecture \"mamba\" "
                    "(recognized: llama, qwen2, qwen3)");
}

TEST_CASE("recognizer errors: missing tensor", "[ref][recognize]") {
  TinyOptions o;
  o.edit_shape = [](ModelShape& s) { s.qk_norm = false; };  // a qwen3 without its Q/K norms
  auto m = make_tiny_model("qwen3-tiny", o);
  CHECK_THROWS_WITH(recognize_model(*m->gguf),
                    "qwen3-tiny: missing tensor blk.0.attn_q_norm.weight (expected shape [32] "
                    "(ne [32]) for architecture qwen3)");

  TinyOptions no_bias;
  no_bias.edit_shape = [](ModelShape& s) { s.qkv_bias = false; };
  auto m2 = make_tiny_model("qwen2-tiny", no_bias);
  CHECK_THROWS_WITH(recognize_model(*m2->gguf),
                    Catch::Contains("missing tensor blk.0.attn_q.bias (expected shape [64]"));
}

TEST_CASE("recognizer errors: mixture-of-experts layers, named for each architecture", "[ref][recognize]") {
  for (const std::string preset : {"llama-tiny", "qwen2-tiny", "qwen3-tiny"}) {
    TinyOptions o;
    o.edit_writer = [](GgufWriter& w) {
      w.add_tensor("blk.1.ffn_gate_inp.weight", {64, 4}, GgmlType::F32,
                   [](uint8_t*, uint64_t, uint64_t) {});
    };
    auto m = make_tiny_model(preset, o);
    const std::string arch = preset.substr(0, preset.find('-'));
    CHECK_THROWS_WITH(recognize_model(*m->gguf),
                      preset + ": blk.1.ffn_gate_inp.weight: " + arch +
                          " mixture-of-experts layers are not supported by this recognizer");
  }
}

TEST_CASE("recognizer errors: misshapen tensor", "[ref][recognize]") {
  TinyOptions o;
  // The metadata says 2 KV heads; the tensors were written for 1.
  o.edit_writer = [](GgufWriter& w) { w.set("llama.attention.head_count_kv", GgufValue::u32(2)); };
  auto m = make_tiny_model("llama-tiny", o);
  CHECK_THROWS_WITH(recognize_model(*m->gguf),
                    "llama-tiny: blk.0.attn_k.weight: expected shape [64, 64] (ne [64, 64]), "
                    "got [32, 64] (ne [64, 32])");
}

TEST_CASE("recognizer errors: inconsistent hyperparameters", "[ref][recognize]") {
  TinyOptions o;
  o.edit_writer = [](GgufWriter& w) { w.set("qwen3.attention.head_count_kv", GgufValue::u32(3)); };
  auto m = make_tiny_model("qwen3-tiny", o);
  CHECK_THROWS_WITH(recognize_model(*m->gguf),
                    "qwen3-tiny: qwen3.attention.head_count_kv: expected a divisor of the 4 "
                    "attention heads, got 3");
  TinyOptions no_ctx;
  no_ctx.edit_writer = [](GgufWriter& w) { w.set("qwen2.context_length", GgufValue::string("x")); };
  auto m2 = make_tiny_model("qwen2-tiny", no_ctx);
  CHECK_THROWS_WITH(recognize_model(*m2->gguf), Catch::Contains("qwen2.context_length"));
}

TEST_CASE("recognizer: per-layer counts, rope scaling and rope_freqs", "[ref][recognize]") {
  {
    TinyOptions o;
    o.edit_writer = [](GgufWriter& w) {
      w.set("llama.attention.head_count", GgufValue::u32_array({2, 2}));
    };
    auto m = make_tiny_model("llama-tiny", o);
    CHECK(std::get<int64_t>(recognize_model(*m->gguf).metadata().at("n_head")) == 2);
  }
  {
    TinyOptions o;
    o.edit_writer = [](GgufWriter& w) {
      w.set("llama.attention.head_count", GgufValue::u32_array({2, 1}));
    };
    auto m = make_tiny_model("llama-tiny", o);
    CHECK_THROWS_WITH(recognize_model(*m->gguf),
                      Catch::Contains("llama.attention.head_count: expected the same value for "
                                      "every layer"));
  }
  {
    TinyOptions o;
    o.edit_writer = [](GgufWriter& w) {
      w.set("qwen3.rope.scaling.type", GgufValue::string("linear"));
      w.set("qwen3.rope.scaling.factor", GgufValue::f32(4.0f));
    };
    auto m = make_tiny_model("qwen3-tiny", o);
    const Graph g = recognize_model(*m->gguf);
    const TensorId q_rope = g.id_of("q_rope_l00");
    for (const Op& op : g.ops())
      if (op.outputs[0] == q_rope) CHECK(op.get_float("freq_scale") == 0.25);
  }
  {
    TinyOptions o;
    o.edit_writer = [](GgufWriter& w) { w.set("qwen3.rope.scaling.type", GgufValue::string("yarn")); };
    auto m = make_tiny_model("qwen3-tiny", o);
    CHECK_THROWS_WITH(recognize_model(*m->gguf),
                      "qwen3-tiny: qwen3.rope.scaling.type: expected \"none\" or \"linear\", got "
                      "\"yarn\" (not supported yet)");
  }
  {
    TinyOptions o;
    o.edit_writer = [](GgufWriter& w) {
      std::vector<uint8_t> raw(16 * sizeof(float), 0);
      w.add_tensor("rope_freqs.weight", {16}, GgmlType::F32, raw);
    };
    auto m = make_tiny_model("llama-tiny", o);
    const Graph g = recognize_model(*m->gguf);
    const TensorId k_rope = g.id_of("k_rope_l01");
    for (const Op& op : g.ops())
      if (op.outputs[0] == k_rope) {
        REQUIRE(op.inputs.size() == 3);
        CHECK(g.tensor(op.inputs[2]).name == "rope_freqs.weight");
      }
  }
}
