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
//               `delta.invariants` ({"expression": {"expression": "<SQL>"}}) of a column or of
//               a field inside structs: every row must evaluate to true (false or NULL violates)
//   not null    a NOT NULL field inside structs (`s.a` with `a` non-nullable): every struct on
//               the path and the field itself must hold a value. PROTOCOL.md only says that
//               `nullable` is false; this is how Delta's reference writer enforces it (Spark's
//               Invariants.getFromSchema makes NotNull(s.a) of it, and a NULL `s` violates it:
//               InvariantEnforcementSuite "reject non-nullable nested column"). Top-level NOT
//               NULL columns are the decoders' job (and the pipeline's for filled columns).
//
// This file only reads and writes the metadata (the delta layer does not evaluate SQL); the
// pipeline compiles and evaluates the expressions with ferry's Spark-expression engine
// (pipeline/table_rules.h). Nested fields are followed through structs only, as Spark does;
// generated, default and identity metadata on a nested field, and invariants below an array or
// a map, are refused by CheckWriteSupported (table_features.h).
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
  // NOT NULL fields inside structs, each as its path of names from the top-level column. Left
  // out of empty() and Key(): they are the schema's nullability, which the pipeline reads from
  // the schema rows are decoded into, and a decoder's schema (a registry writer schema) may
  // differ in it from the table's without any rule having changed; so a batch is never read
  // again for them, and a nested field another writer makes NOT NULL while a batch is in flight
  // is not checked for that batch.
  std::vector<std::vector<std::string>> not_null;

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
