// Text form: exact printing, round trips, and parse errors with line:column.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "lib/common/error.h"
#include "lib/graph/text.h"
#include "lib/graph/verify.h"
#include "tests/graph/sample_graphs.h"

using namespace lanec;

namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "g.txt");
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected parse_graph to reject:\n" << text);
  return "";
}

const char* kTiny =
    "lanec-graph 1\n"
    "meta arch=\"llama\"\n"
    "meta n_layer=1\n"
    "param token i32 [1]\n"
    "const token_embd.weight q8_0 [100, 64] gguf=\"token_embd.weight\"\n"
    "const blk.0.attn_norm.weight f32 [64] gguf=\"blk.0.attn_norm.weight\"\n"
    "act x_l00 f32 [64]\n"
    "act attn_norm_l00 f32 [64]\n"
    "op embed_get_rows x_l00 = token_embd.weight, token\n"
    "op rms_norm attn_norm_l00 = x_l00, blk.0.attn_norm.weight eps=1e-06\n"
    "output attn_norm_l00\n";

}  // namespace

TEST_CASE("text: a small graph prints exactly", "[graph]") {
  GraphBuilder b;
  b.set_metadata("arch", std::string("llama"));
  b.set_metadata("n_layer", int64_t{1});
  TensorId token = b.param("token", GgmlType::I32, {1});
  TensorId embd = b.constant("token_embd.weight", GgmlType::Q8_0, {100, 64});
  TensorId w = b.constant("blk.0.attn_norm.weight", GgmlType::F32, {64});
  TensorId x = b.apply(OpKind::embed_get_rows, "x_l00", {64}, {embd, token});
  TensorId n = b.apply_like(OpKind::rms_norm, "attn_norm_l00", {x, w}, {{"eps", 1e-6}});
  b.output(n);
  Graph g = b.finish();
  CHECK(print_graph(g) == kTiny);
  Graph parsed = parse_graph(kTiny);
  CHECK(parsed == g);
}

TEST_CASE("text: sample graphs round trip exactly", "[graph]") {
  for (const Graph& g : {test::build_llama_1layer(), test::build_every_kind()}) {
    std::string text = print_graph(g);
    Graph parsed = parse_graph(text, "round-trip");
    CHECK(parsed == g);
    CHECK(print_graph(parsed) == text);
    CHECK_NOTHROW(verify_graph(parsed));
  }
}

TEST_CASE("text: the llama graph's lines read as documented", "[graph]") {
  std::string text = print_graph(test::build_llama_1layer());
  CHECK_THAT(text, Catch::Contains("\nconst blk.0.attn_q.weight q8_0 [64, 64] "
                                   "gguf=\"blk.0.attn_q.weight\"\n"));
  CHECK_THAT(text, Catch::Contains("\nstate cache_k_l00 f32 [32, 2, 16]\n"));
  CHECK_THAT(text, Catch::Contains("\nact q_l00 f32 [4, 16]\n"));
  CHECK_THAT(text, Catch::Contains("\nop rope q_rope_l00 = q_l00, pos freq_base=10000.0 "
                                   "mode=\"norm\" n_rot=16\n"));
  CHECK_THAT(text, Catch::Contains("\nop kv_write cache_k_l00 = k_rope_l00, pos\n"));
  CHECK_THAT(text, Catch::Contains("\nop attention attn_l00 = q_rope_l00, cache_k_l00, "
                                   "cache_v_l00, pos scale=0.25\n"));
  CHECK_THAT(text, Catch::EndsWith("\noutput logits\noutput next_token\n"));
}

