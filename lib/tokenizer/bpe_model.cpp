#include "lib/tokenizer/bpe_model.h"

#include <queue>
#include <string>

#include "lib/common/error.h"
#include "lib/tokenizer/byte_unicode.h"

namespace lanec {

namespace {

// check_vocab has refused unknown pre-tokenizers before a model is built.
PreTokenizerKind checked_pre_kind(const Vocab& vocab) {
  PreTokenizerKind kind{};
  if (!pre_tokenizer_from_name(vocab.pre, kind)) {
    throw InternalError("BpeModel: unknown pre-tokenizer '" + vocab.pre + "' got past check_vocab");
  }
  return kind;
}

struct Symbol {
  int32_t id;    // token of the symbol's text, -1 if the vocabulary lacks it
  int32_t prev;  // index of the previous live symbol, -1 at the start
  int32_t next;  // index of the next live symbol, -1 at the end
  bool alive;
};

struct Candidate {
  int32_t rank;
  int32_t left;  // symbol index of the pair's left side
  int32_t left_id;
  int32_t right_id;
  int32_t merged_id;
};

// Lowest rank on top of the queue; leftmost first among equal ranks.
struct CandidateAfter {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
};

}  // namespace

BpeModel::BpeModel(const Vocab& vocab, const TokenIndex& index)
    : index_(index), pre_tokenizer_(checked_pre_kind(vocab)), unk_id_(vocab.unk_id) {
  whole_word_first_ = vocab.pre == "llama-bpe";
  const auto& byte_map = ByteUnicodeMap::instance();
  for (int b = 0; b < 256; ++b) byte_id_[b] = index.find(byte_map.encode_byte(static_cast<uint8_t>(b)));

  merges_.reserve(vocab.merges.size());
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& merge = vocab.merges[rank];
    // check_vocab has made sure the first space separates two non-empty sides.
    const size_t space = merge.find(' ');
    if (space == std::string::npos) throw InternalError("BpeModel: malformed merge '" + merge + "' got past check_vocab");
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    const int32_t left_id = index.find(left);
    const int32_t right_id = index.find(right);
    const int32_t merged_id = index.find(std::string(left) + std::string(right));
    // A merge whose sides or result are not tokens can never fire on token
    // symbols; the reference tokenizers reject such vocabularies, we skip it.
    if (left_id < 0 || right_id < 0 || merged_id < 0) continue;
    merges_.emplace(pair_key(left_id, right_id), Merge{static_cast<int32_t>(rank), merged_id});
  }
}

void BpeModel::encode(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<std::string_view> words;
  pre_tokenizer_.split(text, words);
  for (std::string_view word : words) encode_word(word, out);
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  const auto& byte_map = ByteUnicodeMap::instance();
  if (whole_word_first_) {
    std::string mapped;
    byte_map.encode(word, mapped);
    const int32_t id = index_.find(mapped);
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }

  const auto n = static_cast<int32_t>(word.size());
  std::vector<Symbol> symbols(word.size());
  for (int32_t i = 0; i < n; ++i) {
    symbols[i] = Symbol{byte_id_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1, true};
  }

  std::priority_queue<Candidate, std::vector<Candidate>, CandidateAfter> queue;
  auto offer = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = symbols[left].next;
    if (right < 0 || symbols[left].id < 0 || symbols[right].id < 0) return;
    const auto it = merges_.find(pair_key(symbols[left].id, symbols[right].id));
    if (it == merges_.end()) return;
    queue.push(Candidate{it->second.rank, left, symbols[left].id, symbols[right].id, it->second.merged_id});
  };
  for (int32_t i = 0; i + 1 < n; ++i) offer(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    // Skip candidates made stale by an earlier merge on either side.
    if (!left.alive || left.id != top.left_id || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    if (right.id != top.right_id) continue;
    left.id = top.merged_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    offer(left.prev);
    offer(top.left);
  }

  for (int32_t i = 0; i >= 0 && i < n; i = symbols[i].next) {
    const int32_t id = symbols[i].id;
    if (id >= 0) {
      out.push_back(id);
    } else if (unk_id_ >= 0) {  // a byte the vocabulary cannot spell
      out.push_back(unk_id_);
    }
  }
}

std::string BpeModel::decode_token(std::string_view token_text) const {
  return ByteUnicodeMap::instance().decode(token_text);
}

}  // namespace lanec
