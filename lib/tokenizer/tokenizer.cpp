#include "lib/tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <optional>

#include "lib/common/error.h"
#include "lib/tokenizer/bpe_model.h"
#include "lib/tokenizer/spm_model.h"
#include "lib/tokenizer/token_index.h"
#include "lib/tokenizer/vocab_check.h"

namespace lanec {

struct Tokenizer::Impl {
  explicit Impl(Vocab v) : vocab(std::move(v)), index(vocab) {
    if (vocab.model == "gpt2") {
      bpe.emplace(vocab, index);
    } else {
      spm.emplace(vocab, index);
    }
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
      const auto id = static_cast<int32_t>(i);
      const TokenType type = type_of(id);
      const bool always = type == TokenType::UserDefined;
      const bool on_request = type == TokenType::Control || type == TokenType::Unknown;
      if ((!always && !on_request) || vocab.tokens[i].empty()) continue;
      specials_by_first_byte[static_cast<uint8_t>(vocab.tokens[i][0])].push_back(id);
    }
    // Longest first, so the first candidate that matches is the longest match.
    for (auto& candidates : specials_by_first_byte) {
      std::stable_sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
        return vocab.tokens[a].size() > vocab.tokens[b].size();
      });
    }
  }

  TokenType type_of(int32_t id) const {
    return vocab.types.empty() ? TokenType::Normal : vocab.types[id];
  }

  // The special token spelled at text[pos], or -1.
  int32_t special_at(std::string_view text, size_t pos, bool parse_special) const {
    for (int32_t id : specials_by_first_byte[static_cast<uint8_t>(text[pos])]) {
      if (!parse_special && type_of(id) != TokenType::UserDefined) continue;
      const std::string& token = vocab.tokens[id];
      if (text.compare(pos, token.size(), token) == 0) return id;
    }
    return -1;
  }

  // Every piece of text starts the text or follows a special token, and
  // SentencePiece puts its space in front of each such piece.
  void encode_text(std::string_view text, std::vector<int32_t>& out) const {
    if (bpe) {
      bpe->encode(text, out);
    } else {
      spm->encode(text, vocab.add_space_prefix, out);
    }
  }

  void check_id(int32_t id) const {
    if (id < 0 || id >= static_cast<int64_t>(vocab.tokens.size())) {
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                  std::to_string(vocab.tokens.size() - 1) + ")");
    }
  }

  std::string piece(int32_t id, bool render_special) const {
    const std::string& text = vocab.tokens[id];
    switch (type_of(id)) {
      case TokenType::Normal:
        return bpe ? bpe->decode_token(text) : SpmModel::decode_token(text);
      case TokenType::Byte: {
        uint8_t byte = 0;
        if (spm && SpmModel::parse_byte_token(text, byte)) return std::string(1, static_cast<char>(byte));
        return bpe ? bpe->decode_token(text) : text;
      }
      case TokenType::UserDefined:
        return text;
      case TokenType::Control:
      case TokenType::Unknown:
      case TokenType::Unused:
        return render_special ? text : std::string();
    }
    return text;
  }

  Vocab vocab;
  TokenIndex index;
  std::optional<BpeModel> bpe;
  std::optional<SpmModel> spm;
  std::array<std::vector<int32_t>, 256> specials_by_first_byte;
};

Tokenizer Tokenizer::from_vocab(Vocab vocab) {
  check_vocab(vocab);
  return Tokenizer(std::make_shared<const Impl>(std::move(vocab)));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const Impl& impl = *impl_;
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  if (add_special && impl.vocab.add_bos) ids.push_back(impl.vocab.bos_id);

  size_t fragment_start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const int32_t special = impl.special_at(text, pos, parse_special);
    if (special < 0) {
      ++pos;
      continue;
    }
    if (pos > fragment_start) {
      impl.encode_text(text.substr(fragment_start, pos - fragment_start), ids);
    }
    ids.push_back(special);
    pos += impl.vocab.tokens[special].size();
    fragment_start = pos;
  }
  if (fragment_start < text.size()) impl.encode_text(text.substr(fragment_start), ids);

  if (add_special && impl.vocab.add_eos) ids.push_back(impl.vocab.eos_id);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool render_special) const {
  const Impl& impl = *impl_;
  for (int32_t id : ids) impl.check_id(id);
  std::string out;
  // SentencePiece: undo the space encode put in front of the text.
  size_t strip_at = ids.size();
  if (impl.spm && impl.vocab.add_space_prefix) {
    strip_at = !ids.empty() && ids[0] == impl.vocab.bos_id ? 1 : 0;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string piece = impl.piece(ids[i], render_special);
    const TokenType type = impl.type_of(ids[i]);
    if (i == strip_at && (type == TokenType::Normal || type == TokenType::Byte) && !piece.empty() &&
        piece[0] == ' ') {
      piece.erase(0, 1);
    }
    out += piece;
  }
  return out;
}

const std::string& Tokenizer::token_text(int32_t id) const {
  impl_->check_id(id);
  return impl_->vocab.tokens[id];
}

std::string Tokenizer::token_piece(int32_t id) const {
  impl_->check_id(id);
  return impl_->piece(id, true);
}

int32_t Tokenizer::find_token(std::string_view text) const { return impl_->index.find(text); }
const Vocab& Tokenizer::vocab() const { return impl_->vocab; }
int32_t Tokenizer::n_tokens() const { return static_cast<int32_t>(impl_->vocab.tokens.size()); }
int32_t Tokenizer::bos_id() const { return impl_->vocab.bos_id; }
int32_t Tokenizer::eos_id() const { return impl_->vocab.eos_id; }

bool Tokenizer::is_control(int32_t id) const {
  impl_->check_id(id);
  return impl_->type_of(id) == TokenType::Control;
}

}  // namespace lanec
