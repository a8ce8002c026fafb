// The step-graph verifier: graph-wide rules (definitions, order, roles) and a
// per-kind signature check (operand counts, element types, shapes,
// attributes). The per-kind rules are the executable form of docs/ir.md.
#include "lib/graph/verify.h"

#include <initializer_list>
#include <string>
#include <vector>

#include "lib/common/error.h"

namespace lanec {

namespace {

using Shape = std::vector<int64_t>;

enum class AttrType { int_, float_, string_ };

struct AttrSpec {
  const char* key;
  AttrType type;
  bool required;
};

const char* attr_type_word(AttrType t) {
  switch (t) {
    case AttrType::int_: return "int";
    case AttrType::float_: return "float";
    case AttrType::string_: return "string";
  }
  return "";
}

const char* value_type_word(const AttrValue& v) {
  switch (v.index()) {
    case 0: return "int";
    case 1: return "float";
    default: return "string";
  }
}

std::string type_word(GgmlType t) {
  const char* n = elem_type_name(t);
  return n ? n : "ggml type " + std::to_string(static_cast<uint32_t>(t));
}

std::string types_word(std::initializer_list<GgmlType> types) {
  std::string s;
  for (GgmlType t : types) {
    if (!s.empty()) s += " or ";
    s += type_word(t);
  }
  return s;
}

// Checks one op. Messages read "op #I (KIND -> OUT): OPERAND NAME: expected X, got Y".
class OpChecker {
 public:
  OpChecker(const Graph& graph, size_t index)
      : graph_(graph), index_(index), op_(graph.ops()[index]) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(describe_op(graph_, index_) + ": " + what);
  }

  const Op& op() const { return op_; }

  void counts(size_t min_inputs, size_t max_inputs, size_t outputs) const {
    size_t got = op_.inputs.size();
    if (got < min_inputs || got > max_inputs) {
      std::string want = min_inputs == max_inputs
                             ? std::to_string(min_inputs)
                             : std::to_string(min_inputs) + " to " + std::to_string(max_inputs);
      fail("expected " + want + " inputs, got " + std::to_string(got));
    }
    if (op_.outputs.size() != outputs)
      fail("expected " + std::to_string(outputs) + " outputs, got " +
           std::to_string(op_.outputs.size()));
  }

  const Tensor& in(size_t i) const { return graph_.tensor(op_.inputs[i]); }
  const Tensor& out(size_t i) const { return graph_.tensor(op_.outputs[i]); }
  size_t n_in() const { return op_.inputs.size(); }

  std::string in_label(size_t i, const char* operand) const {
    return "input " + std::to_string(i) + " (" + operand + " " + in(i).name + ")";
  }
  std::string out_label(size_t i, const char* operand) const {
    return "output " + std::to_string(i) + " (" + operand + " " + out(i).name + ")";
  }

  void in_type(size_t i, const char* operand, std::initializer_list<GgmlType> allowed) const {
    check_type(in(i), in_label(i, operand), allowed);
  }
  void out_type(size_t i, const char* operand, std::initializer_list<GgmlType> allowed) const {
    check_type(out(i), out_label(i, operand), allowed);
  }
  void in_shape(size_t i, const char* operand, const Shape& expected) const {
    check_shape(in(i), in_label(i, operand), expected);
  }
  void out_shape(size_t i, const char* operand, const Shape& expected) const {
    check_shape(out(i), out_label(i, operand), expected);
  }
  void in_rank(size_t i, const char* operand, size_t lo, size_t hi) const {
    check_rank(in(i), in_label(i, operand), lo, hi);
  }
  void out_rank(size_t i, const char* operand, size_t lo, size_t hi) const {
    check_rank(out(i), out_label(i, operand), lo, hi);
  }
  void in_role(size_t i, const char* operand, Role role) const {
    if (in(i).role != role)
      fail(in_label(i, operand) + ": expected role " + role_name(role) + ", got " +
           role_name(in(i).role));
  }
  void out_role(size_t i, const char* operand, Role role) const {
    if (out(i).role != role)
      fail(out_label(i, operand) + ": expected role " + role_name(role) + ", got " +
           role_name(out(i).role));
  }
  void in_numel(size_t i, const char* operand, int64_t expected) const {
    if (in(i).numel() != expected)
      fail(in_label(i, operand) + ": expected " + std::to_string(expected) + " elements, got " +
           std::to_string(in(i).numel()) + " (shape " + shape_to_string(in(i).shape) + ")");
  }
  void out_numel(size_t i, const char* operand, int64_t expected) const {
    if (out(i).numel() != expected)
      fail(out_label(i, operand) + ": expected " + std::to_string(expected) +
           " elements, got " + std::to_string(out(i).numel()) + " (shape " +
           shape_to_string(out(i).shape) + ")");
  }
  // A position or token: one i32.
  void in_index(size_t i, const char* operand) const {
    in_type(i, operand, {GgmlType::I32});
    in_shape(i, operand, {1});
  }

