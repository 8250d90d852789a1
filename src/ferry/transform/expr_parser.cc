#include "ferry/transform/expr_parser.h"

#include <fmt/format.h>

#include <algorithm>

#include "ferry/columnar/ddl.h"
#include "ferry/transform/expr_lexer.h"
#include "ferry/transform/expr_literal.h"
#include "ferry/transform/number_text.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform {

namespace {

using columnar::DataType;
using columnar::DataTypePtr;

// Nesting limit of parentheses, calls and operators: bad input must not overflow the stack.
constexpr int kMaxExprDepth = 200;

class ExprParser {
 public:
  ExprParser(std::string_view text, std::string_view origin)
      : text_(text), origin_(origin), lexer_(text, origin) {}

  Result<ExprPtr> Parse() {
    if (size_t bad = FindInvalidUtf8(text_); bad != std::string_view::npos) {
      return Error(bad, "invalid UTF-8");
    }
    FERRY_RETURN_IF_ERROR(Advance());
    FERRY_ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
    if (tok_.kind != Tok::kEnd) {
      return Error(tok_.pos,
                   fmt::format("expected an operator or end of input, found {}", Describe(tok_)));
    }
    return e;
  }

 private:
  // --- Errors and tokens ----------------------------------------------------------------------

  Status Error(size_t pos, std::string_view message) const {
    return ExpressionError(origin_, text_, pos, message);
  }
  static std::string Describe(const Token& t) {
    if (t.kind == Tok::kEnd) {
      return "end of input";
    }
    if (t.kind == Tok::kString) {
      return "a string";
    }
    return fmt::format("'{}'", t.text.substr(0, 40));
  }
  Status Expected(std::string_view what) const {
    return Error(tok_.pos, fmt::format("expected {}, found {}", what, Describe(tok_)));
  }

  Status Advance() {
    Result<Token> t = lexer_.Next();
    if (!t.ok()) {
      return t.status();
    }
    tok_ = std::move(*t);
    return Status::OK();
  }

  bool IsOp(std::string_view op) const { return tok_.kind == Tok::kOp && tok_.text == op; }
  bool IsKeyword(std::string_view kw) const { return tok_.kind == Tok::kIdent && tok_.value == kw; }
  Status ExpectOp(std::string_view op, std::string_view where) {
    if (!IsOp(op)) {
      return Expected(fmt::format("'{}' {}", op, where));
    }
    return Advance();
  }
  Status ExpectKeyword(std::string_view kw, std::string_view where) {
    if (!IsKeyword(kw)) {
      std::string upper(kw);
      std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
      return Expected(fmt::format("{} {}", upper, where));
    }
    return Advance();
  }

  // --- Tree building ---------------------------------------------------------------------------

  static ExprPtr Node(ExprNode::Kind kind, size_t pos, std::string name = {}) {
    auto n = std::make_unique<ExprNode>();
    n->kind = kind;
    n->pos = static_cast<uint32_t>(pos);
    n->name = std::move(name);
    return n;
  }
  static ExprPtr Call(std::string name, size_t pos, ExprPtr a, ExprPtr b = nullptr) {
    ExprPtr n = Node(ExprNode::Kind::kCall, pos, std::move(name));
    n->args.push_back(std::move(a));
    if (b) {
      n->args.push_back(std::move(b));
    }
    return n;
  }
  Status Enter() {
    if (++depth_ > kMaxExprDepth) {
      return Error(tok_.pos, fmt::format("expression nested deeper than {} levels", kMaxExprDepth));
    }
    return Status::OK();
  }

  // --- Grammar, lowest precedence first
  // -------------------------------------------------------

  Result<ExprPtr> ParseOr() {
    FERRY_RETURN_IF_ERROR(Enter());
    FERRY_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
    while (IsKeyword("or")) {
      size_t pos = tok_.pos;
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
      left = Call("or", pos, std::move(left), std::move(right));
    }
    depth_--;
    return left;
  }

