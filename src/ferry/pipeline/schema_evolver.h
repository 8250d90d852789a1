// SchemaEvolver: the pipeline thread's half of schema evolution (`schema_evolution` in
// [[pipeline]], docs/transform.md "Schema evolution"). The decoder reports what the open batch's
// schema cannot hold (transform::FieldObservation); the evolver turns that into the input schema
// the batch continues with, by Delta's rules (delta/schema_evolution.h), before anything is
// written. The writer thread's half (BatchCommitter) merges the batch's schema into the table's
// at commit time, in the same commit as the data, and merges again when another writer changed
// the table first.
//
//   1. Plan(current, observations): the observations are laid over the open batch's input
//      schema (a new field at the end of its struct with the type its value asked for; a value
//      that needs a wider type widens its field), then merged into the schema the batch opened
//      with (OpenBatch), which applies the mode, the limits and the naming rules.
//   2. The derived columns, `where` and the dedup key are compiled again against the result;
//      a derived column whose expression now yields a type its table column cannot take (nor
//      widen to) stops the pipeline before anything is written.
//   3. The pipeline conforms the open batch's columns to the result (rows decoded before read
//      the new fields as null) and rebuilds its decoder for it.
// A field the batch added itself and that a later message needs as DOUBLE (an integer first, a
// fraction later) is re-typed within the batch; nothing else is re-typed.
//
// Thread-safety: the pipeline thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/column_conform.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/pipeline/dedup_index.h"
#include "ferry/pipeline/transform_stage.h"
#include "ferry/transform/decoder.h"

namespace ferry::pipeline {

struct SchemaEvolverOptions {
  delta::SchemaEvolution mode = delta::SchemaEvolution::kNone;
  delta::SchemaEvolutionLimits limits;
  std::vector<std::string> partition_columns;
  TransformSpec transform;
  // Columns the decoder does not fill: a message field of the same name never becomes a column.
  std::map<std::string, std::string> metadata_columns;
  std::string unknown_fields_column;
  std::optional<DedupSpec> dedup;
};

// Conforms `batch` to `schema` (columnar/column_conform.h): its columns matched by name ignoring
// case, columns of `schema` it lacks added as nulls. InvalidArgument naming the column when one
// does not conform or has no place in `schema`; the batch is then unchanged. A batch without
// rows becomes an empty batch of `schema` whatever its columns were (a fenced pipeline's batch,
// whose own additions and types may have lost to another writer's).
Status ConformBatch(columnar::RecordBatch* batch, const columnar::SchemaPtr& schema,
                    columnar::ConformOptions options = {});

class SchemaEvolver {
 public:
  // `table`: the table's schema (derived columns included); `widening_off`: the table sets
  // delta.enableTypeWidening to something other than "true".
  SchemaEvolver(SchemaEvolverOptions options, columnar::SchemaPtr table, bool widening_off);

  const SchemaEvolverOptions& options() const { return options_; }
  // The input schema of the table as last known (its columns without the derived ones).
  const columnar::SchemaPtr& table_input() const { return table_input_; }

  // The table's schema after a commit (ours or another writer's), or after a reload.
  void SetTable(columnar::SchemaPtr table, bool widening_off);
  // The batch that opens now starts from `input`: its additions are counted from there.
  void OpenBatch(columnar::SchemaPtr input) { batch_base_ = std::move(input); }
  // The schema a batch opening now should decode into: the table's input schema when it holds
  // everything `current` holds (no change of ours is pending), else `current`.
  columnar::SchemaPtr NextInput(const columnar::SchemaPtr& current) const;

  struct Evolution {
    columnar::SchemaPtr input;                 // the open batch's new input schema
    std::vector<delta::SchemaChange> changes;  // relative to the batch's base
  };
  // Step 1-2. OK(nullopt): nothing to change (values that are all null so far, or a type that
  // fits already). InvalidArgument: the message is a bad record (the reason names the field).
  // ResourceExhausted: the batch reached max_new_columns_per_batch (a later batch may add it).
  // NotSupported: a derived column, `where` or the dedup key no longer type-checks: stop.
  Result<std::optional<Evolution>> Plan(
      const columnar::SchemaPtr& current,
      const std::vector<transform::FieldObservation>& observations) const;

 private:
  // Whether a message field called `name` at the top level is one of the pipeline's own columns.
  bool Reserved(const std::string& name) const;
  Status CheckDerived(const columnar::SchemaPtr& input) const;

  SchemaEvolverOptions options_;
  columnar::SchemaPtr table_;
  columnar::SchemaPtr table_input_;
  bool widening_off_ = false;
  columnar::SchemaPtr batch_base_;
};

}  // namespace ferry::pipeline
