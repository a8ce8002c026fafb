// GPT-2's reversible byte <-> Unicode mapping used by byte-level BPE
// vocabularies: printable bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF)
// stand for themselves, the other 68 bytes map in order to U+0100 + n, so
// every byte string becomes printable text (space -> 'Ġ', newline -> 'Ċ').
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lanec {

class ByteUnicodeMap {
 public:
  static const ByteUnicodeMap& instance();

  // UTF-8 text of the code point that stands for `byte`.
  const std::string& encode_byte(uint8_t byte) const { return byte_text_[byte]; }
  // Appends the mapped text of every byte of `bytes`.
  void encode(std::string_view bytes, std::string& out) const;
  // Reverses the map over a token's text. A code point outside the map (not
  // produced by encode, e.g. in a hand-written token) is copied unchanged.
  std::string decode(std::string_view mapped) const;

 private:
  ByteUnicodeMap();
  std::array<uint32_t, 256> byte_codepoint_{};
  std::array<std::string, 256> byte_text_;
  std::array<int16_t, 0x200> codepoint_byte_{};  // -1 when unmapped; all mapped code points are < 0x144
};

}  // namespace lanec
