// The syntax tree of a derived-column expression: produced by the parser (expr_parser.h),
// typed and bound by the analyzer (expr_analyzer.h), run by the evaluator (expr_eval.h).
// Internal to the transform module; the public API is expression.h.
//
// Operators are calls: `a + b` is kCall "+" with two arguments, `NOT x` is kCall "not"; AND and
// OR are kCall "and"/"or". Positions are byte offsets into the expression text, for errors.
//
// Thread-safety: built once, then read-only (evaluation keeps its state outside the tree).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ferry/columnar/types.h"

namespace ferry::transform {

struct FunctionDef;

// A constant: NULL, or a value of `type` in the field that matches the type's storage.
struct LiteralValue {
  bool is_null = true;
  int64_t i = 0;             // booleans, integers, dates (days), timestamps (micros)
  double d = 0;              // FLOAT, DOUBLE
  columnar::Int128 dec = 0;  // DECIMAL unscaled
  std::string s;             // STRING, BINARY
};

struct ExprNode {
  enum class Kind : uint8_t {
    kLiteral,   // `literal` of `type` (null type: NULL)
    kColumn,    // top-level column `name`
    kGetField,  // args[0].`name` on a struct
    kGetItem,   // args[0][args[1]]: array index (0-based) or map key
    kCall,      // function or operator `name` (lower case) applied to args
    kCast,      // CAST(args[0] AS `cast_type`)
    kCase,      // CASE WHEN args[0] THEN args[1] ... [ELSE args.back()] END
    kIn,        // args[0] IN (args[1..]); `negated` for NOT IN
    kIsNull,    // args[0] IS NULL; `negated` for IS NOT NULL
  };

  Kind kind = Kind::kLiteral;
  uint32_t pos = 0;
  std::string name;
  std::vector<std::unique_ptr<ExprNode>> args;
  LiteralValue literal;
  columnar::DataTypePtr cast_type;
  bool negated = false;
  bool has_else = false;

  // Set by the analyzer. `type` null means the NULL type (an untyped NULL literal).
  columnar::DataTypePtr type;
  bool nullable = true;
  int column_index = -1;                  // kColumn
  int field_index = -1;                   // kGetField
  const FunctionDef* function = nullptr;  // kCall
  // Precomputed per-node state (a compiled pattern, a regex), owned here, used by the function.
  std::shared_ptr<const void> state;

  bool is_literal() const { return kind == Kind::kLiteral; }
};

using ExprPtr = std::unique_ptr<ExprNode>;

}  // namespace ferry::transform
