// Spark's numeric and binary literals for the expression parser: 12 INT (BIGINT, then DECIMAL
// when larger), 12L BIGINT, 12S SMALLINT, 12Y TINYINT, 1.5 DECIMAL(2,1), 1.5e3 and 1D DOUBLE,
// 1F FLOAT, 1.5BD DECIMAL; X'0aFF' BINARY. Internal to the transform module.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/transform/expr_ast.h"

namespace ferry::transform {

struct TypedLiteral {
  LiteralValue value;
  columnar::DataTypePtr type;
};

// `text` is a number token as written. On error the message has no position; `*error_offset`
// is the byte offset within `text` it refers to.
Result<TypedLiteral> ParseNumberLiteral(std::string_view text, size_t* error_offset);

// The bytes of the hex digits of X'...'.
Result<std::string> ParseHexLiteral(std::string_view hex);

}  // namespace ferry::transform
