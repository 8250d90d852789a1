// TableRules: the column rules of a Delta table (delta/column_rules.h) compiled with ferry's
// Spark-expression engine (transform/expression.h) and applied to the rows a pipeline writes.
//
// Per row, on the pipeline thread (Intake, as the row is taken, so a violating row becomes a bad
// record for `on_bad_record`, with its message):
//   1. Defaults: a column with CURRENT_DEFAULT whose value is NULL takes the default.
//   2. Generated columns: a NULL value takes the generation expression's; a supplied value must
//      equal it (`<=>`), else the row is bad, naming the column and both values.
//   3. Identity columns without allowExplicitInsert: a supplied value makes the row bad.
//   4. NOT NULL columns that 1-2 fill must hold a value now.
//   5. CHECK constraints and invariants (of columns and of fields inside structs) must be true
//      (false or NULL: bad, naming the constraint and its expression); a NOT NULL field inside
//      structs must hold a value, and so must every struct on its path (a NULL `s` breaks NOT
//      NULL `s.a`, as in Delta's reference writer; delta/column_rules.h), checked first.
// Per batch, on the writer thread (BatchCommitter, step 3, once per commit attempt):
//   6. AssignIdentityValues gives every NULL identity value the next start + k * step beyond the
//      high-water mark and returns the schema with the raised mark for the commit's metaData;
//      a retry after a conflict assigns again from the winner's mark.
//
// ferry's decoders cannot tell an absent field from an explicit null, so both count as "no
// value" in 1, 2 and 6 (Spark keeps an explicit NULL in a column with a default).
//
// Thread-safety: immutable after Create; CompleteRow may run on any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/column_rules.h"
#include "ferry/transform/expression.h"

namespace ferry::pipeline {

class TableRules {
 public:
  // Compiles `rules` against `input` (the schema rows are decoded into). NotSupported naming the
  // column or constraint and its expression when the engine cannot compile it (or a rule names
  // a column `input` lacks).
  static Result<std::unique_ptr<TableRules>> Create(const delta::ColumnRules& rules,
                                                    const columnar::Schema& input,
                                                    const std::string& time_zone);
  ~TableRules();

  // True when CompleteRow has nothing to do (not even a nested NOT NULL field to check).
  bool empty() const { return empty_ && nested_not_null_.empty(); }
  // ColumnRules::Key of the rules (what a batch was checked against).
  const std::string& key() const { return key_; }

  // Steps 1-5 for row `row` of `rows`. InvalidArgument naming the rule when the row breaks one
  // (the row is then partly filled: the caller drops it).
  Status CompleteRow(columnar::RecordBatch* rows, int64_t row) const;

 private:
  struct Fill;
  struct Check;
  struct NestedNotNull;
  TableRules() = default;

  bool empty_ = true;
  std::string key_;
  std::vector<Fill> fills_;            // defaults first, then generated columns
  std::vector<int> explicit_refused_;  // identity columns without allowExplicitInsert
  std::vector<std::string> explicit_refused_names_;
  std::vector<int> not_null_;  // NOT NULL columns the fills fill
  std::vector<Check> checks_;
  std::vector<NestedNotNull> nested_not_null_;
};

// The columns the table fills itself (defaults, generated, identity): a message may omit them,
// so the schema decoders fill has them nullable (InputSchema).
bool FilledByTable(const columnar::Field& field);

// Step 6 on `rows` (the table's schema). Returns the table schema with the raised high-water
// marks when a value was assigned, null otherwise. InvalidArgument on overflow.
Result<columnar::SchemaPtr> AssignIdentityValues(const delta::ColumnRules& rules,
                                                 const columnar::Schema& table,
                                                 columnar::RecordBatch* rows);

}  // namespace ferry::pipeline
