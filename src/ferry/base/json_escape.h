// JSON string escaping (RFC 8259 section 7), the one copy the log lines, the DDL's comments and
// the Protobuf-to-JSON writer share: `"` and `\` escaped, newline, carriage return and tab as
// \n \r \t, every other control character below 0x20 as \u00XX; every other byte copied as it is
// (the caller checks UTF-8 where it must). No quotes are added.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace ferry {

inline void AppendJsonEscaped(std::string_view text, std::string* out) {
  for (char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char u[7];
          std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(c));
          out->append(u, 6);
        } else {
          out->push_back(c);
        }
    }
  }
}

}  // namespace ferry
