#include "ferry/columnar/ddl.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ferry/base/check.h"

namespace ferry::columnar {

namespace {

char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); i++) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) {
      return false;
    }
  }
  return true;
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  c = AsciiLower(c);
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
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

// Byte offset of the first invalid UTF-8 sequence, or nullopt.
std::optional<size_t> FindInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<uint8_t>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
      return i;
    }
    uint32_t cp = n == 1 ? c : (c & (0x7F >> n));
    for (size_t k = 1; k < n; k++) {
      auto cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        return i;
      }
      cp = (cp << 6) | (cc & 0x3F);
    }
    bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += n;
  }
  return std::nullopt;
}

enum class TokenKind { kWord, kQuotedName, kString, kPunct, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t pos = 0;         // byte offset in the text
  std::string_view text;  // the token as written
  std::string value;      // unescaped content of quoted names and strings
};

class DdlParser {
 public:
  DdlParser(std::string_view text, std::string_view origin) : text_(text), origin_(origin) {}

  Result<Schema> ParseSchema() {
    FERRY_RETURN_IF_ERROR(Start());
    FERRY_ASSIGN_OR_RETURN(std::vector<Field> fields, ParseFieldList(/*in_struct=*/false, 0));
    return Schema(std::move(fields));
  }

  Result<DataTypePtr> ParseTypeOnly() {
    FERRY_RETURN_IF_ERROR(Start());
    FERRY_ASSIGN_OR_RETURN(DataTypePtr type, ParseType(0));
    if (tok_.kind != TokenKind::kEnd) {
      return ErrorAt(tok_, "expected end of input after the type, found {}", Describe(tok_));
    }
    return type;
  }

 private:
  Status Start() {
    if (auto bad = FindInvalidUtf8(text_)) {
      return ErrorAtPos(*bad, "invalid UTF-8");
    }
    return Advance();
  }

  // --- Errors -------------------------------------------------------------------------------