  // Rejects unknown keys, missing required keys and values of the wrong type.
  void attrs(std::initializer_list<AttrSpec> specs) const {
    for (const auto& [key, value] : op_.attrs) {
      const AttrSpec* spec = nullptr;
      for (const AttrSpec& s : specs)
        if (key == s.key) spec = &s;
      if (!spec) {
        std::string known;
        for (const AttrSpec& s : specs) known += std::string(known.empty() ? "" : ", ") + s.key;
        fail("unknown attribute '" + key + "' (expected one of: " +
             (known.empty() ? std::string("none") : known) + ")");
      }
      bool ok = (spec->type == AttrType::int_ && value.index() == 0) ||
                (spec->type == AttrType::float_ && value.index() == 1) ||
                (spec->type == AttrType::string_ && value.index() == 2);
      if (!ok)
        fail("attribute '" + key + "': expected " + attr_type_word(spec->type) + ", got " +
             value_type_word(value));
    }
    for (const AttrSpec& s : specs)
      if (s.required && !op_.has_attr(s.key))
        fail(std::string("missing attribute '") + s.key + "' (" + attr_type_word(s.type) + ")");
  }

  void attr_one_of(const char* key, std::initializer_list<const char*> allowed) const {
    if (!op_.has_attr(key)) return;
    const std::string& v = std::get<std::string>(op_.attrs.at(key));
    std::string list;
    for (const char* a : allowed) {
      if (v == a) return;
      list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
    }
    fail(std::string("attribute '") + key + "': expected one of " + list + ", got \"" + v + "\"");
  }

  void attr_positive(const char* key) const {
    if (!op_.has_attr(key)) return;
    const AttrValue& v = op_.attrs.at(key);
    bool ok = v.index() == 0 ? std::get<int64_t>(v) > 0 : std::get<double>(v) > 0.0;
    if (!ok) fail(std::string("attribute '") + key + "': expected a value > 0");
  }

 private:
  void check_type(const Tensor& t, const std::string& label,
                  std::initializer_list<GgmlType> allowed) const {
    for (GgmlType a : allowed)
      if (t.type == a) return;
    fail(label + ": expected element type " + types_word(allowed) + ", got " + type_word(t.type));
  }
  void check_shape(const Tensor& t, const std::string& label, const Shape& expected) const {
    if (t.shape != expected)
      fail(label + ": expected shape " + shape_to_string(expected) + ", got " +
           shape_to_string(t.shape));
  }
  void check_rank(const Tensor& t, const std::string& label, size_t lo, size_t hi) const {
    size_t r = t.shape.size();
    if (r < lo || r > hi) {
      std::string want =
          lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
      fail(label + ": expected rank " + want + ", got rank " + std::to_string(r) + " (shape " +
           shape_to_string(t.shape) + ")");
    }
  }

