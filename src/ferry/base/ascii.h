// ASCII case mapping for names and keywords (URI schemes, option values, column names). Bytes
// outside A-Z / a-z are left alone, whatever the locale.
#pragma once

#include <string>
#include <string_view>

namespace ferry {

inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}
inline char AsciiUpper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c;
}

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = AsciiLower(c);
  }
  return out;
}

inline std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = AsciiUpper(c);
  }
  return out;
}

}  // namespace ferry
