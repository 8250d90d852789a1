// Expression: a Spark SQL expression (derived columns and `where` filters of a pipeline),
// compiled once against a batch schema and evaluated on whole RecordBatches.
//
//   ExpressionOptions options;
//   options.time_zone = "Europe/Paris";
//   FERRY_ASSIGN_OR_RETURN(auto date_only, Expression::Compile(
//       "from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy')",
//       schema, options));
//   std::unique_ptr<columnar::Column> column = date_only->Evaluate(batch);  // STRING
//
// The supported syntax, functions and patterns are listed in docs/transform.md. Semantics are
// Spark's with ANSI mode off: evaluation never fails; a value that cannot be computed (a
// malformed date, a division by zero, an overflowing cast) is NULL. Compile errors are
// InvalidArgument and point at the line and column of the expression text:
// `expr:1:24: unknown column 'dateTim' (columns: id, dateTime)`.
//
// 1. Compile parses (expr_parser.h), then types and binds against the schema (expr_analyzer.h).
// 2. Evaluate runs the tree bottom-up, one vector per node (expr_eval.cc); current_timestamp()
//    is read once per Evaluate call.
//
// Thread-safety: a compiled Expression is immutable; Evaluate may run on many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"

namespace ferry::transform {

struct ExprNode;
class TimeZone;

struct ExpressionOptions {
  // The session time zone of datetime functions (java.time names, time_zone.h).
  std::string time_zone = "UTC";
  // Prefix of error positions, e.g. "pipeline.columns[0].expr".
  std::string origin = "expr";
  // Microseconds since the epoch for current_timestamp(); the system clock when empty.
  std::function<int64_t()> now;
};

class Expression {
 public:
  static Result<std::unique_ptr<Expression>> Compile(std::string_view text,
                                                     const columnar::Schema& schema,
                                                     ExpressionOptions options = {});
  ~Expression();

  // The result type (an untyped NULL expression is STRING) and whether it can be null.
  const columnar::DataTypePtr& type() const { return type_; }
  bool nullable() const;
  const std::string& text() const { return text_; }

  // One value per row of `batch`. REQUIRES: batch's schema equals the compile schema.
  std::unique_ptr<columnar::Column> Evaluate(const columnar::RecordBatch& batch) const;

  // The rows where a BOOLEAN column is true (NULL counts as false), for `where` filters.
  static std::vector<int64_t> TrueRows(const columnar::Column& condition);

 private:
  Expression() = default;

  std::string text_;
  std::unique_ptr<ExprNode> root_;
  columnar::DataTypePtr type_;
  std::shared_ptr<const TimeZone> zone_;
  std::function<int64_t()> now_;
};

}  // namespace ferry::transform
