// Text -> id lookup over a vocabulary's tokens. The keys are views into the
// Vocab's strings, so the index must not outlive (or be copied away from)
// the Vocab it was built from; Tokenizer keeps both in one object.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "lib/tokenizer/vocab.h"

namespace lanec {

class TokenIndex {
 public:
  explicit TokenIndex(const Vocab& vocab) {
    ids_.reserve(vocab.tokens.size());
    // On duplicate texts the lowest id wins, as in the reference loaders.
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
      ids_.emplace(std::string_view(vocab.tokens[i]), static_cast<int32_t>(i));
    }
  }
  // -1 when no token has this text.
  int32_t find(std::string_view text) const {
    const auto it = ids_.find(text);
    return it == ids_.end() ? -1 : it->second;
  }

 private:
  std::unordered_map<std::string_view, int32_t> ids_;
};

}  // namespace lanec
