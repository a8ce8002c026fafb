// Text form of the step graph: a deterministic printer and a line-oriented
// parser with errors that name the line and column. Grammar in docs/ir.md.
#include "lib/graph/text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "lib/common/error.h"

namespace lanec {

namespace {

constexpr const char* kHeader = "lanec-graph 1";

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string join_names(const Graph& g, const std::vector<TensorId>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ", ";
    s += g.tensor(ids[i]).name;
  }
  return s;
}

std::string attrs_text(const Attrs& attrs) {
  std::string s;
  for (const auto& [key, value] : attrs) s += " " + key + "=" + format_attr_value(value);
  return s;
}

bool is_key_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_key_char(char c) { return is_key_start(c) || (c >= '0' && c <= '9'); }

}  // namespace

std::string format_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[40];
  // Whole numbers below 2^53 print in full ("10000.0", not "1e+04"): exact
  // and easier to read for rope bases and window sizes.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    std::snprintf(buf, sizeof buf, "%.0f.0", value);
    return buf;
  }
  // Otherwise the fewest significant digits that read back to the same double.
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string format_attr_value(const AttrValue& value) {
  switch (value.index()) {
    case 0: return std::to_string(std::get<int64_t>(value));
    case 1: return format_float(std::get<double>(value));
    default: return quote(std::get<std::string>(value));
  }
}

std::string print_graph(const Graph& graph) {
  std::string out = std::string(kHeader) + "\n";
  for (const auto& [key, value] : graph.metadata())
    out += "meta " + key + "=" + format_attr_value(value) + "\n";
  for (const Tensor& t : graph.tensors()) {
    const char* type = elem_type_name(t.type);
    LANEC_ASSERT(type != nullptr, "tensor " + t.name + " has a type the IR cannot name");
    out += std::string(role_name(t.role)) + " " + t.name + " " + type + " " +
           shape_to_string(t.shape);
    if (!t.gguf_name.empty()) out += " gguf=" + quote(t.gguf_name);
    out += "\n";
  }
  for (const Op& op : graph.ops()) {
    out += std::string("op ") + op_kind_name(op.kind) + " " + join_names(graph, op.outputs) +
           " = " + join_names(graph, op.inputs) + attrs_text(op.attrs) +
           (op.fusion.empty() ? "" : " @" + op.fusion) + "\n";
  }
  for (TensorId id : graph.outputs()) out += "output " + graph.tensor(id).name + "\n";
  return out;
}

namespace {

// Reads one line; every error names SOURCE:LINE:COL.
class LineParser {
 public:
  LineParser(std::string_view line, const std::string& source, size_t line_no)
      : line_(line), source_(source), line_no_(line_no) {}

  [[noreturn]] void fail_at(size_t col, const std::string& expected, const std::string& got) const {
    throw Error(source_ + ":" + std::to_string(line_no_) + ":" + std::to_string(col + 1) +
                ": expected " + expected + ", got " + got);
  }
  [[noreturn]] void fail_with(size_t col, const std::string& message) const {
    throw Error(source_ + ":" + std::to_string(line_no_) + ":" + std::to_string(col + 1) + ": " +
                message);
  }
  [[noreturn]] void fail(const std::string& expected) const {
    fail_at(pos_, expected, describe_here());
  }

  std::string describe_here() const {
    if (pos_ >= line_.size()) return "end of line";
    size_t end = pos_;
    while (end < line_.size() && line_[end] != ' ' && line_[end] != '\t') ++end;
    return "'" + std::string(line_.substr(pos_, end - pos_)) + "'";
  }

  size_t pos() const { return pos_; }
  void skip_spaces() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }
  bool at_end() {
    skip_spaces();
    return pos_ >= line_.size();
  }
  bool peek(char c) {
    skip_spaces();
    return pos_ < line_.size() && line_[pos_] == c;
  }
  void expect(char c, const std::string& what) {
    skip_spaces();
    if (pos_ >= line_.size() || line_[pos_] != c) fail(what);
    ++pos_;
  }
  // A word of name characters (tensor names, kinds, roles, types).
  std::string name(const std::string& what) {
    skip_spaces();
    size_t start = pos_;
    while (pos_ < line_.size() && is_name_char(line_[pos_])) ++pos_;
    if (pos_ == start) fail(what);
    return std::string(line_.substr(start, pos_ - start));
  }
  std::string key(const std::string& what) {
    skip_spaces();
    size_t start = pos_;
    if (pos_ < line_.size() && is_key_start(line_[pos_])) {
      ++pos_;
      while (pos_ < line_.size() && is_key_char(line_[pos_])) ++pos_;
    }
    if (pos_ == start) fail(what);
    return std::string(line_.substr(start, pos_ - start));
  }

