// Internal to the expression engine (expr_*.cc): the value of an expression over a batch (Vec),
// the contexts of analysis and evaluation, and the function registry that the operator, string,
// datetime and misc function files fill.
//
// Evaluation is vectorized: every node yields a Vec with one value per row of the batch, or one
// value for all rows when it is constant (literals, and calls whose arguments are all constant,
// which are evaluated once). Semantics follow Spark SQL with ANSI mode off: bad input gives NULL
// (a malformed date, a division by zero, an overflowing cast), never an error.
//
// Thread-safety: FunctionDefs are immutable; contexts belong to one call.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/expr_ast.h"
#include "ferry/transform/time_zone.h"

namespace ferry::transform {

using columnar::DataType;
using columnar::DataTypePtr;
using columnar::TypeId;

// The value of an expression: a column of `rows` values, or of one value when `constant`.
struct Vec {
  std::unique_ptr<columnar::Column> owned;
  const columnar::Column* col = nullptr;
  bool constant = false;

  int64_t Row(int64_t i) const { return constant ? 0 : i; }
  bool IsNull(int64_t i) const { return col->IsNull(Row(i)); }
  template <typename T>
  T Get(int64_t i) const {
    return col->As<columnar::PrimitiveColumn<T>>()->Value(Row(i));
  }
  std::string_view Str(int64_t i) const { return col->As<columnar::BinaryColumn>()->Value(Row(i)); }
};

// A new, empty result column of `type` with room for `rows` values, wrapped in a Vec.
Vec NewVec(const DataTypePtr& type, int64_t rows);
// A Vec of `rows` nulls of `type`.
Vec NullVec(const DataTypePtr& type, int64_t rows);

struct EvalContext {
  int64_t rows = 0;
  const columnar::RecordBatch* batch = nullptr;
  const TimeZone* zone = nullptr;
  int64_t now_micros = 0;  // current_timestamp(): fixed for one evaluation, as in Spark
};

class AnalyzeContext {
 public:
  AnalyzeContext(std::string_view text, std::string_view origin, const TimeZone* zone)
      : text_(text), origin_(origin), zone_(zone) {}

  // InvalidArgument "origin:line:column: message" at the node.
  Status Error(const ExprNode& node, std::string_view message) const;
  const TimeZone& zone() const { return *zone_; }

  // Wraps node->args[i] in an implicit CAST to `to` (nothing when the types are equal).
  // InvalidArgument when Spark would not cast implicitly (e.g. BOOLEAN to INT).
  Status CastArg(ExprNode* node, size_t i, const DataTypePtr& to) const;

 private:
  std::string_view text_;
  std::string_view origin_;
  const TimeZone* zone_;
};

struct FunctionDef {
  std::string_view name;
  int min_args = 0;
  int max_args = 0;
  // Generic typing, used when `analyze` is null: argument i is implicitly cast to
  // arg_types[min(i, size-1)] (null: left as is), the result has type `result`, and it is null
  // whenever an argument is (then the kernel never sees null arguments).
  std::vector<DataTypePtr> arg_types;
  DataTypePtr result;
  // Custom typing: sets node->type and node->nullable, casts arguments, may fill node->state.
  Status (*analyze)(ExprNode* node, AnalyzeContext& ctx) = nullptr;
  Vec (*eval)(const ExprNode& node, std::vector<Vec>& args, const EvalContext& ctx) = nullptr;
  // False for current_timestamp(): not folded even though it has no arguments.
  bool foldable = true;
};

// The function called `name` (lower case), or null.
const FunctionDef* FindFunction(std::string_view name);

// Registration, one per functions file.
void AddOperatorFunctions(std::vector<FunctionDef>* out);
void AddStringFunctions(std::vector<FunctionDef>* out);
void AddDatetimeFunctions(std::vector<FunctionDef>* out);
void AddMiscFunctions(std::vector<FunctionDef>* out);

// Type helpers shared by the functions files.
bool IsNumeric(const DataTypePtr& t);
bool IsIntegral(const DataTypePtr& t);
bool IsStringLike(const DataTypePtr& t);  // STRING (and JSON)
bool IsNullType(const DataTypePtr& t);    // the type of a bare NULL
// The type both sides of a comparison are cast to (Spark's findCommonTypeForBinaryComparison:
// a string against a number compares as the number), or null when there is none.
DataTypePtr ComparisonType(const DataTypePtr& a, const DataTypePtr& b);
// The type of CASE / COALESCE / IN results (Spark's findWiderCommonType: a string and a number
// widen to STRING), or null when there is none.
DataTypePtr WiderType(const DataTypePtr& a, const DataTypePtr& b);
// The wider of two numeric types (Spark's numeric precedence and decimal widening).
DataTypePtr WiderNumeric(const DataTypePtr& a, const DataTypePtr& b);
// An integral or decimal type as a decimal: INT is DECIMAL(10,0), BIGINT DECIMAL(20,0), ...
DataTypePtr AsDecimal(const DataTypePtr& t);
// Whether Spark casts `from` to `to` implicitly for a function argument.
bool CanImplicitCast(const DataTypePtr& from, const DataTypePtr& to);
// Whether CAST(from AS to) is supported.
bool CanCast(const DataTypePtr& from, const DataTypePtr& to);
// "INT", "NULL" for the null type: for messages.
std::string TypeName(const DataTypePtr& t);

// -1, 0 or 1 comparing row i of a with row j of b, both of atomic type t (NaN = NaN and above
// every number; strings and binaries byte-wise, as Spark orders them).
int CompareValues(const Vec& a, int64_t i, const Vec& b, int64_t j, const DataTypePtr& t);

// Casts a value (expr_cast.cc); NULL where the cast fails, as Spark's non-ANSI CAST.
Vec CastVec(const Vec& in, const DataTypePtr& from, const DataTypePtr& to, const EvalContext& ctx);

// Visits each row, appending null to `out` when any argument is null and calling
// fn(row) otherwise; fn appends exactly one value (or null) itself.
template <typename Fn>
void ForEachRow(const std::vector<Vec>& args, const EvalContext& ctx, columnar::Column* out,
                Fn&& fn) {
  for (int64_t i = 0; i < ctx.rows; i++) {
    bool any_null = false;
    for (const Vec& a : args) {
      any_null = any_null || a.IsNull(i);
    }
    if (any_null) {
      out->AppendNull();
    } else {
      fn(i);
    }
  }
}

}  // namespace ferry::transform
