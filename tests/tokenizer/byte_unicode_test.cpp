#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "lib/tokenizer/byte_unicode.h"

using lanec::ByteUnicodeMap;

TEST_CASE("byte map: printable bytes stand for themselves, the rest move to U+0100+", "[tokenizer]") {
  const auto& map = ByteUnicodeMap::instance();
  CHECK(map.encode_byte('a') == "a");
  CHECK(map.encode_byte('!') == "!");
  CHECK(map.encode_byte(0xE9) == "\xC3\xA9");  // é is printable Latin-1
  CHECK(map.encode_byte(' ') == "\xC4\xA0");   // 'Ġ' U+0120
  CHECK(map.encode_byte('\n') == "\xC4\x8A");  // 'Ċ' U+010A
  CHECK(map.encode_byte(0) == "\xC4\x80");     // U+0100
  CHECK(map.encode_byte(0xAD) == "\xC5\x83");  // soft hyphen is the 68th moved byte: U+0143
}

TEST_CASE("byte map: all 256 bytes map to distinct text and decode back", "[tokenizer]") {
  const auto& map = ByteUnicodeMap::instance();
  std::set<std::string> seen;
  std::string all;
  for (int b = 0; b < 256; ++b) {
    seen.insert(map.encode_byte(static_cast<uint8_t>(b)));
    all += static_cast<char>(b);
  }
  CHECK(seen.size() == 256);
  std::string mapped;
  map.encode(all, mapped);
  CHECK(map.decode(mapped) == all);
}

TEST_CASE("byte map: decode copies code points outside the map unchanged", "[tokenizer]") {
  const auto& map = ByteUnicodeMap::instance();
  CHECK(map.decode("\xE4\xBD\xA0") == "\xE4\xBD\xA0");  // 你 is not a mapped code point
  CHECK(map.decode("a\xC4\xA0" "b") == "a b");
}
