#include "ferry/transform/expr_lexer.h"

#include <fmt/format.h>

#include <algorithm>

#include "ferry/transform/expr_parser.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform {

namespace {

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || (c >= '0' && c <= '9');
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
std::string LowerWord(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

}  // namespace

Status ExprLexer::Error(size_t pos, std::string_view message) const {
  return ExpressionError(origin_, text_, pos, message);
}

Result<Token> ExprLexer::Next() {
  Token tok;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pos_++;
    } else if (text_.substr(pos_, 2) == "--") {
      pos_ = std::min(text_.find('\n', pos_), text_.size());
    } else if (text_.substr(pos_, 2) == "/*") {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        return Error(pos_, "unterminated comment");
      }
      pos_ = end + 2;
    } else {
      break;
    }
  }
  tok = Token{};
  tok.pos = pos_;
  if (pos_ >= text_.size()) {
    return tok;
  }
  char c = text_[pos_];
  size_t start = pos_;
  if ((c == 'r' || c == 'R') && pos_ + 1 < text_.size() &&
      (text_[pos_ + 1] == '\'' || text_[pos_ + 1] == '"')) {
    FERRY_RETURN_IF_ERROR(LexString(true, &tok));
    return tok;
  }
  if (IsIdentStart(c)) {
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) {
      pos_++;
    }
    tok.kind = Tok::kIdent;
    tok.text = text_.substr(start, pos_ - start);
    tok.value = LowerWord(tok.text);
    return tok;
  }
  if (IsDigit(c) || (c == '.' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
    FERRY_RETURN_IF_ERROR(LexNumber(&tok));
    return tok;
  }
  if (c == '`') {
    FERRY_RETURN_IF_ERROR(LexQuotedName(&tok));
    return tok;
  }
  if (c == '\'' || c == '"') {
    FERRY_RETURN_IF_ERROR(LexString(false, &tok));
    return tok;
  }
  static constexpr std::string_view kOps[] = {"<=>", "==", "!=", "<>", "<=", ">=", "||", "(", ")",
                                              ",",   ".",  "[",  "]",  "+",  "-",  "*",  "/", "%",
                                              "=",   "<",  ">",  "!",  "&",  "|",  "^",  "~", ":"};
  for (std::string_view op : kOps) {
    if (text_.substr(pos_, op.size()) == op) {
      tok.kind = Tok::kOp;
      tok.text = op;
      pos_ += op.size();
      return tok;
    }
  }
  size_t len = 1;
  while (pos_ + len < text_.size() && (static_cast<uint8_t>(text_[pos_ + len]) & 0xC0) == 0x80) {
    len++;
  }
  return Error(pos_, fmt::format("unexpected character '{}'", text_.substr(pos_, len)));
}

Status ExprLexer::LexNumber(Token* t) {
  Token& tok = *t;
  size_t start = pos_;
  while (pos_ < text_.size() && IsDigit(text_[pos_])) {
    pos_++;
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    pos_++;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) {
      pos_++;
    }
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    size_t save = pos_++;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
      pos_++;
    }
    if (pos_ < text_.size() && IsDigit(text_[pos_])) {
      while (pos_ < text_.size() && IsDigit(text_[pos_])) {
        pos_++;
      }
    } else {
      pos_ = save;
    }
  }
  while (pos_ < text_.size() && IsIdentChar(text_[pos_])) {  // suffix: L, S, Y, D, F, BD
    pos_++;
  }
  tok.kind = Tok::kNumber;
  tok.text = text_.substr(start, pos_ - start);
  return Status::OK();
}

Status ExprLexer::LexQuotedName(Token* t) {
  Token& tok = *t;
  size_t start = pos_++;
  std::string value;
  while (true) {
    if (pos_ >= text_.size()) {
      return Error(start, "unterminated quoted name");
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
  tok.kind = Tok::kQuoted;
  tok.text = text_.substr(start, pos_ - start);
  tok.value = std::move(value);
  return Status::OK();
}

// Spark's string literals: backslash escapes (\n \t \' \\ \uXXXX \ooo ...) unless raw (r'..').
Status ExprLexer::LexString(bool raw, Token* t) {
  Token& tok = *t;
  size_t start = pos_;
  if (raw) {
    pos_++;
  }
  char quote = text_[pos_++];
  std::string value;
  while (true) {
    if (pos_ >= text_.size()) {
      return Error(start, "unterminated string");
    }
    char c = text_[pos_++];
    if (c == quote) {
      break;
    }
    if (c != '\\' || pos_ >= text_.size()) {
      value.push_back(c);
      continue;
    }
    if (raw) {
      value.push_back(c);
      value.push_back(text_[pos_++]);
      continue;
    }
    FERRY_RETURN_IF_ERROR(Unescape(&value));
  }
  tok.kind = Tok::kString;
  tok.text = text_.substr(start, pos_ - start);
  tok.value = std::move(value);
  return Status::OK();
}

Status ExprLexer::Unescape(std::string* value) {
  char e = text_[pos_++];
  if (e == 'u' && pos_ + 4 <= text_.size()) {
    uint32_t cp = 0;
    for (size_t k = 0; k < 4; k++) {
      char h = text_[pos_ + k];
      int v = IsDigit(h)                               ? h - '0'
              : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10
                                                       : -1;
      if (v < 0) {
        return Error(pos_ - 2, "bad \\u escape in string");
      }
      cp = cp * 16 + static_cast<uint32_t>(v);
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      return Error(pos_ - 2, "bad \\u escape in string");
    }
    AppendCodePoint(cp, value);
    pos_ += 4;
    return Status::OK();
  }
  if (e >= '0' && e <= '3' && pos_ + 2 <= text_.size() && text_[pos_] >= '0' &&
      text_[pos_] <= '7' && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '7') {
    AppendCodePoint(
        static_cast<uint32_t>((e - '0') * 64 + (text_[pos_] - '0') * 8 + (text_[pos_ + 1] - '0')),
        value);
    pos_ += 2;
    return Status::OK();
  }
  static constexpr std::string_view kFrom = "0bnrtZ";
  static constexpr std::string_view kTo("\0\b\n\r\t\x1A", 6);
  if (size_t k = kFrom.find(e); k != std::string_view::npos) {
    value->push_back(kTo[k]);
  } else if (e == '%' || e == '_') {
    value->push_back('\\');
    value->push_back(e);
  } else {
    value->push_back(e);
  }
  return Status::OK();
}

}  // namespace ferry::transform