  Result<ExprPtr> ParseAnd() {
    FERRY_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
    while (IsKeyword("and")) {
      size_t pos = tok_.pos;
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
      left = Call("and", pos, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> ParseNot() {
    if (IsKeyword("not") || IsOp("!")) {
      size_t pos = tok_.pos;
      FERRY_RETURN_IF_ERROR(Enter());
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
      depth_--;
      return Call("not", pos, std::move(operand));
    }
    return ParsePredicate();
  }

  Result<ExprPtr> ParsePredicate() {
    FERRY_ASSIGN_OR_RETURN(ExprPtr left, ParseAdditive());
    while (true) {
      size_t pos = tok_.pos;
      static constexpr std::string_view kComparisons[] = {"=",  "==", "!=", "<>", "<",
                                                          "<=", ">",  ">=", "<=>"};
      if (tok_.kind == Tok::kOp && std::find(std::begin(kComparisons), std::end(kComparisons),
                                             tok_.text) != std::end(kComparisons)) {
        std::string op(tok_.text == "==" ? "=" : tok_.text == "<>" ? "!=" : tok_.text);
        FERRY_RETURN_IF_ERROR(Advance());
        FERRY_ASSIGN_OR_RETURN(ExprPtr right, ParseAdditive());
        left = Call(op, pos, std::move(left), std::move(right));
        continue;
      }
      if (IsKeyword("is")) {
        FERRY_RETURN_IF_ERROR(Advance());
        ExprPtr n = Node(ExprNode::Kind::kIsNull, pos);
        if (IsKeyword("not")) {
          n->negated = true;
          FERRY_RETURN_IF_ERROR(Advance());
        }
        FERRY_RETURN_IF_ERROR(ExpectKeyword("null", "after IS [NOT]"));
        n->args.push_back(std::move(left));
        left = std::move(n);
        continue;
      }
      bool negated = false;
      if (IsKeyword("not")) {
        negated = true;
        FERRY_RETURN_IF_ERROR(Advance());
        if (!IsKeyword("in") && !IsKeyword("between") && !IsKeyword("like")) {
          return Expected("IN, BETWEEN or LIKE after NOT");
        }
      }
      if (IsKeyword("in")) {
        FERRY_ASSIGN_OR_RETURN(left, ParseInRest(std::move(left), pos, negated));
      } else if (IsKeyword("between")) {
        FERRY_ASSIGN_OR_RETURN(left, ParseBetweenRest(std::move(left), pos, negated));
      } else if (IsKeyword("like")) {
        FERRY_RETURN_IF_ERROR(Advance());
        FERRY_ASSIGN_OR_RETURN(ExprPtr pattern, ParseAdditive());
        left = Call("like", pos, std::move(left), std::move(pattern));
        if (negated) {
          left = Call("not", pos, std::move(left));
        }
      } else {
        return left;
      }
    }
  }

  Result<ExprPtr> ParseInRest(ExprPtr left, size_t pos, bool negated) {
    FERRY_RETURN_IF_ERROR(Advance());
    FERRY_RETURN_IF_ERROR(ExpectOp("(", "after IN"));
    ExprPtr n = Node(ExprNode::Kind::kIn, pos);
    n->negated = negated;
    n->args.push_back(std::move(left));
    while (true) {
      FERRY_ASSIGN_OR_RETURN(ExprPtr item, ParseOr());
      n->args.push_back(std::move(item));
      if (IsOp(",")) {
        FERRY_RETURN_IF_ERROR(Advance());
        continue;
      }
      FERRY_RETURN_IF_ERROR(ExpectOp(")", "to close the IN list"));
      return n;
    }
  }

  Result<ExprPtr> ParseBetweenRest(ExprPtr left, size_t pos, bool negated) {
    FERRY_RETURN_IF_ERROR(Advance());
    FERRY_ASSIGN_OR_RETURN(ExprPtr low, ParseAdditive());
    FERRY_RETURN_IF_ERROR(ExpectKeyword("and", "in BETWEEN"));
    FERRY_ASSIGN_OR_RETURN(ExprPtr high, ParseAdditive());
    // x BETWEEN a AND b is a <= x AND x <= b (x is evaluated twice; it has no side effects).
    ExprPtr x2 = Clone(*left);
    ExprPtr n = Call("and", pos, Call(">=", pos, std::move(left), std::move(low)),
                     Call("<=", pos, std::move(x2), std::move(high)));
    return negated ? Call("not", pos, std::move(n)) : std::move(n);
  }

  static ExprPtr Clone(const ExprNode& e) {
    ExprPtr n = Node(e.kind, e.pos, e.name);
    n->literal = e.literal;
    n->type = e.type;
    n->cast_type = e.cast_type;
    n->negated = e.negated;
    n->has_else = e.has_else;
    for (const ExprPtr& a : e.args) {
      n->args.push_back(Clone(*a));
    }
    return n;
  }

  Result<ExprPtr> ParseAdditive() {
    FERRY_ASSIGN_OR_RETURN(ExprPtr left, ParseMultiplicative());
    while (IsOp("+") || IsOp("-") || IsOp("||")) {
      size_t pos = tok_.pos;
      std::string op = tok_.text == "||" ? "concat" : std::string(tok_.text);
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(ExprPtr right, ParseMultiplicative());
      left = Call(op, pos, std::move(left), std::move(right));
    }
    if (IsOp("&") || IsOp("|") || IsOp("^")) {
      return Error(tok_.pos, fmt::format("operator '{}' is not supported", tok_.text));
    }
    return left;
  }

  Result<ExprPtr> ParseMultiplicative() {
    FERRY_ASSIGN_OR_RETURN(ExprPtr left, ParseUnary());
    while (IsOp("*") || IsOp("/") || IsOp("%") || IsKeyword("div")) {
      size_t pos = tok_.pos;
      std::string op = tok_.kind == Tok::kIdent ? "div" : std::string(tok_.text);
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(ExprPtr right, ParseUnary());
      left = Call(op, pos, std::move(left), std::move(right));
    }
    return left;
  }

  Result<ExprPtr> ParseUnary() {
    if (IsOp("-") || IsOp("+")) {
      size_t pos = tok_.pos;
      bool minus = IsOp("-");
      FERRY_RETURN_IF_ERROR(Enter());
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary());
      depth_--;
      return minus ? Call("negative", pos, std::move(operand)) : std::move(operand);
    }
    if (IsOp("~")) {
      return Error(tok_.pos, "operator '~' is not supported");
    }
    return ParsePostfix();
  }

  Result<ExprPtr> ParsePostfix() {
    FERRY_ASSIGN_OR_RETURN(ExprPtr e, ParsePrimary());
    while (true) {
      size_t pos = tok_.pos;
      if (IsOp(".")) {
        FERRY_RETURN_IF_ERROR(Advance());
        if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kQuoted) {
          return Expected("a field name after '.'");
        }
        ExprPtr n = Node(ExprNode::Kind::kGetField, pos,
                         tok_.kind == Tok::kIdent ? std::string(tok_.text) : tok_.value);
        FERRY_RETURN_IF_ERROR(Advance());
        n->args.push_back(std::move(e));
        e = std::move(n);
      } else if (IsOp("[")) {
        FERRY_RETURN_IF_ERROR(Advance());
        ExprPtr n = Node(ExprNode::Kind::kGetItem, pos);
        n->args.push_back(std::move(e));
        FERRY_ASSIGN_OR_RETURN(ExprPtr key, ParseOr());
        n->args.push_back(std::move(key));
        FERRY_RETURN_IF_ERROR(ExpectOp("]", "after the subscript"));
        e = std::move(n);
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> ParsePrimary();
  Result<ExprPtr> ParseNumber();
  Result<ExprPtr> ParseStringLiteral();
  Result<ExprPtr> ParseTypedLiteral(const std::string& keyword, size_t pos);
  Result<ExprPtr> ParseCast(size_t pos);
  Result<ExprPtr> ParseCase(size_t pos);
  Result<ExprPtr> ParseCall(std::string name, size_t pos);
  Result<ExprPtr> ParseTrim(std::string name, size_t pos);

  std::string_view text_;
  std::string_view origin_;
  ExprLexer lexer_;
  Token tok_;
  int depth_ = 0;
};

Result<ExprPtr> ExprParser::ParsePrimary() {
  size_t pos = tok_.pos;
  switch (tok_.kind) {
    case Tok::kNumber:
      return ParseNumber();
    case Tok::kString:
      return ParseStringLiteral();
    case Tok::kQuoted: {
      ExprPtr n = Node(ExprNode::Kind::kColumn, pos, tok_.value);
      FERRY_RETURN_IF_ERROR(Advance());
      return n;
    }
    case Tok::kOp:
      if (IsOp("(")) {
        FERRY_RETURN_IF_ERROR(Advance());
        FERRY_ASSIGN_OR_RETURN(ExprPtr e, ParseOr());
        FERRY_RETURN_IF_ERROR(ExpectOp(")", "to close '('"));
        return e;
      }
      return Expected("an expression");
    case Tok::kEnd:
      return Expected("an expression");
    case Tok::kIdent:
      break;
  }
  std::string word = tok_.value;
  std::string as_written(tok_.text);
  if (word == "true" || word == "false" || word == "null") {
    ExprPtr n = Node(ExprNode::Kind::kLiteral, pos);
    if (word != "null") {
      n->literal.is_null = false;
      n->literal.i = word == "true" ? 1 : 0;
      n->type = DataType::Boolean();
    }
    FERRY_RETURN_IF_ERROR(Advance());
    return n;
  }
  if (word == "cast") {
    return ParseCast(pos);
  }
  if (word == "case") {
    return ParseCase(pos);
  }
  if (word == "interval") {
    return Error(pos, "INTERVAL literals are not supported");
  }
  FERRY_RETURN_IF_ERROR(Advance());
  if (IsOp("(")) {
    return ParseCall(word, pos);
  }
  if (tok_.kind == Tok::kString &&
      (word == "date" || word == "timestamp" || word == "timestamp_ntz" ||
       word == "timestamp_ltz" || word == "x")) {
    return ParseTypedLiteral(word, pos);
  }
  if (word == "current_timestamp" || word == "current_date") {
    return Node(ExprNode::Kind::kCall, pos, word);
  }
  return Node(ExprNode::Kind::kColumn, pos, as_written);
}

Result<ExprPtr> ExprParser::ParseNumber() {
  size_t offset = 0;
  Result<TypedLiteral> lit = ParseNumberLiteral(tok_.text, &offset);
  if (!lit.ok()) {
    return Error(tok_.pos + offset, lit.status().message());
  }
  ExprPtr n = Node(ExprNode::Kind::kLiteral, tok_.pos);
  n->literal = std::move(lit->value);
  n->type = std::move(lit->type);
  FERRY_RETURN_IF_ERROR(Advance());
  return n;
}

// 'a' 'b' is 'ab', as in Spark.
Result<ExprPtr> ExprParser::ParseStringLiteral() {
  ExprPtr n = Node(ExprNode::Kind::kLiteral, tok_.pos);
  n->literal.is_null = false;
  n->type = DataType::String();
  while (tok_.kind == Tok::kString) {
    n->literal.s += tok_.value;
    FERRY_RETURN_IF_ERROR(Advance());
  }
  return n;
}

Result<ExprPtr> ExprParser::ParseTypedLiteral(const std::string& keyword, size_t pos) {
  if (keyword == "x") {  // X'0aFF': binary
    Result<std::string> bytes = ParseHexLiteral(tok_.value);
    if (!bytes.ok()) {
      return Error(tok_.pos, bytes.status().message());
    }
    ExprPtr n = Node(ExprNode::Kind::kLiteral, pos);
    n->literal.is_null = false;
    n->literal.s = std::move(*bytes);
    n->type = DataType::Binary();
    FERRY_RETURN_IF_ERROR(Advance());
    return n;
  }
  // DATE '...' and TIMESTAMP '...' are casts of a constant that must succeed (the analyzer
  // checks them: `name` = "literal").
  ExprPtr cast = Node(ExprNode::Kind::kCast, pos, "literal");
  cast->cast_type = keyword == "date" ? DataType::Date()
                    : keyword == "timestamp_ntz"
                        ? DataType::Timestamp(columnar::TimeUnit::kMicros, false)
                        : DataType::Timestamp();
  FERRY_ASSIGN_OR_RETURN(ExprPtr str, ParseStringLiteral());
  cast->args.push_back(std::move(str));
  return cast;
}

Result<ExprPtr> ExprParser::ParseCast(size_t pos) {
  FERRY_RETURN_IF_ERROR(Advance());
  FERRY_RETURN_IF_ERROR(ExpectOp("(", "after CAST"));
  FERRY_ASSIGN_OR_RETURN(ExprPtr value, ParseOr());
  if (!IsKeyword("as")) {
    return Expected("AS in CAST");
  }
  // The type is DDL text up to the ')' that closes CAST(: parse it with the DDL parser.
  size_t type_start = tok_.pos + tok_.text.size();
  size_t end = type_start;
  int depth = 0;
  while (end < text_.size() && !(text_[end] == ')' && depth == 0)) {
    depth += text_[end] == '(' ? 1 : text_[end] == ')' ? -1 : 0;
    end++;
  }
  std::string_view type_text = text_.substr(type_start, end - type_start);
  Result<DataTypePtr> type = columnar::ParseDdlType(type_text, "type");
  if (!type.ok()) {
    return Error(type_start, fmt::format("bad type in CAST ({})", type.status().message()));
  }
  lexer_.Seek(end);
  FERRY_RETURN_IF_ERROR(Advance());
  FERRY_RETURN_IF_ERROR(ExpectOp(")", "to close CAST"));
  ExprPtr n = Node(ExprNode::Kind::kCast, pos);
  n->cast_type = *type;
  n->args.push_back(std::move(value));
  return n;
}

Result<ExprPtr> ExprParser::ParseCase(size_t pos) {
  FERRY_RETURN_IF_ERROR(Advance());
  ExprPtr operand;
  if (!IsKeyword("when")) {
    FERRY_ASSIGN_OR_RETURN(operand, ParseOr());
  }
  ExprPtr n = Node(ExprNode::Kind::kCase, pos);
  while (IsKeyword("when")) {
    size_t when_pos = tok_.pos;
    FERRY_RETURN_IF_ERROR(Advance());
    FERRY_ASSIGN_OR_RETURN(ExprPtr cond, ParseOr());
    if (operand) {
      cond = Call("=", when_pos, Clone(*operand), std::move(cond));
    }
    FERRY_RETURN_IF_ERROR(ExpectKeyword("then", "after the WHEN condition"));
    FERRY_ASSIGN_OR_RETURN(ExprPtr value, ParseOr());
    n->args.push_back(std::move(cond));
    n->args.push_back(std::move(value));
  }
  if (n->args.empty()) {
    return Expected("WHEN in CASE");
  }
  if (IsKeyword("else")) {
    FERRY_RETURN_IF_ERROR(Advance());
    FERRY_ASSIGN_OR_RETURN(ExprPtr value, ParseOr());
    n->args.push_back(std::move(value));
    n->has_else = true;
  }
  FERRY_RETURN_IF_ERROR(ExpectKeyword("end", "to close CASE"));
  return n;
}

Result<ExprPtr> ExprParser::ParseCall(std::string name, size_t pos) {
  FERRY_RETURN_IF_ERROR(Enter());
  FERRY_RETURN_IF_ERROR(Advance());  // '('
  if (name == "trim" || name == "ltrim" || name == "rtrim") {
    return ParseTrim(std::move(name), pos);
  }
  ExprPtr n = Node(ExprNode::Kind::kCall, pos, name);
  if (!IsOp(")")) {
    while (true) {
      FERRY_ASSIGN_OR_RETURN(ExprPtr arg, ParseOr());
      n->args.push_back(std::move(arg));
      if ((name == "substring" || name == "substr") && (IsKeyword("from") || IsKeyword("for"))) {
        FERRY_RETURN_IF_ERROR(Advance());  // SUBSTRING(s FROM p [FOR l])
        continue;
      }
      if (!IsOp(",")) {
        break;
      }
      FERRY_RETURN_IF_ERROR(Advance());
    }
  }
  FERRY_RETURN_IF_ERROR(ExpectOp(")", fmt::format("to close the arguments of {}", name)));
  depth_--;
  return n;
}

// TRIM(s), TRIM([BOTH | LEADING | TRAILING] [chars] FROM s): trim/ltrim/rtrim(s[, chars]).
Result<ExprPtr> ExprParser::ParseTrim(std::string name, size_t pos) {
  if (IsKeyword("both") || IsKeyword("leading") || IsKeyword("trailing")) {
    name = IsKeyword("both") ? "trim" : IsKeyword("leading") ? "ltrim" : "rtrim";
    FERRY_RETURN_IF_ERROR(Advance());
  }
  ExprPtr n = Node(ExprNode::Kind::kCall, pos, name);
  ExprPtr chars;
  if (!IsKeyword("from")) {
    FERRY_ASSIGN_OR_RETURN(chars, ParseOr());
  }
  if (IsKeyword("from")) {
    FERRY_RETURN_IF_ERROR(Advance());
    FERRY_ASSIGN_OR_RETURN(ExprPtr str, ParseOr());
    n->args.push_back(std::move(str));
    if (chars) {
      n->args.push_back(std::move(chars));
    }
  } else {
    n->args.push_back(std::move(chars));
    while (IsOp(",")) {  // trim(s, chars) as in the DataFrame API
      FERRY_RETURN_IF_ERROR(Advance());
      FERRY_ASSIGN_OR_RETURN(ExprPtr arg, ParseOr());
      n->args.push_back(std::move(arg));
    }
  }
  FERRY_RETURN_IF_ERROR(ExpectOp(")", fmt::format("to close the arguments of {}", name)));
  depth_--;
  return n;
}

}  // namespace

Status ExpressionError(std::string_view origin, std::string_view text, size_t pos,
                       std::string_view message) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < pos && i < text.size(); i++) {
    if (text[i] == '\n') {
      line++;
      column = 1;
    } else if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) {
      column++;
    }
  }
  return InvalidArgument("{}:{}:{}: {}", origin, line, column, message);
}

Result<ExprPtr> ParseExpression(std::string_view text, std::string_view origin) {
  return ExprParser(text, origin).Parse();
}

}  // namespace ferry::transform
