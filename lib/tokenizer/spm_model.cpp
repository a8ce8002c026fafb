#include "lib/tokenizer/spm_model.h"

#include <cstdio>
#include <queue>

#include "lib/tokenizer/utf8.h"

namespace lanec {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 '▁'

struct Symbol {
  size_t start;  // byte range in the escaped text
  size_t length;
  int32_t prev;
  int32_t next;
};

struct Candidate {
  float score;
  int32_t left;
  size_t length;  // of the merged text; a mismatch marks a stale candidate
  int32_t id;
};

// Highest score on top of the queue; leftmost first among equal scores.
struct CandidateAfter {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  }
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

SpmModel::SpmModel(const Vocab& vocab, const TokenIndex& index) : vocab_(vocab), index_(index) {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_id_[b] = index.find(name);
  }
}

bool SpmModel::parse_byte_token(std::string_view text, uint8_t& byte) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return false;
  const int hi = hex_digit(text[3]);
  const int lo = hex_digit(text[4]);
  if (hi < 0 || lo < 0) return false;
  byte = static_cast<uint8_t>(hi * 16 + lo);
  return true;
}

std::string SpmModel::decode_token(std::string_view token_text) {
  std::string out;
  out.reserve(token_text.size());
  size_t pos = 0;
  while (pos < token_text.size()) {
    if (token_text.substr(pos, kSpaceMark.size()) == kSpaceMark) {
      out += ' ';
      pos += kSpaceMark.size();
    } else {
      out += token_text[pos++];
    }
  }
  return out;
}

void SpmModel::encode(std::string_view raw, bool space_prefix, std::vector<int32_t>& out) const {
  std::string text;
  text.reserve((raw.size() + 1) * 3);
  if (space_prefix) text += kSpaceMark;
  for (char c : raw) {
    if (c == ' ') {
      text += kSpaceMark;
    } else {
      text += c;
    }
  }
  if (text.empty()) return;

  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = utf8::sequence_length(text, pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back(Symbol{pos, length, index - 1, index + 1});
    pos += length;
  }
  symbols.back().next = -1;

  const std::string_view view(text);
  std::priority_queue<Candidate, std::vector<Candidate>, CandidateAfter> queue;
  auto offer = [&](int32_t left) {
    if (left < 0 || symbols[left].next < 0) return;
    const Symbol& a = symbols[left];
    const Symbol& b = symbols[a.next];
    const int32_t id = index_.find(view.substr(a.start, a.length + b.length));
    if (id < 0) return;
    const float score = vocab_.scores.empty() ? 0.0f : vocab_.scores[id];
    queue.push(Candidate{score, left, a.length + b.length, id});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) offer(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    // Stale when either side changed since the candidate was offered.
    if (left.length == 0 || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    if (left.length + right.length != top.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    offer(left.prev);
    offer(top.left);
  }

  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = view.substr(symbols[i].start, symbols[i].length);
    const int32_t id = index_.find(piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {
      const int32_t byte_id = byte_id_[static_cast<uint8_t>(c)];
      if (byte_id >= 0) {
        out.push_back(byte_id);
      } else if (vocab_.unk_id >= 0) {
        out.push_back(vocab_.unk_id);
        break;  // one unknown token for the whole character
      }
    }
  }
}

}  // namespace lanec
