// Tokens of the expression language (expr_parser.h): identifiers (case-folded copy kept),
// `backquoted names`, numbers with their suffixes, 'strings' / "strings" / r'raw strings' with
// Spark's escapes, and operators. Whitespace, `-- line` and `/* block */` comments are skipped.
// Internal to the transform module.
//
// Thread-safety: one lexer per parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/base/result.h"

namespace ferry::transform {

enum class Tok : uint8_t { kIdent, kQuoted, kNumber, kString, kOp, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  size_t pos = 0;         // byte offset in the text
  std::string_view text;  // as written
  std::string value;      // unescaped string / quoted name; lower-cased identifier
};

class ExprLexer {
 public:
  ExprLexer(std::string_view text, std::string_view origin) : text_(text), origin_(origin) {}

  // The next token (kEnd at the end); InvalidArgument with the position on bad input.
  Result<Token> Next();
  // Continues lexing at byte offset `pos` (after text the parser consumed itself).
  void Seek(size_t pos) { pos_ = pos; }

 private:
  Status Error(size_t pos, std::string_view message) const;
  Status LexNumber(Token* t);
  Status LexQuotedName(Token* t);
  Status LexString(bool raw, Token* t);
  Status Unescape(std::string* value);

  std::string_view text_;
  std::string_view origin_;
  size_t pos_ = 0;
};

}  // namespace ferry::transform