  const Graph& graph_;
  size_t index_;
  const Op& op_;
};

constexpr GgmlType kF32 = GgmlType::F32;
constexpr GgmlType kI32 = GgmlType::I32;

Shape with_last(Shape s, int64_t last) {
  s.back() = last;
  return s;
}

// f32 in, f32 out of the same shape; optional attributes given by the caller.
void check_unary(const OpChecker& c) {
  c.counts(1, 1, 1);
  c.in_type(0, "x", {kF32});
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", c.in(0).shape);
}

// b equals a's shape, is a suffix of it (broadcast over leading dims) or has one element.
void check_broadcast_binary(const OpChecker& c) {
  c.counts(2, 2, 1);
  c.attrs({});
  c.in_type(0, "a", {kF32});
  c.in_type(1, "b", {kF32});
  const Shape& a = c.in(0).shape;
  const Shape& b = c.in(1).shape;
  bool suffix = b.size() <= a.size() && std::equal(b.begin(), b.end(), a.end() - b.size());
  if (!suffix && c.in(1).numel() != 1)
    c.fail(c.in_label(1, "b") + ": expected shape " + shape_to_string(a) +
           ", a suffix of it or one element, got " + shape_to_string(b));
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", a);
}

void check_glu(const OpChecker& c) {
  c.counts(2, 2, 1);
  c.in_type(0, "gate", {kF32});
  c.in_type(1, "up", {kF32});
  c.in_shape(1, "up", c.in(0).shape);
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", c.in(0).shape);
}

void check_norm(const OpChecker& c, bool per_head) {
  c.counts(2, 2, 1);
  c.attrs({{"eps", AttrType::float_, true}});
  c.attr_positive("eps");
  c.in_type(0, "x", {kF32});
  if (per_head)
    c.in_rank(0, "x", 2, 2);
  else
    c.in_rank(0, "x", 1, 1);
  c.in_type(1, "weight", {kF32});
  c.in_shape(1, "weight", {c.in(0).cols()});
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", c.in(0).shape);
}

void check_embed(const OpChecker& c) {
  c.counts(2, 2, 1);
  c.attrs({});
  c.in_role(0, "table", Role::constant);
  c.in_rank(0, "table", 2, 2);
  c.in_index(1, "token");
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", {c.in(0).cols()});
}

void check_matmul(const OpChecker& c) {
  c.counts(2, 2, 1);
  c.attrs({});
  c.in_type(0, "x", {kF32});
  c.in_role(1, "weight", Role::constant);
  // A rank-1 weight [n_in] is one output row (a dot product: qwen3next's
  // shared-expert gate is stored that way).
  c.in_rank(1, "weight", 1, 2);
  const Shape& w = c.in(1).shape;
  int64_t n_out = w.size() == 2 ? w[0] : 1;
  c.in_numel(0, "x", w.back());
  c.out_type(0, "y", {kF32});
  c.out_numel(0, "y", n_out);
}

void check_rope(const OpChecker& c) {
  c.counts(2, 3, 1);
  c.attrs({{"mode", AttrType::string_, true},
           {"n_rot", AttrType::int_, true},
           {"freq_base", AttrType::float_, true},
           {"freq_scale", AttrType::float_, false},
           {"ext_factor", AttrType::float_, false},
           {"attn_factor", AttrType::float_, false},
           {"beta_fast", AttrType::float_, false},
           {"beta_slow", AttrType::float_, false},
           {"n_ctx_orig", AttrType::int_, false}});
  c.attr_one_of("mode", {"norm", "neox"});
  c.attr_positive("freq_base");
  c.attr_positive("freq_scale");
  c.in_type(0, "x", {kF32});
  c.in_rank(0, "x", 2, 2);
  c.in_index(1, "pos");
  int64_t head_dim = c.in(0).cols();
  int64_t n_rot = c.op().get_int("n_rot");
  if (n_rot <= 0 || n_rot % 2 != 0 || n_rot > head_dim)
    c.fail("attribute 'n_rot': expected an even value in [2, " + std::to_string(head_dim) +
           "] (head_dim of " + c.in(0).name + "), got " + std::to_string(n_rot));
  if (c.n_in() == 3) {
    c.in_type(2, "freq_factors", {kF32});
    c.in_shape(2, "freq_factors", {n_rot / 2});
  }
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", c.in(0).shape);
}

const std::initializer_list<GgmlType> kStateTypes = {GgmlType::F32, GgmlType::F16,
                                                     GgmlType::BF16};

void check_kv_write(const OpChecker& c) {
  c.counts(2, 2, 1);
  c.attrs({});
  c.in_type(0, "src", {kF32});
  c.in_index(1, "pos");
  c.out_role(0, "cache", Role::state);
  c.out_type(0, "cache", kStateTypes);
  Shape expected = c.in(0).shape;
  expected.insert(expected.begin(), c.out(0).shape.front());
  c.out_shape(0, "cache", expected);
}

void check_attention(const OpChecker& c) {
  c.counts(4, 5, 1);
  c.attrs({{"scale", AttrType::float_, true}, {"window", AttrType::int_, false}});
  c.in_type(0, "q", {kF32});
  c.in_rank(0, "q", 2, 2);
  c.in_role(1, "k_cache", Role::state);
  c.in_type(1, "k_cache", kStateTypes);
  c.in_rank(1, "k_cache", 3, 3);
  c.in_role(2, "v_cache", Role::state);
  c.in_type(2, "v_cache", kStateTypes);
  c.in_rank(2, "v_cache", 3, 3);
  c.in_index(3, "pos");
  const Shape& q = c.in(0).shape;
  const Shape& k = c.in(1).shape;
  const Shape& v = c.in(2).shape;
  int64_t rows = k[0], n_kv = k[1];
  c.in_shape(1, "k_cache", {rows, n_kv, q[1]});
  c.in_shape(2, "v_cache", {rows, n_kv, v[2]});
  if (q[0] % n_kv != 0)
    c.fail(c.in_label(0, "q") + ": expected a head count divisible by the " +
           std::to_string(n_kv) + " kv heads of " + c.in(1).name + ", got " +
           std::to_string(q[0]));
  if (c.n_in() == 5) {
    c.in_type(4, "sinks", {kF32});
    c.in_shape(4, "sinks", {q[0]});
  }
  int64_t window = c.op().get_int_or("window", 0);
  if (window < 0 || window > rows)
    c.fail("attribute 'window': expected 0 (none) or a value in [1, " + std::to_string(rows) +
           "] (cache rows of " + c.in(1).name + "), got " + std::to_string(window));
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", {q[0], v[2]});
}

void check_moe_route(const OpChecker& c) {
  c.counts(1, 1, 2);
  c.attrs({{"k", AttrType::int_, true},
           {"gating", AttrType::string_, true},
           {"normalize", AttrType::int_, false},
           {"weight_scale", AttrType::float_, false}});
  c.attr_one_of("gating", {"softmax_topk", "topk_softmax"});
  c.in_type(0, "logits", {kF32});
  c.in_rank(0, "logits", 1, 1);
  int64_t k = c.op().get_int("k");
  int64_t n_expert = c.in(0).cols();
  if (k < 1 || k > n_expert)
    c.fail("attribute 'k': expected a value in [1, " + std::to_string(n_expert) +
           "] (experts in " + c.in(0).name + "), got " + std::to_string(k));
  int64_t normalize = c.op().get_int_or("normalize", 0);
  if (normalize != 0 && normalize != 1)
    c.fail("attribute 'normalize': expected 0 or 1, got " + std::to_string(normalize));
  c.out_type(0, "ids", {kI32});
  c.out_shape(0, "ids", {k});
  c.out_type(1, "weights", {kF32});
  c.out_shape(1, "weights", {k});
}

void check_moe_experts(const OpChecker& c) {
  c.counts(6, 9, 1);
  if (c.n_in() != 6 && c.n_in() != 9)
    c.fail("expected 6 inputs (no biases) or 9 (with gate, up and down biases), got " +
           std::to_string(c.n_in()));
  c.attrs({{"act", AttrType::string_, true},
           {"alpha", AttrType::float_, false},
           {"limit", AttrType::float_, false}});
  c.attr_one_of("act", {"swiglu", "swiglu_oai"});
  bool oai = c.op().get_string("act") == "swiglu_oai";
  if (oai != c.op().has_attr("alpha") || oai != c.op().has_attr("limit"))
    c.fail("attributes 'alpha' and 'limit': expected exactly when act=\"swiglu_oai\"");
  c.in_type(0, "x", {kF32});
  c.in_rank(0, "x", 1, 1);
  c.in_type(1, "ids", {kI32});
  c.in_rank(1, "ids", 1, 1);
  int64_t k = c.in(1).cols();
  c.in_type(2, "weights", {kF32});
  c.in_shape(2, "weights", {k});
  c.in_role(3, "gate_exps", Role::constant);
  c.in_rank(3, "gate_exps", 3, 3);
  int64_t n_expert = c.in(3).shape[0], ff = c.in(3).shape[1], d = c.in(0).cols();
  c.in_shape(3, "gate_exps", {n_expert, ff, d});
  c.in_role(4, "up_exps", Role::constant);
  c.in_shape(4, "up_exps", {n_expert, ff, d});
  c.in_role(5, "down_exps", Role::constant);
  c.in_shape(5, "down_exps", {n_expert, d, ff});
  if (k > n_expert)
    c.fail(c.in_label(1, "ids") + ": expected at most " + std::to_string(n_expert) +
           " selected experts, got " + std::to_string(k));
  if (c.n_in() == 9) {
    c.in_type(6, "gate_bias", {kF32});
    c.in_shape(6, "gate_bias", {n_expert, ff});
    c.in_type(7, "up_bias", {kF32});
    c.in_shape(7, "up_bias", {n_expert, ff});
    c.in_type(8, "down_bias", {kF32});
    c.in_shape(8, "down_bias", {n_expert, d});
  }
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", {d});
}

void check_short_conv(const OpChecker& c) {
  c.counts(2, 2, 2);
  c.attrs({});
  c.in_type(0, "x", {kF32});
  c.in_rank(0, "x", 1, 1);
  int64_t channels = c.in(0).cols();
  c.in_type(1, "weight", {kF32});
  c.in_rank(1, "weight", 2, 2);
  int64_t kernel = c.in(1).cols();
  c.in_shape(1, "weight", {channels, kernel});
  if (kernel < 2)
    c.fail(c.in_label(1, "weight") + ": expected a kernel width >= 2, got " +
           std::to_string(kernel));
  c.out_role(0, "y", Role::activation);
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", {channels});
  c.out_role(1, "ring", Role::state);
  c.out_type(1, "ring", kStateTypes);
  c.out_shape(1, "ring", {kernel - 1, channels});
}

void check_gated_delta_rule(const OpChecker& c) {
  c.counts(5, 5, 2);
  c.attrs({{"scale", AttrType::float_, true}, {"head_repeat", AttrType::string_, true}});
  c.attr_one_of("head_repeat", {"interleave", "tile"});
  c.in_type(0, "q", {kF32});
  c.in_rank(0, "q", 2, 2);
  int64_t n_k = c.in(0).shape[0], dk = c.in(0).shape[1];
  c.in_type(1, "k", {kF32});
  c.in_shape(1, "k", {n_k, dk});
  c.in_type(2, "v", {kF32});
  c.in_rank(2, "v", 2, 2);
  int64_t n_v = c.in(2).shape[0], dv = c.in(2).shape[1];
  if (n_v % n_k != 0)
    c.fail(c.in_label(2, "v") + ": expected a head count divisible by the " +
           std::to_string(n_k) + " heads of " + c.in(0).name + ", got " + std::to_string(n_v));
  c.in_type(3, "g", {kF32});
  c.in_shape(3, "g", {n_v});
  c.in_type(4, "beta", {kF32});
  c.in_shape(4, "beta", {n_v});
  c.out_role(0, "y", Role::activation);
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", {n_v, dv});
  c.out_role(1, "state", Role::state);
  c.out_type(1, "state", kStateTypes);
  c.out_shape(1, "state", {n_v, dk, dv});
}

void check_reshape(const OpChecker& c) {
  c.counts(1, 1, 1);
  c.attrs({});
  c.out_type(0, "y", {c.in(0).type});
  c.out_numel(0, "y", c.in(0).numel());
}

void check_slice(const OpChecker& c) {
  c.counts(1, 1, 1);
  c.attrs({{"offset", AttrType::int_, true}});
  c.in_type(0, "x", {kF32});
  c.out_type(0, "y", {kF32});
  const Shape& x = c.in(0).shape;
  c.out_rank(0, "y", x.size(), x.size());
  int64_t width = c.out(0).cols();
  if (width > x.back())
    c.fail(c.out_label(0, "y") + ": expected at most " + std::to_string(x.back()) +
           " columns (those of " + c.in(0).name + "), got " + std::to_string(width));
  c.out_shape(0, "y", with_last(x, width));
  int64_t offset = c.op().get_int("offset");
  if (offset < 0 || offset > x.back() - width)
    c.fail("attribute 'offset': expected a value in [0, " + std::to_string(x.back() - width) +
           "] (slicing " + std::to_string(width) + " of " + std::to_string(x.back()) +
           " columns of " + c.in(0).name + "), got " + std::to_string(offset));
}

void check_concat(const OpChecker& c) {
  c.counts(2, 64, 1);
  c.attrs({});
  int64_t total = 0;
  for (size_t i = 0; i < c.n_in(); ++i) {
    c.in_type(i, "part", {kF32});
    if (i > 0) c.in_shape(i, "part", with_last(c.in(0).shape, c.in(i).cols()));
    total += c.in(i).cols();
  }
  c.out_type(0, "y", {kF32});
  c.out_shape(0, "y", with_last(c.in(0).shape, total));
}

void check_argmax(const OpChecker& c) {
  c.counts(1, 1, 1);
  c.attrs({});
  c.in_type(0, "x", {kF32});
  c.in_rank(0, "x", 1, 1);
  c.out_type(0, "index", {kI32});
  c.out_shape(0, "index", {1});
}

void check_kind(const OpChecker& c) {
  switch (c.op().kind) {
    case OpKind::embed_get_rows: return check_embed(c);
    case OpKind::rms_norm: return check_norm(c, false);
    case OpKind::head_rms_norm: return check_norm(c, true);
    case OpKind::l2_norm:
      check_unary(c);
      c.attrs({{"eps", AttrType::float_, true}});
      c.attr_positive("eps");
      return c.in_rank(0, "x", 1, 2);
    case OpKind::add:
    case OpKind::mul: return check_broadcast_binary(c);
    case OpKind::scale:
      check_unary(c);
      return c.attrs({{"scale", AttrType::float_, true}});
    case OpKind::silu:
    case OpKind::gelu:
    case OpKind::sigmoid:
    case OpKind::softplus:
    case OpKind::exp:
      check_unary(c);
      return c.attrs({});
    case OpKind::swiglu:
    case OpKind::geglu:
      check_glu(c);
      return c.attrs({});
    case OpKind::swiglu_oai:
      check_glu(c);
      c.attrs({{"alpha", AttrType::float_, true}, {"limit", AttrType::float_, true}});
      return c.attr_positive("limit");
    case OpKind::softmax:
      check_unary(c);
      c.attrs({});
      return c.in_rank(0, "x", 1, 2);
    case OpKind::matmul: return check_matmul(c);
    case OpKind::rope: return check_rope(c);
    case OpKind::kv_write: return check_kv_write(c);
    case OpKind::attention: return check_attention(c);
    case OpKind::moe_route: return check_moe_route(c);
    case OpKind::moe_experts: return check_moe_experts(c);
    case OpKind::short_conv: return check_short_conv(c);
    case OpKind::gated_delta_rule: return check_gated_delta_rule(c);
    case OpKind::reshape: return check_reshape(c);
    case OpKind::slice: return check_slice(c);
    case OpKind::concat: return check_concat(c);
    case OpKind::argmax: return check_argmax(c);
  }
  c.fail("unknown op kind " + std::to_string(static_cast<int>(c.op().kind)));
}

bool type_allowed_for_role(const Tensor& t) {
  switch (t.role) {
    case Role::param: return t.type == GgmlType::I32 || t.type == GgmlType::F32;
    case Role::activation: return t.type == GgmlType::F32 || t.type == GgmlType::I32;
    case Role::state:
      return t.type == GgmlType::F32 || t.type == GgmlType::F16 || t.type == GgmlType::BF16;
    case Role::constant: return elem_type_name(t.type) != nullptr;
  }
  return false;
}

const char* role_types_word(Role role) {
  switch (role) {
    case Role::param: return "i32 or f32";
    case Role::activation: return "f32 or i32";
    case Role::state: return "f32, f16 or bf16";
    case Role::constant: return "a weight format";
  }
  return "";
}

void verify_tensors(const Graph& graph) {
  for (const Tensor& t : graph.tensors()) {
    std::string where = std::string(role_name(t.role)) + " " + t.name;
    if (!type_allowed_for_role(t))
      throw Error(where + ": expected element type " + role_types_word(t.role) + ", got " +
                  type_word(t.type));
    if (t.role == Role::constant && t.gguf_name.empty())
      throw Error(where + ": expected a GGUF tensor name (gguf=\"...\"), got none");
    if (t.role != Role::constant && !t.gguf_name.empty())
      throw Error(where + ": only constants name a GGUF tensor, got gguf=\"" + t.gguf_name +
                  "\"");
    if (t.shape.empty())
      throw Error(where + ": expected a shape of rank >= 1, got []");
    int64_t elements = 1;
    for (int64_t d : t.shape) {
      if (d < 1)
        throw Error(where + ": expected every dim >= 1, got " + shape_to_string(t.shape));
      if (d > (int64_t{1} << 48) / elements)
        throw Error(where + ": expected at most 2^48 elements, got shape " +
                    shape_to_string(t.shape));
      elements *= d;
    }
  }
}

constexpr size_t kNone = static_cast<size_t>(-1);

}  // namespace

