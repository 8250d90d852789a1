// Parser of the Spark SQL expression subset ferry evaluates (docs/transform.md lists it): column
// references (`a`, `a.b.c`, `` `odd name` ``, `m['k']`, `arr[0]`), literals (integers, decimals
// `1.5`, doubles `1e3`, suffixes L S Y D F BD, 'strings' and "strings" with Spark's escapes,
// r'raw', TRUE, FALSE, NULL, DATE '...', TIMESTAMP '...', TIMESTAMP_NTZ '...', X'hex'),
// CAST(x AS type), arithmetic (+ - * / % DIV, unary -), || concatenation, comparisons
// (= == != <> < <= > >= <=>), AND, OR, NOT (!), IS [NOT] NULL, [NOT] IN (...),
// [NOT] BETWEEN a AND b, [NOT] LIKE, CASE [x] WHEN ... THEN ... [ELSE ...] END, function calls,
// TRIM([BOTH|LEADING|TRAILING] [chars] FROM s), and current_timestamp / current_date without
// parentheses. Precedence follows Spark's grammar.
//
// Errors are InvalidArgument with the 1-based line and column (in characters) of the offending
// token: `expr:1:15: expected ')' to close the arguments of concat, found ','`.
//
// Thread-safety: free functions.
#pragma once

#include <string_view>

#include "ferry/base/result.h"
#include "ferry/transform/expr_ast.h"

namespace ferry::transform {

// Parses `text`; `origin` prefixes error positions.
Result<ExprPtr> ParseExpression(std::string_view text, std::string_view origin = "expr");

// "origin:line:column: message" for byte offset `pos` of `text` (shared with the analyzer).
Status ExpressionError(std::string_view origin, std::string_view text, size_t pos,
                       std::string_view message);

}  // namespace ferry::transform
