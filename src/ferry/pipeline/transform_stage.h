// TransformStage: derived columns and the `where` filter of a pipeline (issue 6, docs/transform.md)
// applied to a decoded batch just before it is written.
//
//   [[pipeline.columns]]
//   name = "date_only"
//   expr = "from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy')"
//   where = "payload IS NOT NULL"
//
// The input schema is what the decoder and the metadata columns fill; each derived column is
// compiled against it and appended, in order, to make the table schema (nullable, of the
// expression's type), so tables may be partitioned by derived columns. `where` is compiled
// against the table schema (derived columns included) and must be BOOLEAN; rows where it is not
// true are dropped (their positions still advance: a filtered message is consumed).
//
// Expressions never fail at run time (Spark with ANSI off): a malformed date is NULL.
//
// Thread-safety: immutable after Create; Apply may run on any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/expression.h"

namespace ferry::pipeline {

struct DerivedColumnSpec {
  std::string name;
  std::string expr;
  std::string origin =
      "expr";  // for error positions, e.g. "ferry.toml:12:8: pipeline[0].columns[0].expr"
};

struct TransformSpec {
  std::vector<DerivedColumnSpec> columns;
  std::string where;
  std::string where_origin = "where";
  std::string time_zone = "UTC";
};

class TransformStage {
 public:
  // InvalidArgument naming the expression and column for a compile error, a derived column whose
  // name the input already has, or a non-BOOLEAN `where`.
  // With `table` (the schema of an existing table, which schema evolution or an operator may
  // have extended): the output follows the table's column order and types instead; every table
  // column must be an input column of the same type or a derived column whose expression's type
  // the table's holds (CanConform: a derived column widened with its input); InvalidArgument
  // naming the column otherwise.
  static Result<std::unique_ptr<TransformStage>> Create(columnar::SchemaPtr input,
                                                        const TransformSpec& spec,
                                                        const columnar::Schema* table = nullptr);

  const columnar::SchemaPtr& input_schema() const { return input_; }
  const columnar::SchemaPtr& table_schema() const { return table_; }
  // Names of the derived columns (the table columns the decoder does not fill).
  std::vector<std::string> derived_names() const;
  // The derived columns as their expressions type them, in spec order.
  const std::vector<columnar::Field>& derived_fields() const { return derived_fields_; }
  bool empty() const { return derived_.empty() && where_ == nullptr; }

  // The table-schema batch for `input` (input schema), minus the rows `where` drops; *filtered
  // receives their number.
  columnar::RecordBatch Apply(const columnar::RecordBatch& input, int64_t* filtered) const;

 private:
  // Create's `table` step.
  Status FollowTable(const columnar::Schema& table);

  columnar::SchemaPtr input_;
  columnar::SchemaPtr table_;
  std::vector<std::unique_ptr<transform::Expression>> derived_;
  std::vector<columnar::Field> derived_fields_;
  // With a table order: for each table column, its index in [input columns, derived columns].
  std::vector<int> order_;
  std::unique_ptr<transform::Expression> where_;
};

// The input schema of a table schema: the table's columns minus the derived ones; the columns
// the table fills itself (FilledByTable: defaults, generated and identity columns) are nullable
// there and carry no identity high-water mark.
columnar::SchemaPtr InputSchema(const columnar::Schema& table,
                                const std::vector<DerivedColumnSpec>& derived);

}  // namespace ferry::pipeline