TEST_CASE("text: floats print short and read back exactly", "[graph]") {
  CHECK(format_float(1.0) == "1.0");
  CHECK(format_float(0.1) == "0.1");
  CHECK(format_float(1e-6) == "1e-06");
  CHECK(format_float(10000.0) == "10000.0");
  CHECK(format_float(1e6) == "1000000.0");
  CHECK(format_float(-2.5) == "-2.5");
  CHECK(format_float(-0.0) == "-0.0");
  CHECK(format_float(1e300) == "1e+300");
  CHECK(format_float(1.0 / 3.0) == "0.3333333333333333");
  CHECK(format_float(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_float(static_cast<double>(1e-5f)) == "9.999999747378752e-06");
  double values[] = {1.0 / 3.0, 1e-300, 6.02214076e23, static_cast<double>(0.1f),
                     -123456.789, 5e-324, std::numeric_limits<double>::max()};
  for (double v : values) {
    Graph g = test::build_llama_1layer();
    g.mutable_ops()[9].attrs["scale"] = v;
    Graph parsed = parse_graph(print_graph(g));
    CHECK(std::get<double>(parsed.ops()[9].attrs.at("scale")) == v);
  }
}

TEST_CASE("text: ints, floats and strings stay distinct", "[graph]") {
  Graph g = test::build_every_kind();
  Graph parsed = parse_graph(print_graph(g));
  size_t route_index = 0;
  for (size_t i = 0; i < parsed.ops().size(); ++i)
    if (parsed.ops()[i].kind == OpKind::moe_route) route_index = i;
  const Op& route = parsed.ops()[route_index];
  CHECK(route.kind == OpKind::moe_route);
  CHECK(std::holds_alternative<int64_t>(route.attrs.at("k")));
  CHECK(std::holds_alternative<std::string>(route.attrs.at("gating")));
  CHECK(std::get<std::string>(parsed.metadata().at("note")) == "quote \" backslash \\ tab \t");
}

TEST_CASE("text: comments, blank lines and CRLF are accepted", "[graph]") {
  std::string text = "# a step graph\r\n\r\n";
  for (const char* c = kTiny; *c; ++c) {
    if (*c == '\n') text += "\r";
    text += *c;
  }
  text += "   # trailing comment line\n";
  Graph g = parse_graph(text);
  CHECK(print_graph(g) == kTiny);
}

TEST_CASE("text: parse errors name line, column and what was expected", "[graph]") {
  CHECK(parse_error("") == "g.txt:1:1: expected the header 'lanec-graph 1', got an empty file");
  CHECK(parse_error("lanec-graph 2\n") == "g.txt:1:13: expected format version 1, got 2");
  CHECK(parse_error("graph 1\n") == "g.txt:1:1: expected the header 'lanec-graph 1', got 'graph'");
  CHECK(parse_error("lanec-graph 1\ntensor x f32 [1]\n") ==
        "g.txt:2:1: expected a line starting with meta, param, state, const, act, op or output, "
        "got 'tensor'");
  CHECK(parse_error("lanec-graph 1\nact x f33 [1]\n") ==
        "g.txt:2:7: expected an element type (f32, f16, bf16, i32, q8_0, ...), got 'f33'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4, 0]\n") ==
        "g.txt:2:15: expected a dimension >= 1, got 0");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4 5]\n") ==
        "g.txt:2:14: expected ',' or ']' in the shape, got '5]'");
  CHECK(parse_error("lanec-graph 1\nact x f32 4\n") ==
        "g.txt:2:11: expected a shape '[d0, d1, ...]', got '4'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nact x f32 [4]\n") ==
        "g.txt:3:5: expected a new tensor name, got 'x', declared before");
  CHECK(parse_error("lanec-graph 1\nconst w f32 [4] gguf=\"w\n") ==
        "g.txt:2:24: expected a closing '\"', got end of line");
  CHECK(parse_error("lanec-graph 1\nconst w f32 [4] file=\"w\"\n") ==
        "g.txt:2:17: expected gguf=\"...\" or end of line, got 'file'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop rms_nrm x = y\n") ==
        "g.txt:3:4: expected an op kind (rms_norm, matmul, ...), got 'rms_nrm'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop silu x = y\n") ==
        "g.txt:3:13: expected a declared tensor, got undeclared 'y'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop silu x y\n") ==
        "g.txt:3:11: expected ',' or '=' after the outputs, got 'y'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop scale x = x scale=1.5 scale=2.0\n") ==
        "g.txt:3:26: expected each attribute once, got a second 'scale'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop scale x = x scale=1.5x\n") ==
        "g.txt:3:22: expected a value (an int, a float or a \"string\"), got '1.5x'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop scale x = x scale=\n") ==
        "g.txt:3:22: expected a value (an int, a float or a \"string\"), got end of line");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop scale x = x 7=1\n") ==
        "g.txt:3:16: expected an attribute key=value, '@fusion' or end of line, got '7=1'");
  CHECK(parse_error("lanec-graph 1\nmeta arch=\"a\"\nmeta arch=\"b\"\n") ==
        "g.txt:3:6: expected each meta key once, got a second 'arch'");
  CHECK(parse_error("lanec-graph 1\nmeta s=\"a\\q\"\n") ==
        "g.txt:2:11: expected one of the escapes \\\" \\\\ \\n \\t \\xHH, got 'q\"'");
  CHECK(parse_error("lanec-graph 1\noutput nothing\n") ==
        "g.txt:2:8: expected a declared tensor, got undeclared 'nothing'");
  CHECK(parse_error("lanec-graph 1\nact x f32 [99999999999999999999]\n") ==
        "g.txt:2:12: expected a dimension (an integer >= 1) that fits in 64 bits, got "
        "'99999999999999999999'");
}

TEST_CASE("text: parsed graphs are checked by the verifier, not the parser", "[graph]") {
  // Well-formed text with a semantic error parses; verify_graph rejects it.
  Graph g = parse_graph(
      "lanec-graph 1\nact x f32 [4]\nact y f32 [4]\nop silu y = x\n");
  CHECK_THROWS_WITH(verify_graph(g),
                    "op #0 (silu -> y): input 0 (x) is an activation that no op defines");
}

TEST_CASE("text: fusion labels print after the attributes and round trip", "[graph]") {
  Graph g = test::build_llama_1layer();
  g.mutable_ops()[11].fusion = "add_norm.0";
  g.mutable_ops()[12].fusion = "add_norm.0";
  std::string text = print_graph(g);
  CHECK_THAT(text, Catch::Contains("\nop add attn_res_l00 = x_l00, attn_out_l00 @add_norm.0\n"));
  CHECK_THAT(text, Catch::Contains("\nop rms_norm ffn_norm_l00 = attn_res_l00, "
                                   "blk.0.ffn_norm.weight eps=1e-05 @add_norm.0\n"));
  Graph parsed = parse_graph(text);
  CHECK(parsed == g);
  CHECK(print_graph(parsed) == text);
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop silu x = x @\n") ==
        "g.txt:3:16: expected a fusion label after '@', got end of line");
  CHECK(parse_error("lanec-graph 1\nact x f32 [4]\nop silu x = x @a b\n") ==
        "g.txt:3:18: expected end of line after the fusion label, got 'b'");
}
