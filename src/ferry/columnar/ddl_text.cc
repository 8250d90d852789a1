// The text helpers of ddl.h: quoting names and strings for DDL, and JSON string literals for
// field metadata.
#include <fmt/format.h>

#include "ferry/base/json_escape.h"
#include "ferry/columnar/ddl.h"
#include "ferry/columnar/ddl_internal.h"

namespace ferry::columnar {

using ddl_internal::AppendUtf8;
using ddl_internal::HexValue;
using ddl_internal::IsDigit;
using ddl_internal::IsWordChar;

std::string QuoteDdlName(std::string_view name) {
  bool bare = !name.empty() && !IsDigit(name[0]);
  for (char c : name) {
    bare = bare && IsWordChar(c);
  }
  if (bare) {
    return std::string(name);
  }
  std::string out = "`";
  for (char c : name) {
    out.push_back(c);
    if (c == '`') {
      out.push_back('`');
    }
  }
  out.push_back('`');
  return out;
}

std::string QuoteDdlString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<uint8_t>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('\'');
  return out;
}

std::string EncodeJsonString(std::string_view text) {
  std::string out = "\"";
  AppendJsonEscaped(text, &out);
  out.push_back('"');
  return out;
}

Result<std::string> DecodeJsonString(std::string_view json) {
  if (json.size() < 2 || json.front() != '"' || json.back() != '"') {
    return InvalidArgument("not a JSON string: {}", json);
  }
  std::string out;
  auto read_hex4 = [&](size_t at, uint32_t* cp) {
    if (at + 4 > json.size() - 1) {
      return false;
    }
    *cp = 0;
    for (size_t k = 0; k < 4; k++) {
      int h = HexValue(json[at + k]);
      if (h < 0) {
        return false;
      }
      *cp = *cp * 16 + static_cast<uint32_t>(h);
    }
    return true;
  };
  for (size_t i = 1; i + 1 < json.size(); i++) {
    char c = json[i];
    if (c == '"' || static_cast<uint8_t>(c) < 0x20) {
      return InvalidArgument("bad character in JSON string at offset {}", i);
    }
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 2 >= json.size()) {
      return InvalidArgument("bad escape in JSON string at offset {}", i);
    }
    char e = json[++i];
    static constexpr std::string_view kFrom = "\"\\/bfnrt";
    static constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
    if (size_t k = kFrom.find(e); k != std::string_view::npos) {
      out.push_back(kTo[k]);
      continue;
    }
    uint32_t cp = 0;
    if (e != 'u' || !read_hex4(i + 1, &cp)) {
      return InvalidArgument("bad escape in JSON string at offset {}", i - 1);
    }
    i += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low = 0;
      if (i + 2 >= json.size() || json[i + 1] != '\\' || json[i + 2] != 'u' ||
          !read_hex4(i + 3, &low) || low < 0xDC00 || low > 0xDFFF) {
        return InvalidArgument("unpaired surrogate in JSON string at offset {}", i - 5);
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      i += 6;
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return InvalidArgument("unpaired surrogate in JSON string at offset {}", i - 5);
    }
    AppendUtf8(cp, &out);
  }
  return out;
}
}  // namespace ferry::columnar