  int64_t integer(const std::string& what) {
    skip_spaces();
    size_t start = pos_;
    if (pos_ < line_.size() && line_[pos_] == '-') ++pos_;
    while (pos_ < line_.size() && line_[pos_] >= '0' && line_[pos_] <= '9') ++pos_;
    std::string text(line_.substr(start, pos_ - start));
    if (text.empty() || text == "-") {
      pos_ = start;
      fail(what);
    }
    errno = 0;
    long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) fail_at(start, what + " that fits in 64 bits", "'" + text + "'");
    return static_cast<int64_t>(v);
  }

  std::vector<int64_t> shape() {
    expect('[', "a shape '[d0, d1, ...]'");
    std::vector<int64_t> dims;
    do {
      skip_spaces();
      size_t col = pos_;
      int64_t d = integer("a dimension (an integer >= 1)");
      if (d < 1) fail_at(col, "a dimension >= 1", std::to_string(d));
      dims.push_back(d);
    } while (peek(',') && (++pos_, true));
    expect(']', "',' or ']' in the shape");
    return dims;
  }

  std::string string_literal() {
    expect('"', "a string in double quotes");
    std::string s;
    while (true) {
      if (pos_ >= line_.size()) fail("a closing '\"'");
      char c = line_[pos_++];
      if (c == '"') return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (pos_ >= line_.size()) fail("an escape after '\\'");
      char e = line_[pos_++];
      switch (e) {
        case '"': s += '"'; break;
        case '\\': s += '\\'; break;
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'x': {
          auto hex = [](char h) -> int {
            if (h >= '0' && h <= '9') return h - '0';
            if (h >= 'a' && h <= 'f') return h - 'a' + 10;
            if (h >= 'A' && h <= 'F') return h - 'A' + 10;
            return -1;
          };
          if (pos_ + 2 > line_.size() || hex(line_[pos_]) < 0 || hex(line_[pos_ + 1]) < 0) {
            fail("two hex digits after '\\x'");
          }
          s += static_cast<char>(hex(line_[pos_]) * 16 + hex(line_[pos_ + 1]));
          pos_ += 2;
          break;
        }
        default:
          --pos_;
          fail("one of the escapes \\\" \\\\ \\n \\t \\xHH");
      }
    }
  }

  // An int, a float ('.', 'e', inf or nan marks a float) or a quoted string.
  AttrValue value() {
    skip_spaces();
    if (peek('"')) return string_literal();
    size_t start = pos_;
    while (pos_ < line_.size() && line_[pos_] != ' ' && line_[pos_] != '\t') ++pos_;
    std::string text(line_.substr(start, pos_ - start));
    if (text.empty()) {
      pos_ = start;
      fail("a value (an int, a float or a \"string\")");
    }
    bool is_float = text.find_first_of(".eE") != std::string::npos || text == "inf" ||
                    text == "-inf" || text == "nan";
    const char* what = is_float ? "a float" : "an int";
    errno = 0;
    char* end = nullptr;
    if (is_float) {
      double d = std::strtod(text.c_str(), &end);
      // Underflow to a subnormal still reads back exactly; only overflow is an error.
      bool overflow = errno == ERANGE && std::isinf(d);
      if (*end != '\0' || overflow || text.find_first_of("xXpP") != std::string::npos)
        fail_at(start, "a value (an int, a float or a \"string\")", "'" + text + "'");
      return d;
    }
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (*end != '\0' || errno == ERANGE || text[0] == '+')
      fail_at(start, std::string("a value (an int, a float or a \"string\"); not ") + what,
              "'" + text + "'");
    return static_cast<int64_t>(v);
  }

 private:
  std::string_view line_;
  const std::string& source_;
  size_t line_no_;
  size_t pos_ = 0;
};

void parse_attr(LineParser& p, Attrs& attrs, const char* what) {
  size_t col = (p.skip_spaces(), p.pos());
  std::string key = p.key(what);
  p.expect('=', "'=' after attribute " + key);
  AttrValue v = p.value();
  if (!attrs.emplace(key, std::move(v)).second)
    p.fail_at(col, "each attribute once", "a second '" + key + "'");
}

TensorId parse_tensor_ref(LineParser& p, const Graph& g, const char* what) {
  size_t col = (p.skip_spaces(), p.pos());
  std::string n = p.name(what);
  auto id = g.find(n);
  if (!id) p.fail_at(col, "a declared tensor", "undeclared '" + n + "'");
  return *id;
}

