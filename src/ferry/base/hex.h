// Hexadecimal digits: the value of one digit, for the decoders that read %XX escapes (URLs, Hive
// partition paths) and hex text (UUIDs of deletion vector files).
//
// Thread-safety: pure functions.
#pragma once

namespace ferry {

// 0-15 for '0'-'9', 'a'-'f' and 'A'-'F'; -1 for any other character.
inline int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace ferry
