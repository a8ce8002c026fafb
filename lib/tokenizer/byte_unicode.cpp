#include "lib/tokenizer/byte_unicode.h"

#include "lib/tokenizer/utf8.h"

namespace lanec {

namespace {

bool is_printable_byte(uint32_t b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

}  // namespace

const ByteUnicodeMap& ByteUnicodeMap::instance() {
  static const ByteUnicodeMap map;
  return map;
}

ByteUnicodeMap::ByteUnicodeMap() {
  codepoint_byte_.fill(-1);
  uint32_t next_extra = 0x100;
  for (uint32_t b = 0; b < 256; ++b) {
    const uint32_t cp = is_printable_byte(b) ? b : next_extra++;
    byte_codepoint_[b] = cp;
    utf8::append_codepoint(byte_text_[b], cp);
    codepoint_byte_[cp] = static_cast<int16_t>(b);
  }
}

void ByteUnicodeMap::encode(std::string_view bytes, std::string& out) const {
  for (char c : bytes) out += byte_text_[static_cast<uint8_t>(c)];
}

std::string ByteUnicodeMap::decode(std::string_view mapped) const {
  std::string out;
  out.reserve(mapped.size());
  size_t pos = 0;
  while (pos < mapped.size()) {
    const size_t length = utf8::sequence_length(mapped, pos);
    const auto b0 = static_cast<uint8_t>(mapped[pos]);
    uint32_t cp = 0x200;  // "unmapped" unless decoded below
    if (length == 1 && b0 < 0x80) {
      cp = b0;
    } else if (length == 2) {
      cp = ((b0 & 0x1Fu) << 6) | (static_cast<uint8_t>(mapped[pos + 1]) & 0x3Fu);
    }
    if (cp < codepoint_byte_.size() && codepoint_byte_[cp] >= 0) {
      out += static_cast<char>(codepoint_byte_[cp]);
    } else {
      out.append(mapped.substr(pos, length));
    }
    pos += length;
  }
  return out;
}

}  // namespace lanec
