#include "lib/tokenizer/gguf_vocab.h"

#include <cstdint>
#include <optional>
#include <string>

#include "lib/common/error.h"
#include "lib/gguf/gguf_file.h"
#include "lib/tokenizer/vocab_check.h"

namespace lanec {

namespace {

constexpr const char* kModel = "tokenizer.ggml.model";
constexpr const char* kPre = "tokenizer.ggml.pre";
constexpr const char* kTokens = "tokenizer.ggml.tokens";
constexpr const char* kTokenType = "tokenizer.ggml.token_type";
constexpr const char* kMerges = "tokenizer.ggml.merges";
constexpr const char* kScores = "tokenizer.ggml.scores";

class KeyReader {
 public:
  explicit KeyReader(const GgufFile& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    fail_vocab(file_.path(), key, why);
  }

  const GgufValue* find(const std::string& key) const { return file_.find(key); }

  const GgufValue& require(const std::string& key) const {
    const GgufValue* value = file_.find(key);
    if (value == nullptr) fail(key, "missing (needed to build the tokenizer)");
    return *value;
  }

  void expect_type(const std::string& key, const GgufValue& value, GgufValueType type) const {
    if (value.type != type) {
      fail(key, std::string("expected ") + gguf_value_type_name(type) + ", got " +
                    gguf_value_type_name(value.type));
    }
  }

  const GgufArray& array_of(const std::string& key, const GgufValue& value, const char* what) const {
    if (value.type != GgufValueType::ARRAY) {
      fail(key, std::string("expected an array of ") + what + ", got " + gguf_value_type_name(value.type));
    }
    return std::get<GgufArray>(value.data);
  }

  std::string string_value(const std::string& key, const GgufValue& value) const {
    expect_type(key, value, GgufValueType::STRING);
    return std::get<std::string>(value.data);
  }

  std::vector<std::string> string_array(const std::string& key, const GgufValue& value) const {
    const GgufArray& array = array_of(key, value, "strings");
    if (array.elem_type != GgufValueType::STRING) {
      fail(key, std::string("expected an array of strings, got an array of ") +
                    gguf_value_type_name(array.elem_type));
    }
    std::vector<std::string> out;
    out.reserve(array.items.size());
    for (const GgufValue& item : array.items) out.push_back(std::get<std::string>(item.data));
    return out;
  }

  // Any integer type that fits int64_t (gguf_integer_of); false otherwise.
  static bool integer_of(const GgufValue& value, int64_t& out) {
    const std::optional<GgufInteger> i = gguf_integer_of(value);
    if (!i || (!i->negative && i->magnitude > static_cast<uint64_t>(INT64_MAX))) return false;
    // A negative magnitude is at most 2^63 (it came from an int64_t).
    out = i->negative ? -static_cast<int64_t>(i->magnitude - 1) - 1 : static_cast<int64_t>(i->magnitude);
    return true;
  }

  std::vector<int64_t> int_array(const std::string& key, const GgufValue& value) const {
    const GgufArray& array = array_of(key, value, "integers");
    std::vector<int64_t> out;
    out.reserve(array.items.size());
    for (const GgufValue& item : array.items) {
      int64_t v = 0;
      if (!integer_of(item, v)) {
        fail(key, std::string("expected an array of integers, got an array of ") +
                      gguf_value_type_name(array.elem_type));
      }
      out.push_back(v);
    }
    return out;
  }

  std::vector<float> float_array(const std::string& key, const GgufValue& value) const {
    const GgufArray& array = array_of(key, value, "floats");
    std::vector<float> out;
    out.reserve(array.items.size());
    for (const GgufValue& item : array.items) {
      if (item.type == GgufValueType::F32) {
        out.push_back(std::get<float>(item.data));
      } else if (item.type == GgufValueType::F64) {
        out.push_back(static_cast<float>(std::get<double>(item.data)));
      } else {
        fail(key, std::string("expected an array of f32, got an array of ") +
                      gguf_value_type_name(array.elem_type));
      }
    }
    return out;
  }

  // Optional token id; -1 when absent. A -1 stored in the file is an error,
  // which is why the id is checked here, before it is narrowed to a Vocab field.
  int32_t token_id_or_none(const std::string& key, size_t n_tokens) const {
    const GgufValue* value = find(key);
    if (value == nullptr) return -1;
    int64_t id = 0;
    if (!integer_of(*value, id)) {
      fail(key, std::string("expected an integer token id, got ") + gguf_value_type_name(value->type));
    }
    check_token_id(file_.path(), key, "token", id, n_tokens);
    return static_cast<int32_t>(id);
  }

  // tokenizer.ggml.token_type, each entry checked before it is narrowed to a
  // TokenType; empty when the key is absent.
  std::vector<TokenType> token_types(const std::string& key) const {
    std::vector<TokenType> out;
    const GgufValue* value = find(key);
    if (value == nullptr) return out;
    const std::vector<int64_t> raw = int_array(key, *value);
    out.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      check_token_type(file_.path(), i, raw[i]);
      out.push_back(static_cast<TokenType>(raw[i]));
    }
    return out;
  }

  bool bool_or(const std::string& key, bool fallback) const {
    const GgufValue* value = find(key);
    if (value == nullptr) return fallback;
    expect_type(key, *value, GgufValueType::BOOL);
    return std::get<bool>(value->data);
  }

 private:
  const GgufFile& file_;
};

}  // namespace

// Reads each key (type errors name it), then applies check_vocab's rules in
// stages, so that a wrong model is reported before the arrays are read and a
// wrong array before the special ids.
Vocab load_vocab(const GgufFile& file) {
  const KeyReader keys(file);
  Vocab vocab;
  vocab.model = keys.string_value(kModel, keys.require(kModel));
  const GgufValue* pre = keys.find(kPre);
  vocab.pre = pre != nullptr ? keys.string_value(kPre, *pre) : "default";
  check_tokenizer_model(vocab, file.path());

  vocab.tokens = keys.string_array(kTokens, keys.require(kTokens));
  vocab.types = keys.token_types(kTokenType);
  if (vocab.model == "gpt2") vocab.merges = keys.string_array(kMerges, keys.require(kMerges));
  if (const GgufValue* scores = keys.find(kScores)) vocab.scores = keys.float_array(kScores, *scores);
  check_vocab_arrays(vocab, file.path());

  const size_t n = vocab.tokens.size();
  vocab.bos_id = keys.token_id_or_none("tokenizer.ggml.bos_token_id", n);
  vocab.eos_id = keys.token_id_or_none("tokenizer.ggml.eos_token_id", n);
  vocab.unk_id = keys.token_id_or_none("tokenizer.ggml.unknown_token_id", n);
  vocab.pad_id = keys.token_id_or_none("tokenizer.ggml.padding_token_id", n);
  // SentencePiece vocabularies start with BOS unless they say otherwise.
  const bool spm = vocab.model == "llama";
  vocab.add_bos = keys.bool_or("tokenizer.ggml.add_bos_token", spm) && vocab.bos_id >= 0;
  vocab.add_eos = keys.bool_or("tokenizer.ggml.add_eos_token", false) && vocab.eos_id >= 0;
  vocab.add_space_prefix = keys.bool_or("tokenizer.ggml.add_space_prefix", spm);
  check_special_ids(vocab, file.path());
  return vocab;
}

}  // namespace lanec