void verify_op(const Graph& graph, size_t op_index) {
  LANEC_ASSERT(op_index < graph.ops().size(), "op index out of range");
  const Op& op = graph.ops()[op_index];
  for (TensorId id : op.inputs)
    if (id >= graph.tensors().size())
      throw Error(describe_op(graph, op_index) + ": input tensor id " + std::to_string(id) +
                  " is out of range");
  for (TensorId id : op.outputs)
    if (id >= graph.tensors().size())
      throw Error(describe_op(graph, op_index) + ": output tensor id " + std::to_string(id) +
                  " is out of range");
  if (!op.fusion.empty() && !is_valid_tensor_name(op.fusion))
    throw Error(describe_op(graph, op_index) +
                ": fusion label: expected letters, digits, '_', '.' and '-', got \"" + op.fusion +
                "\"");
  check_kind(OpChecker(graph, op_index));
}

void verify_graph(const Graph& graph) {
  verify_tensors(graph);
  const auto& tensors = graph.tensors();
  const auto& ops = graph.ops();

  // Who writes each tensor (first writer), found before the ordered walk so
  // that a use before its definition can name the later definition.
  std::vector<size_t> writer(tensors.size(), kNone);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (TensorId id : ops[i].outputs) {
      if (id >= tensors.size()) verify_op(graph, i);  // reports the bad id
      const Tensor& t = tensors[id];
      std::string where = describe_op(graph, i);
      if (t.role == Role::param || t.role == Role::constant)
        throw Error(where + ": writes " + role_name(t.role) + " " + t.name +
                    "; params and constants are never written by ops");
      if (t.role == Role::state && !op_kind_writes_state(ops[i].kind))
        throw Error(where + ": writes state " + t.name +
                    "; only kv_write, short_conv and gated_delta_rule write states");
      if (writer[id] != kNone)
        throw Error(where + ": writes " + t.name + ", already written by " +
                    describe_op(graph, writer[id]) + "; every tensor is defined once");
      writer[id] = i;
    }
  }

  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      TensorId id = op.inputs[k];
      if (id >= tensors.size()) verify_op(graph, i);
      const Tensor& t = tensors[id];
      std::string where =
          describe_op(graph, i) + ": input " + std::to_string(k) + " (" + t.name + ")";
      if (t.role == Role::activation) {
        if (writer[id] == kNone)
          throw Error(where + " is an activation that no op defines");
        if (writer[id] >= i)
          throw Error(where + " is used before it is defined by " +
                      describe_op(graph, writer[id]) + "; ops must be in topological order");
      } else if (t.role == Role::state && writer[id] != kNone && writer[id] > i) {
        throw Error(where + " reads state " + t.name + " before " +
                    describe_op(graph, writer[id]) +
                    " updates it; readers of a state follow its writer");
      }
    }
    verify_op(graph, i);
  }

  for (TensorId id = 0; id < tensors.size(); ++id)
    if (tensors[id].role == Role::activation && writer[id] == kNone)
      throw Error("act " + tensors[id].name + ": declared but no op defines it");

  for (TensorId id : graph.outputs())
    if (id >= tensors.size())
      throw Error("graph output tensor id " + std::to_string(id) + " is out of range");
}

}  // namespace lanec
