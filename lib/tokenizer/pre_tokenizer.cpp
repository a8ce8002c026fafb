#define PCRE2_CODE_UNIT_WIDTH 8
#include "lib/tokenizer/pre_tokenizer.h"

#include <pcre2.h>

#include <new>
#include <stdexcept>

namespace lanec {

namespace {

// The patterns follow the reference tokenizers (GPT-2's encoder.py, the
// Llama 3 and Qwen2 tokenizer.json Split pre-tokenizers).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3Pattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Pattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace

bool pre_tokenizer_from_name(std::string_view name, PreTokenizerKind& kind) {
  if (name == "gpt-2") {
    kind = PreTokenizerKind::Gpt2;
  } else if (name == "llama-bpe") {
    kind = PreTokenizerKind::Llama3;
  } else if (name == "qwen2" || name == "deepseek-r1-qwen") {
    kind = PreTokenizerKind::Qwen2;
  } else {
    return false;
  }
  return true;
}

const char* pre_tokenizer_pattern(PreTokenizerKind kind) {
  switch (kind) {
    case PreTokenizerKind::Gpt2: return kGpt2Pattern;
    case PreTokenizerKind::Llama3: return kLlama3Pattern;
    case PreTokenizerKind::Qwen2: return kQwen2Pattern;
  }
  return kGpt2Pattern;
}

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(PreTokenizerKind kind) {
  auto compiled = std::make_shared<Compiled>();
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  const char* pattern = pre_tokenizer_pattern(kind);
  compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                                 &error_offset, nullptr);
  if (compiled->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    // The patterns are compile-time constants: failing here is a lanec bug.
    throw std::logic_error(std::string("pre-tokenizer regex does not compile at offset ") +
                           std::to_string(error_offset) + ": " +
                           reinterpret_cast<const char*>(message));
  }
  // JIT makes matching several times faster; without it (unsupported CPU)
  // pcre2_match falls back to the interpreter, so the result is ignored.
  pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);
  compiled_ = std::move(compiled);
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& words) const {
  if (text.empty()) return;
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> match_data(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr), pcre2_match_data_free);
  if (match_data == nullptr) throw std::bad_alloc();
  pcre2_match_data* match = match_data.get();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc = pcre2_match(compiled_->code, subject, text.size(), pos, 0, match, nullptr);
    if (rc < 0) {  // no match in the rest (only invalid UTF-8 is left)
      words.push_back(text.substr(pos));
      break;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    const size_t start = ovector[0];
    size_t end = ovector[1];
    if (start > pos) words.push_back(text.substr(pos, start - pos));  // skipped invalid bytes
    if (end == start) end = start + 1;  // the patterns never match empty; guard anyway
    words.push_back(text.substr(start, end - start));
    pos = end;
  }
}

}  // namespace lanec
