// Token ids typed on the command line (ref --tokens, tokenize --decode).
#pragma once

#include <climits>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "lib/common/error.h"

namespace lanec::app {

// "12 34,56" -> {12, 34, 56}: non-negative ids separated by spaces or
// commas; anything else is a user error naming `option` and the word.
inline std::vector<int32_t> parse_token_ids(const std::string& text, const std::string& option) {
  std::string spaced = text;
  for (char& c : spaced)
    if (c == ',') c = ' ';
  std::istringstream words(spaced);
  std::vector<int32_t> ids;
  for (std::string word; words >> word;) {
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || value < 0 || value > INT32_MAX)
      throw Error(option + ": expected non-negative token ids separated by spaces or commas, got '" + word + "'");
    ids.push_back(static_cast<int32_t>(value));
  }
  return ids;
}

}  // namespace lanec::app