std::vector<TensorId> parse_tensor_list(LineParser& p, const Graph& g, const char* what) {
  std::vector<TensorId> ids{parse_tensor_ref(p, g, what)};
  while (p.peek(',')) {
    p.expect(',', "','");
    ids.push_back(parse_tensor_ref(p, g, what));
  }
  return ids;
}

void parse_declaration(LineParser& p, Graph& g, Role role) {
  size_t col = (p.skip_spaces(), p.pos());
  Tensor t;
  t.role = role;
  t.name = p.name("a tensor name");
  if (g.find(t.name)) p.fail_at(col, "a new tensor name", "'" + t.name + "', declared before");
  p.skip_spaces();
  size_t type_col = p.pos();
  std::string type = p.name("an element type (f32, f16, bf16, i32, q8_0, ...)");
  auto parsed = elem_type_from_name(type);
  if (!parsed) p.fail_at(type_col, "an element type (f32, f16, bf16, i32, q8_0, ...)", "'" + type + "'");
  t.type = *parsed;
  t.shape = p.shape();
  if (!p.at_end()) {
    size_t key_col = p.pos();
    std::string key = p.key("gguf=\"...\" or end of line");
    if (key != "gguf") p.fail_at(key_col, "gguf=\"...\" or end of line", "'" + key + "'");
    p.expect('=', "'=' after gguf");
    t.gguf_name = p.string_literal();
  }
  if (!p.at_end()) p.fail("end of line");
  try {
    g.add_tensor(std::move(t));
  } catch (const Error& e) {
    p.fail_with(col, e.what());
  }
}

void parse_op(LineParser& p, Graph& g) {
  p.skip_spaces();
  size_t kind_col = p.pos();
  std::string kind_text = p.name("an op kind");
  auto kind = op_kind_from_name(kind_text);
  if (!kind) p.fail_at(kind_col, "an op kind (rms_norm, matmul, ...)", "'" + kind_text + "'");
  Op op{*kind, {}, {}, {}};
  op.outputs = parse_tensor_list(p, g, "an output tensor name");
  p.expect('=', "',' or '=' after the outputs");
  op.inputs = parse_tensor_list(p, g, "an input tensor name");
  while (!p.at_end() && !p.peek('@'))
    parse_attr(p, op.attrs, "an attribute key=value, '@fusion' or end of line");
  if (p.peek('@')) {
    p.expect('@', "'@'");
    op.fusion = p.name("a fusion label after '@'");
    if (!p.at_end()) p.fail("end of line after the fusion label");
  }
  g.add_op(std::move(op));
}

}  // namespace

Graph parse_graph(std::string_view text, const std::string& source_name) {
  Graph g;
  bool seen_header = false;
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    ++line_no;

    LineParser p(line, source_name, line_no);
    if (p.at_end()) continue;
    p.skip_spaces();
    if (line[p.pos()] == '#') continue;

    if (!seen_header) {
      size_t col = p.pos();
      std::string magic = p.name("the header 'lanec-graph 1'");
      if (magic != "lanec-graph") p.fail_at(col, "the header 'lanec-graph 1'", "'" + magic + "'");
      p.skip_spaces();
      size_t vcol = p.pos();
      int64_t version = p.integer("the format version 1");
      if (version != 1) p.fail_at(vcol, "format version 1", std::to_string(version));
      if (!p.at_end()) p.fail("end of line");
      seen_header = true;
      continue;
    }

    size_t col = p.pos();
    std::string word = p.name("a line starting with meta, param, state, const, act, op or output");
    if (word == "meta") {
      size_t key_col = (p.skip_spaces(), p.pos());
      Attrs one;
      parse_attr(p, one, "a metadata key=value");
      const auto& [key, value] = *one.begin();
      if (g.metadata().count(key)) p.fail_at(key_col, "each meta key once", "a second '" + key + "'");
      g.metadata().emplace(key, value);
      if (!p.at_end()) p.fail("end of line");
    } else if (auto role = role_from_name(word)) {
      parse_declaration(p, g, *role);
    } else if (word == "op") {
      parse_op(p, g);
    } else if (word == "output") {
      g.add_output(parse_tensor_ref(p, g, "an output tensor name"));
      if (!p.at_end()) p.fail("end of line");
    } else {
      p.fail_at(col, "a line starting with meta, param, state, const, act, op or output",
                "'" + word + "'");
    }
  }
  if (!seen_header)
    throw Error(source_name + ":1:1: expected the header 'lanec-graph 1', got an empty file");
  return g;
}

Graph read_graph_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read graph file " + path + ": " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (text.compare(0, 4, "GGUF") == 0)
    throw Error(path + ": expected a text step graph ('lanec-graph 1'), got a GGUF file");
  return parse_graph(text, path);
}

}  // namespace lanec
