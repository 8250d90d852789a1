#include "ferry/transform/utf8.h"

#include <simdjson.h>

namespace ferry::transform {

bool IsValidUtf8(std::string_view s) {
  return simdjson::validate_utf8(s.data(), s.size());
}

size_t FindInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
      return i;
    }
    uint32_t cp = c & (0x7Fu >> n);
    for (size_t k = 1; k < n; k++) {
      auto cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        return i;
      }
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

size_t CountCodePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s) {
    n += (static_cast<uint8_t>(c) & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

size_t CodePointOffset(std::string_view s, size_t index) {
  size_t pos = 0;
  while (pos < s.size() && index > 0) {
    pos++;
    while (pos < s.size() && (static_cast<uint8_t>(s[pos]) & 0xC0) == 0x80) {
      pos++;
    }
    index--;
  }
  return pos;
}

uint32_t NextCodePoint(std::string_view s, size_t* pos) {
  auto c = static_cast<uint8_t>(s[*pos]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
  uint32_t cp = n == 1 ? c : c & (0x7Fu >> n);
  for (size_t k = 1; k < n && *pos + k < s.size(); k++) {
    cp = (cp << 6) | (static_cast<uint8_t>(s[*pos + k]) & 0x3Fu);
  }
  *pos += n;
  return cp;
}

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace ferry::transform
