#include "ferry/transform/base64.h"

#include <array>
#include <cstdint>

namespace ferry::transform {

namespace {

constexpr std::array<int8_t, 256> MakeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) {
    v = -1;
  }
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kAlphabet.size(); i++) {
    t[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  }
  t['-'] = 62;
  t['_'] = 63;
  return t;
}

constexpr std::array<int8_t, 256> kTable = MakeTable();

}  // namespace

bool DecodeBase64(std::string_view text, std::string* out) {
  size_t n = text.size();
  if (n % 4 == 0 && n >= 4) {
    size_t pad = text[n - 1] == '=' ? (text[n - 2] == '=' ? 2 : 1) : 0;
    n -= pad;
  }
  if (n % 4 == 1) {
    return false;
  }
  out->reserve(out->size() + n * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int8_t v = kTable[static_cast<uint8_t>(text[i])];
    if (v < 0) {
      return false;
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero (canonical encoding).
  return (acc & ((1u << bits) - 1)) == 0;
}

std::string EncodeBase64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<uint8_t>(bytes[i])} << 16) |
                 (uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8) |
                 static_cast<uint8_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) {
      out.push_back(kAlphabet[(v >> s) & 63]);
    }
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
    if (rest == 2) {
      v |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
    }
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace ferry::transform