  template <typename... Args>
  Status ErrorAtPos(size_t pos, fmt::format_string<Args...> format, Args&&... args) const {
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i < pos && i < text_.size(); i++) {
      if (text_[i] == '\n') {
        line++;
        column = 1;
      } else if ((static_cast<uint8_t>(text_[i]) & 0xC0) != 0x80) {
        column++;
      }
    }
    return InvalidArgument("{}:{}:{}: {}", origin_, line, column,
                           fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status ErrorAt(const Token& t, fmt::format_string<Args...> format, Args&&... args) const {
    return ErrorAtPos(t.pos, format, std::forward<Args>(args)...);
  }

  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kEnd:
        return "end of input";
      case TokenKind::kPunct:
        return fmt::format("'{}'", t.text);
      case TokenKind::kString:
        return "a string";
      default:
        return fmt::format("'{}'", t.text.size() > 40 ? t.text.substr(0, 40) : t.text);
    }
  }

  // --- Lexer --------------------------------------------------------------------------------

  // Skips whitespace and comments; fails on an unterminated block comment.
  Status SkipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        pos_++;
      } else if (text_.substr(pos_, 2) == "--") {
        while (pos_ < text_.size() && text_[pos_] != '\n') {
          pos_++;
        }
      } else if (text_.substr(pos_, 2) == "/*") {
        size_t end = text_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) {
          return ErrorAtPos(pos_, "unterminated comment");
        }
        pos_ = end + 2;
      } else {
        break;
      }
    }
    return Status::OK();
  }

  Status Advance() {
    FERRY_RETURN_IF_ERROR(SkipSpace());
    tok_ = Token{};
    tok_.pos = pos_;
    if (pos_ >= text_.size()) {
      tok_.kind = TokenKind::kEnd;
      return Status::OK();
    }
    char c = text_[pos_];
    if (IsWordChar(c)) {
      size_t end = pos_;
      while (end < text_.size() && IsWordChar(text_[end])) {
        end++;
      }
      tok_.kind = TokenKind::kWord;
      tok_.text = text_.substr(pos_, end - pos_);
      pos_ = end;
      return Status::OK();
    }
    if (c == '`') {
      return LexQuotedName();
    }
    if (c == '\'' || c == '"') {
      return LexString(c);
    }
    if (c == '<' || c == '>' || c == '(' || c == ')' || c == ',' || c == ':') {
      tok_.kind = TokenKind::kPunct;
      tok_.text = text_.substr(pos_, 1);
      pos_++;
      return Status::OK();
    }
    size_t len = 1;
    while (pos_ + len < text_.size() && (static_cast<uint8_t>(text_[pos_ + len]) & 0xC0) == 0x80) {
      len++;
    }
    return ErrorAtPos(pos_, "unexpected character '{}'", text_.substr(pos_, len));
  }

  Status LexQuotedName() {
    size_t start = pos_++;
    std::string value;
    while (true) {
      if (pos_ >= text_.size()) {
        return ErrorAtPos(start, "unterminated quoted name");
      }
      char c = text_[pos_++];
      if (c == '`') {
        if (pos_ < text_.size() && text_[pos_] == '`') {
          value.push_back('`');
          pos_++;
          continue;
        }
        break;
      }
      value.push_back(c);
    }
    tok_.kind = TokenKind::kQuotedName;
    tok_.text = text_.substr(start, pos_ - start);
    tok_.value = std::move(value);
    return Status::OK();
  }

  // Spark's unescapeSQLString: \uXXXX, octal \ooo, the usual letters, \Z, and \x -> x otherwise.
  Status LexString(char quote) {
    size_t start = pos_++;
    std::string value;
    while (true) {
      if (pos_ >= text_.size()) {
        return ErrorAtPos(start, "unterminated string");
      }
      char c = text_[pos_++];
      if (c == quote) {
        break;
      }
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) {
        return ErrorAtPos(start, "unterminated string");
      }
      char e = text_[pos_++];
      if (e == 'u' && pos_ + 4 <= text_.size()) {
        uint32_t cp = 0;
        bool ok = true;
        for (size_t k = 0; k < 4; k++) {
          int h = HexValue(text_[pos_ + k]);
          ok = ok && h >= 0;
          cp = cp * 16 + static_cast<uint32_t>(h < 0 ? 0 : h);
        }
        if (ok && (cp < 0xD800 || cp > 0xDFFF)) {
          AppendUtf8(cp, &value);
          pos_ += 4;
          continue;
        }
        return ErrorAtPos(pos_ - 2, "bad \\u escape in string");
      }
      if (e >= '0' && e <= '3' && pos_ + 2 <= text_.size() && text_[pos_] >= '0' &&
          text_[pos_] <= '7' && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '7') {
        int v = (e - '0') * 64 + (text_[pos_] - '0') * 8 + (text_[pos_ + 1] - '0');
        AppendUtf8(static_cast<uint32_t>(v), &value);
        pos_ += 2;
        continue;
      }
      switch (e) {
        case '0':
          value.push_back('\0');
          break;
        case 'b':
          value.push_back('\b');
          break;
        case 'n':
          value.push_back('\n');
          break;
        case 'r':
          value.push_back('\r');
          break;
        case 't':
          value.push_back('\t');
          break;
        case 'Z':
          value.push_back('\x1A');
          break;
        case '%':
        case '_':
          value.push_back('\\');
          value.push_back(e);
          break;
        default:
          value.push_back(e);
      }
    }
    tok_.kind = TokenKind::kString;
    tok_.text = text_.substr(start, pos_ - start);
    tok_.value = std::move(value);
    return Status::OK();
  }

  bool IsPunct(char c) const { return tok_.kind == TokenKind::kPunct && tok_.text[0] == c; }
  bool IsKeyword(std::string_view kw) const {
    return tok_.kind == TokenKind::kWord && EqualsIgnoreCase(tok_.text, kw);
  }
  Status Expect(char c, std::string_view where) {
    if (!IsPunct(c)) {
      return ErrorAt(tok_, "expected '{}' {}, found {}", c, where, Describe(tok_));
    }
    return Advance();
  }

  // --- Grammar ------------------------------------------------------------------------------

  // Columns of a schema (until end of input) or fields of a struct (until '>').
  Result<std::vector<Field>> ParseFieldList(bool in_struct, int depth) {
    std::vector<Field> fields;
    if (in_struct && IsPunct('>')) {
      return fields;  // STRUCT<>
    }
    while (true) {
      size_t pos = tok_.pos;
      FERRY_ASSIGN_OR_RETURN(Field f, ParseField(in_struct, depth));
      for (size_t i = 0; i < fields.size(); i++) {
        if (EqualsIgnoreCase(fields[i].name, f.name)) {
          return ErrorAtPos(pos, "duplicate {} name '{}'", in_struct ? "field" : "column", f.name);
        }
      }
      fields.push_back(std::move(f));
      if (IsPunct(',')) {
        FERRY_RETURN_IF_ERROR(Advance());
        continue;
      }
      if (in_struct) {
        if (!IsPunct('>')) {
          return ErrorAt(tok_, "expected ',' or '>' after struct field '{}', found {}",
                         fields.back().name, Describe(tok_));
        }
        return fields;
      }
      if (tok_.kind != TokenKind::kEnd) {
        return ErrorAt(tok_, "expected ',' or end of input after column '{}', found {}",
                       fields.back().name, Describe(tok_));
      }
      return fields;
    }
  }

  Result<Field> ParseField(bool in_struct, int depth) {
    Field f;
    if (tok_.kind == TokenKind::kWord) {
      f.name = std::string(tok_.text);
    } else if (tok_.kind == TokenKind::kQuotedName) {
      if (tok_.value.empty()) {
        return ErrorAt(tok_, "empty {} name", in_struct ? "field" : "column");
      }
      f.name = tok_.value;
    } else {
      return ErrorAt(tok_, "expected a {} name, found {}", in_struct ? "field" : "column",
                     Describe(tok_));
    }
    FERRY_RETURN_IF_ERROR(Advance());
    if (in_struct && IsPunct(':')) {
      FERRY_RETURN_IF_ERROR(Advance());
    }
    if (tok_.kind != TokenKind::kWord) {
      return ErrorAt(tok_, "expected a type for {} '{}', found {}", in_struct ? "field" : "column",
                     f.name, Describe(tok_));
    }
    FERRY_ASSIGN_OR_RETURN(f.type, ParseType(depth));
    FERRY_ASSIGN_OR_RETURN(f.nullable, ParseNullability());
    if (IsKeyword("COMMENT")) {
      FERRY_RETURN_IF_ERROR(Advance());
      if (tok_.kind != TokenKind::kString) {
        return ErrorAt(tok_, "expected a string after COMMENT, found {}", Describe(tok_));
      }
      f.metadata.emplace_back("comment", EncodeJsonString(tok_.value));
      FERRY_RETURN_IF_ERROR(Advance());
    }
    return f;
  }

  // [NOT NULL]: returns whether the thing stays nullable.
  Result<bool> ParseNullability() {
    if (!IsKeyword("NOT")) {
      return true;
    }
    FERRY_RETURN_IF_ERROR(Advance());
    if (!IsKeyword("NULL")) {
      return ErrorAt(tok_, "expected NULL after NOT, found {}", Describe(tok_));
    }
    FERRY_RETURN_IF_ERROR(Advance());
    return false;
  }

  // '(' n [',' m] ')' after a type name; `second` is null when only one number is allowed.
  Status ParseTypeArgs(std::string_view type_name, int64_t* first, int64_t* second) {
    FERRY_RETURN_IF_ERROR(Advance());  // '('
    FERRY_ASSIGN_OR_RETURN(*first, ParseInteger(type_name));
    if (second != nullptr && IsPunct(',')) {
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(*second, ParseInteger(type_name));
    }
    return Expect(')', fmt::format("to close the arguments of {}", type_name));
  }

  Result<int64_t> ParseInteger(std::string_view type_name) {
    bool digits = tok_.kind == TokenKind::kWord && !tok_.text.empty();
    for (char c : tok_.text) {
      digits = digits && IsDigit(c);
    }
    if (!digits) {
      return ErrorAt(tok_, "expected a number in {}(...), found {}", type_name, Describe(tok_));
    }
    if (tok_.text.size() > 9) {
      return ErrorAt(tok_, "number {} in {}(...) is too large", tok_.text, type_name);
    }
    int64_t v = 0;
    for (char c : tok_.text) {
      v = v * 10 + (c - '0');
    }
    FERRY_RETURN_IF_ERROR(Advance());
    return v;
  }

  Result<DataTypePtr> ParseType(int depth) {
    if (depth >= kMaxDdlDepth) {
      return ErrorAt(tok_, "types nested deeper than {} levels", kMaxDdlDepth);
    }
    if (tok_.kind != TokenKind::kWord) {
      return ErrorAt(tok_, "expected a type, found {}", Describe(tok_));
    }
    Token name = tok_;
    std::string lower;
    for (char c : name.text) {
      lower.push_back(AsciiLower(c));
    }
    if (lower == "array" || lower == "map" || lower == "struct") {
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_RETURN_IF_ERROR(Expect('<', fmt::format("after {}", lower == "array" ? "ARRAY"
                                                                : lower == "map" ? "MAP"
                                                                                 : "STRUCT")));
      if (lower == "array") {
        return ParseArrayRest(depth);
      }
      if (lower == "map") {
        return ParseMapRest(depth);
      }
      FERRY_ASSIGN_OR_RETURN(std::vector<Field> fields, ParseFieldList(true, depth + 1));
      FERRY_RETURN_IF_ERROR(Expect('>', "after struct fields"));
      return DataType::Struct(std::move(fields));
    }
    FERRY_RETURN_IF_ERROR(Advance());
    if (lower == "decimal" || lower == "dec" || lower == "numeric") {
      int64_t precision = 10;
      int64_t scale = 0;
      if (IsPunct('(')) {
        FERRY_RETURN_IF_ERROR(ParseTypeArgs("DECIMAL", &precision, &scale));
      }
      if (precision < 1 || precision > 38) {
        return ErrorAt(name, "decimal precision {} is outside 1..38", precision);
      }
      if (scale > precision) {
        return ErrorAt(name, "decimal scale {} is larger than its precision {}", scale, precision);
      }
      return DataType::Decimal(static_cast<int32_t>(precision), static_cast<int32_t>(scale));
    }
    if (lower == "char" || lower == "varchar" || lower == "fixed") {
      if (!IsPunct('(')) {
        return ErrorAt(tok_, "expected '(' and a length after {}, found {}", name.text,
                       Describe(tok_));
      }
      int64_t length = 0;
      FERRY_RETURN_IF_ERROR(ParseTypeArgs(name.text, &length, nullptr));
      if (length < 1) {
        return ErrorAt(name, "{} length must be positive", name.text);
      }
      return lower == "fixed" ? DataType::FixedBinary(static_cast<int32_t>(length))
                              : DataType::String();
    }
    if (DataTypePtr t = SimpleType(lower)) {
      return t;
    }
    if (lower == "interval" || lower == "void" || lower == "variant" || lower == "object") {
      return ErrorAt(name, "type '{}' is not supported", name.text);
    }
    return ErrorAt(name, "unknown type '{}'", name.text);
  }

  static DataTypePtr SimpleType(std::string_view n) {
    static const std::pair<std::string_view, DataTypePtr (*)()> kTypes[] = {
        {"boolean", DataType::Boolean}, {"tinyint", DataType::Int8},  {"byte", DataType::Int8},
        {"smallint", DataType::Int16},  {"short", DataType::Int16},   {"int", DataType::Int32},
        {"integer", DataType::Int32},   {"bigint", DataType::Int64},  {"long", DataType::Int64},
        {"float", DataType::Float32},   {"real", DataType::Float32},  {"double", DataType::Float64},
        {"string", DataType::String},   {"binary", DataType::Binary}, {"date", DataType::Date},
        {"uint8", DataType::UInt8},     {"uint16", DataType::UInt16}, {"uint32", DataType::UInt32},
        {"uint64", DataType::UInt64},   {"json", DataType::Json},
    };
    for (const auto& [name, make] : kTypes) {
      if (n == name) {
        return make();
      }
    }
    static const std::pair<std::string_view, std::pair<TimeUnit, bool>> kTimestamps[] = {
        {"timestamp", {TimeUnit::kMicros, true}},
        {"timestamp_ltz", {TimeUnit::kMicros, true}},
        {"timestamp_ntz", {TimeUnit::kMicros, false}},
        {"timestamp_millis", {TimeUnit::kMillis, true}},
        {"timestamp_nanos", {TimeUnit::kNanos, true}},
        {"timestamp_ntz_millis", {TimeUnit::kMillis, false}},
        {"timestamp_ntz_nanos", {TimeUnit::kNanos, false}},
    };
    for (const auto& [name, spec] : kTimestamps) {
      if (n == name) {
        return DataType::Timestamp(spec.first, spec.second);
      }
    }
    return nullptr;
  }

  Result<DataTypePtr> ParseArrayRest(int depth) {
    FERRY_ASSIGN_OR_RETURN(DataTypePtr element, ParseType(depth + 1));
    FERRY_ASSIGN_OR_RETURN(bool nullable, ParseNullability());
    FERRY_RETURN_IF_ERROR(Expect('>', "after array element type"));
    return DataType::List(std::move(element), nullable);
  }

  Result<DataTypePtr> ParseMapRest(int depth) {
    FERRY_ASSIGN_OR_RETURN(DataTypePtr key, ParseType(depth + 1));
    FERRY_RETURN_IF_ERROR(Expect(',', "after map key type"));
    FERRY_ASSIGN_OR_RETURN(DataTypePtr value, ParseType(depth + 1));
    FERRY_ASSIGN_OR_RETURN(bool nullable, ParseNullability());
    FERRY_RETURN_IF_ERROR(Expect('>', "after map value type"));
    return DataType::Map(std::move(key), std::move(value), nullable);
  }

  std::string_view text_;
  std::string_view origin_;
  size_t pos_ = 0;
  Token tok_;
};

}  // namespace

Result<Schema> ParseDdlSchema(std::string_view ddl, std::string_view origin) {
  return DdlParser(ddl, origin).ParseSchema();
}

Result<DataTypePtr> ParseDdlType(std::string_view ddl, std::string_view origin) {
  return DdlParser(ddl, origin).ParseTypeOnly();
}

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
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
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

void FuzzDdlRoundTrip(std::string_view input) {
  Result<Schema> schema = ParseDdlSchema(input);
  if (schema.ok()) {
    std::string printed = schema->ToString();
    Result<Schema> again = ParseDdlSchema(printed);
    FERRY_CHECK_MSG(again.ok(), again.status().ToString() + " on " + printed);
    FERRY_CHECK_MSG(again->Equals(*schema, /*check_metadata=*/true), printed);
  }
  Result<DataTypePtr> type = ParseDdlType(input);
  if (type.ok()) {
    std::string printed = (*type)->ToString();
    Result<DataTypePtr> again = ParseDdlType(printed);
    FERRY_CHECK_MSG(again.ok(), again.status().ToString() + " on " + printed);
    FERRY_CHECK_MSG((*again)->Equals(**type, /*check_metadata=*/true), printed);
  }
}

}  // namespace ferry::columnar
