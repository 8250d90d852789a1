// Intake: steps 2 and 6 of the loop (pipeline.h) for one message at a time: the message decoded
// into the open batch with its metadata columns, or handled as `on_bad_record` says, and the
// open batch's input schema evolved when a message asks for it (schema_evolver.h).
//
//   Status st = intake.Take(message, book.Find(message.partition));
//   // OK: taken (a row, a dead letter, a skip) or a redelivery dropped. See Take for the rest.
//
// Thread-safety: pipeline thread only.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/types.h"
#include "ferry/pipeline/metadata_columns.h"
#include "ferry/pipeline/open_batch.h"
#include "ferry/pipeline/partition_book.h"
#include "ferry/pipeline/pipeline_metrics.h"
#include "ferry/pipeline/pipeline_options.h"
#include "ferry/pipeline/schema_evolver.h"
#include "ferry/pipeline/table_rules.h"
#include "ferry/source/source.h"
#include "ferry/transform/decoder.h"

namespace ferry::pipeline {

// "topic t partition 3 offset 42" or "stream s subject a.b sequence 7": how errors name a message.
std::string DescribeMessage(const source::Message& message);

class Intake {
 public:
  // `options`, `open` and `metrics` outlive the Intake. `input` is the schema `decoder` and
  // `metadata` fill, and `open`'s. `table` names the table in log lines (Table::Describe).
  Intake(const PipelineOptions* options, std::unique_ptr<transform::Decoder> decoder,
         MetadataWriter metadata, std::unique_ptr<SchemaEvolver> evolver, columnar::SchemaPtr input,
         OpenBatch* open, PipelineMetrics* metrics, std::string table);

  // Step 2 for a message of `state`'s partition. OK: taken into the open batch (a row, or a bad
  // record skipped or dead-lettered) or dropped as a redelivery. InvalidArgument: a bad record
  // under kFail, naming the message. ResourceExhausted: the open batch must be committed before
  // the message can add its fields. Unavailable: the decoder cannot tell yet (a schema registry
  // that does not answer); nothing was taken, the message is to be offered again. NotSupported
  // or Internal: stop.
  Status Take(const source::Message& message, PartitionState* state);

  // The key's decoder (PipelineOptions::key_decoder_factory) for the input schema, if any.
  Status BuildKeyDecoder();
  // The open batch conformed to `input`, and the decoder and metadata writer rebuilt for it.
  Status SwitchInput(const columnar::SchemaPtr& input, columnar::ConformOptions conform = {});
  // Opens the next batch on the schema the table holds or the pending one (SchemaEvolver).
  Status FollowTable();
  // The table's schema changed (a commit's outcome): the next FollowTable decodes into it.
  void SetTable(const columnar::SchemaPtr& table, bool widening_off);
  // After fencing: the open batch is empty; decode into the table's schema from now on.
  Status ResetToTable(const columnar::SchemaPtr& table, bool widening_off);

  const columnar::SchemaPtr& input_schema() const { return input_schema_; }

  // The table's column rules (delta/column_rules.h) from its protocol and configuration, compiled
  // for the input schema now and after every input switch (table_rules.h). NotSupported naming
  // an expression the engine cannot evaluate.
  Status SetTableRules(const delta::Protocol& protocol, const delta::StringMap& configuration);
  // The rules key every row of the open batch was checked against; "stale" when the rules
  // changed while the batch was open (the committer then has it read again).
  std::string batch_rules_key() const;

 private:
  // Step 6 for a message whose decoding (`decoded`) left observations: OK or a bad record
  // (InvalidArgument) as Take goes on with it; ResourceExhausted when the batch must be
  // committed before the message can add its fields; NotSupported or Internal: stop.
  Status Evolve(const source::Message& message, Status decoded);
  // A bad record under kSkip / kDeadLetter. `error` names it.
  void TakeBad(const source::Message& message, PartitionState* state, const Status& error);
  // The message's position is delivered (the open batch consumed it, with or without a row).
  void Delivered(const source::Message& message, PartitionState* state);
  // Upsert pipelines: the row of a tombstone (an empty value), a delete of its key
  // (PipelineOptions::tombstone_key_from_metadata).
  Status AppendTombstone(const source::Message& message);
  // The key of a message whose value decoded: into its column, or null when empty.
  Status DecodeKey(const source::Message& message);
  // The writer fields the decoder dropped from the row just taken: counted, and logged once per
  // writer schema and field.
  void CountDropped(const transform::DroppedFields& dropped);
  // The table's rules (protocol_, configuration_) compiled for `input`.
  Result<std::unique_ptr<TableRules>> CompileRules(const columnar::Schema& input) const;
  // Compiles the rules for input_schema_.
  Status BuildRules();

  const PipelineOptions* options_;
  std::unique_ptr<transform::Decoder> decoder_;
  std::unique_ptr<transform::Decoder> key_decoder_;  // null: no key decoding
  MetadataWriter metadata_;
  std::unique_ptr<SchemaEvolver> evolver_;
  columnar::SchemaPtr input_schema_;
  OpenBatch* open_;
  PipelineMetrics* metrics_;
  std::string table_;
  // The counters of `dropped_seen_`'s fields, in order; reset when the decoder is replaced.
  const transform::DroppedFields* dropped_seen_ = nullptr;
  std::vector<metrics::Counter*> dropped_counters_;
  std::set<std::pair<std::string, std::string>> dropped_logged_;  // (writer, field)
  // Column rules (table_rules.h): the table's protocol and configuration they come from, and
  // the compiled rules for input_schema_ (null: none set).
  delta::Protocol protocol_;
  delta::StringMap configuration_;
  std::unique_ptr<TableRules> rules_;
  std::string empty_rules_key_ = delta::ColumnRules{}.Key();
  bool rules_changed_in_batch_ = false;
};

}  // namespace ferry::pipeline
