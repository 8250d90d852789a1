// Column rules: what a table's metadata asks of every row a writer adds (PROTOCOL.md "Column
// Invariants", "CHECK Constraints", "Generated Columns", "Default Columns", "Identity Columns").
//
//   generated   column metadata `delta.generationExpression` (a SQL expression): a row's value
//               must satisfy (value <=> expression) IS TRUE
//   default     column metadata `CURRENT_DEFAULT` (a SQL expression): a row without a value takes
//               the expression's
//   identity    column metadata `delta.identity.start`, `.step`, `.highWaterMark`,
//               `.allowExplicitInsert`: values the writer assigns, above the high-water mark
//               (below it for a negative step), and the mark raised in the commit
//   check       table configuration `delta.constraints.<name>` and column metadata
//               `delta.invariants` ({"expression": {"expression": "<SQL>"}}): every row must
//               evaluate to true (false or NULL violates)
//
// This file only reads and writes the metadata (the delta layer does not evaluate SQL); the
// pipeline compiles and evaluates the expressions with ferry's Spark-expression engine
// (pipeline/table_rules.h). Only top-level columns are read: a nested field with such metadata
// is refused by CheckWriteSupported (table_features.h).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"

namespace ferry::delta {

inline constexpr const char* kGenerationExpressionKey = "delta.generationExpression";
inline constexpr const char* kCurrentDefaultKey = "CURRENT_DEFAULT";
inline constexpr const char* kInvariantsKey = "delta.invariants";
inline constexpr const char* kIdentityStartKey = "delta.identity.start";
inline constexpr const char* kIdentityStepKey = "delta.identity.step";
inline constexpr const char* kIdentityHighWaterMarkKey = "delta.identity.highWaterMark";
inline constexpr const char* kIdentityAllowExplicitInsertKey = "delta.identity.allowExplicitInsert";
inline constexpr const char* kConstraintPrefix = "delta.constraints.";

struct ColumnExpression {
  std::string column;
  std::string expression;
};

struct IdentityColumn {
  std::string column;
  int64_t start = 1;
  int64_t step = 1;
  std::optional<int64_t> high_water_mark;
  bool allow_explicit_insert = false;
};

// A row condition: a CHECK constraint (`name` is its name) or an invariant (`name` is
// "invariant on <column>").
struct RowCheck {
  std::string name;
  std::string expression;
};

struct ColumnRules {
  std::vector<ColumnExpression> generated;
  std::vector<ColumnExpression> defaults;
  std::vector<IdentityColumn> identity;
  std::vector<RowCheck> checks;

  bool empty() const {
    return generated.empty() && defaults.empty() && identity.empty() && checks.empty();
  }
  // The rules without the identity high-water marks, as text: two equal keys check rows the
  // same way (a batch checked under one key must be checked again under another).
  std::string Key() const;
};

// The rules of a table with this protocol, configuration and schema; features the protocol does
// not support are ignored as PROTOCOL.md says. DataLoss when a value does not parse (an identity
// step of 0, an invariant that is not {"expression": {"expression": ...}}).
Result<ColumnRules> ReadColumnRules(const Protocol& protocol, const Metadata& metadata,
                                    const columnar::Schema& schema);

// The first identity value a commit may assign: start when nothing was assigned, else the next
// start + k * step beyond the high-water mark. InvalidArgument on overflow.
Result<int64_t> FirstIdentityValue(const IdentityColumn& identity);

// `schema` with `column`'s delta.identity.highWaterMark set to `mark`.
columnar::SchemaPtr WithIdentityHighWaterMark(const columnar::Schema& schema,
                                              const std::string& column, int64_t mark);

}  // namespace ferry::delta
