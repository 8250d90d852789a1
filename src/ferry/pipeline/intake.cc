#include "ferry/pipeline/intake.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"

namespace ferry::pipeline {

std::string DescribeMessage(const source::Message& m) {
  if (m.kafka_partition >= 0) {
    return fmt::format("topic {} partition {} offset {}", m.topic, m.kafka_partition, m.position);
  }
  return fmt::format("stream {} subject {} sequence {}", m.topic, m.subject, m.position);
}

Intake::Intake(const PipelineOptions* options, std::unique_ptr<transform::Decoder> decoder,
               MetadataWriter metadata, std::unique_ptr<SchemaEvolver> evolver,
               columnar::SchemaPtr input, OpenBatch* open, PipelineMetrics* metrics,
               std::string table)
    : options_(options),
      decoder_(std::move(decoder)),
      metadata_(std::move(metadata)),
      evolver_(std::move(evolver)),
      input_schema_(std::move(input)),
      open_(open),
      metrics_(metrics),
      table_(std::move(table)) {}

Status Intake::Take(const source::Message& m, PartitionState* state) {
  if (state == nullptr) {
    return Internal("pipeline {}: the source delivered {} of a partition it never announced",
                    options_->id, DescribeMessage(m));
  }
  if (state->delivered && m.position <= *state->delivered) {
    metrics_->redeliveries->Increment();
    return Status::OK();
  }
  if (!m.bad_reason.empty()) {
    // A router's verdict (router.h): a bad record before any decoding.
    Status bad =
        InvalidArgument("pipeline {}: {}: {}", options_->id, DescribeMessage(m), m.bad_reason);
    if (options_->on_bad_record == OnBadRecord::kFail) {
      return bad;
    }
    TakeBad(m, state, bad);
    return Status::OK();
  }
  const bool tombstone =
      m.payload.empty() && (options_->upsert.has_value() || decoder_->reads_tombstones());
  if (tombstone && !options_->upsert) {
    // A tombstone of a change-envelope format (Debezium sends one after each delete, for log
    // compaction). An append pipeline has the delete's row already: consumed without one.
    open_->Consume(m);
    Delivered(m, state);
    return Status::OK();
  }
  Status st = tombstone ? AppendTombstone(m) : decoder_->Append(m.payload, open_->rows());
  if (st.code() == StatusCode::kUnavailable) {
    // Not the message's fault: nothing of it stays, and it is offered again.
    open_->DropUntaken();
    return st.WithContext("pipeline {}: {}", options_->id, DescribeMessage(m));
  }
  if (decoder_->has_observations()) {  // never while messages fit the schema
    st = Evolve(m, std::move(st));
    if (st.code() == StatusCode::kNotSupported || st.code() == StatusCode::kInternal) {
      return st.WithContext("pipeline {}: {}", options_->id, DescribeMessage(m));
    }
    if (st.code() == StatusCode::kResourceExhausted) {
      return st;
    }
  }
  if (st.ok() && key_decoder_ != nullptr) {
    st = DecodeKey(m);
    if (st.code() == StatusCode::kUnavailable) {
      return st.WithContext("pipeline {}: {}", options_->id, DescribeMessage(m));
    }
  }
  if (!st.ok()) {
    Status bad = st.WithContext("pipeline {}: {}", options_->id, DescribeMessage(m));
    if (options_->on_bad_record == OnBadRecord::kFail) {
      return bad;
    }
    TakeBad(m, state, bad);
    return Status::OK();
  }
  metadata_.Append(m, open_->rows());
  const transform::ChangeOp op = !options_->upsert ? transform::ChangeOp::kUpsert
                                 : tombstone       ? transform::ChangeOp::kDelete
                                                   : decoder_->last_op();
  // The table's rules judge the rows that go in; a delete carries only its key.
  if (rules_ != nullptr && !rules_->empty() && op == transform::ChangeOp::kUpsert) {
    if (Status broken = rules_->CompleteRow(open_->rows(), open_->taken_rows()); !broken.ok()) {
      open_->DropUntaken();
      Status bad = broken.WithContext("pipeline {}: {}", options_->id, DescribeMessage(m));
      if (options_->on_bad_record == OnBadRecord::kFail) {
        return bad;
      }
      TakeBad(m, state, bad);
      return Status::OK();
    }
  }
  if (options_->upsert) {
    open_->TakeRow(m, op);
  } else {
    open_->TakeRow(m);
  }
  if (const transform::DroppedFields* dropped = decoder_->last_dropped(); dropped != nullptr) {
    CountDropped(*dropped);
  }
  Delivered(m, state);
  return Status::OK();
}

void Intake::CountDropped(const transform::DroppedFields& dropped) {
  if (&dropped != dropped_seen_) {
    dropped_counters_.clear();
    for (const std::string& field : dropped.fields) {
      dropped_counters_.push_back(metrics_->DroppedField(field));
      if (dropped_logged_.emplace(dropped.writer, field).second) {
        metrics_->journal->RecordDroppedField(
            metrics_->journal_key,
            {.time_ms = WallMillis(), .writer = dropped.writer, .field = field});
        FERRY_LOG_WARN(
            "pipeline {}: field '{}' of {} has no column in table {} ({}): its values are "
            "dropped, counted in ferry_dropped_fields_total",
            options_->id, field, dropped.writer, table_,
            options_->schema_evolution == delta::SchemaEvolution::kNone
                ? "schema_evolution = \"none\""
                : "schema evolution cannot add it: a name the pipeline's own columns use, or a "
                  "type with no column");
      }
    }
    dropped_seen_ = &dropped;
  }
  for (metrics::Counter* counter : dropped_counters_) {
    counter->Increment();
  }
}

Status Intake::Evolve(const source::Message& m, Status decoded) {
  // Rows before this message are complete; a row it appended is dropped before a change.
  auto drop_row = [&] {
    if (decoded.ok()) {
      open_->DropUntaken();
    }
  };
  constexpr int kRounds = 4;  // a change, then the fields inside what it added, settle quickly
  for (int round = 0; round < kRounds; ++round) {
    std::vector<transform::FieldObservation> seen = decoder_->TakeObservations();
    Result<std::optional<SchemaEvolver::Evolution>> plan = evolver_->Plan(input_schema_, seen);
    if (!plan.ok()) {
      drop_row();
      StatusCode code = plan.status().code();
      if (code == StatusCode::kNotSupported ||
          (code == StatusCode::kResourceExhausted && open_->taken_rows() > 0)) {
        return plan.status();
      }
      if (decoded.ok()) {
        return InvalidArgument("{}", plan.status().message());
      }
      // The decoder's reason first (it names the bad-record reason); then why no schema change
      // helps.
      std::string_view why = plan.status().message();
      constexpr std::string_view kPrefix = "schema evolution: ";
      if (why.starts_with(kPrefix)) {
        why.remove_prefix(kPrefix.size());
      }
      return InvalidArgument("{} (the schema cannot take it: {})", decoded.message(), why);
    }
    if (!plan->has_value()) {
      return decoded;  // nothing typed to add yet, or nothing wider helps: as decoded
    }
    drop_row();
    FERRY_RETURN_IF_ERROR(SwitchInput((*plan)->input, {.int64_to_double = true}));
    std::vector<std::string> changes;
    for (const delta::SchemaChange& change : (*plan)->changes) {
      changes.push_back(change.Describe());
    }
    FERRY_LOG_INFO("pipeline {}: {} asks for a schema change; the open batch now holds: {}",
                   options_->id, DescribeMessage(m), fmt::join(changes, "; "));
    decoded = decoder_->Append(m.payload, open_->rows());
    if (!decoder_->has_observations()) {
      return decoded;
    }
  }
  (void)decoder_->TakeObservations();
  drop_row();
  return InvalidArgument("schema evolution: the message's fields did not settle after {} changes",
                         kRounds);
}

Status Intake::SwitchInput(const columnar::SchemaPtr& input, columnar::ConformOptions conform) {
  if (input == input_schema_ || input->Equals(*input_schema_, /*check_metadata=*/true)) {
    return Status::OK();
  }
  if (Status st = open_->ConformTo(input, conform); !st.ok()) {
    return Internal("pipeline {}: the open batch does not convert to the new schema: {}",
                    options_->id, st.message());
  }
  Result<std::unique_ptr<transform::Decoder>> decoder = options_->decoder_factory(input);
  if (!decoder.ok()) {
    return NotSupported("pipeline {}: no decoder for the schema ({}): {}", options_->id,
                        input->ToString(), decoder.status().message());
  }
  Result<MetadataWriter> metadata = MetadataWriter::Create(*input, options_->metadata_columns);
  if (!metadata.ok()) {
    return NotSupported("pipeline {}: {}", options_->id, metadata.status().message());
  }
  std::unique_ptr<transform::Decoder> key;
  if (options_->key_decoder_factory) {
    Result<std::unique_ptr<transform::Decoder>> made = options_->key_decoder_factory(input);
    if (!made.ok()) {
      return NotSupported("pipeline {}: no key decoder for the schema ({}): {}", options_->id,
                          input->ToString(), made.status().message());
    }
    key = std::move(*made);
  }
  if (rules_ != nullptr) {
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<TableRules> rules, CompileRules(*input));
    rules_changed_in_batch_ =
        rules_changed_in_batch_ || (rules->key() != rules_->key() && open_->taken_rows() > 0);
    rules_ = std::move(rules);
  }
  decoder_ = std::move(*decoder);
  dropped_seen_ = nullptr;  // its DroppedFields went with the old decoder
  key_decoder_ = std::move(key);
  metadata_ = std::move(*metadata);
  input_schema_ = input;
  return Status::OK();
}

Status Intake::SetTableRules(const delta::Protocol& protocol,
                             const delta::StringMap& configuration) {
  if (rules_ != nullptr && protocol == protocol_ && configuration == configuration_) {
    return Status::OK();
  }
  protocol_ = protocol;
  configuration_ = configuration;
  return BuildRules();
}

Result<std::unique_ptr<TableRules>> Intake::CompileRules(const columnar::Schema& input) const {
  Result<delta::ColumnRules> read =
      delta::ReadColumnRules(protocol_, delta::Metadata{.configuration = configuration_}, input);
  if (!read.ok()) {
    return read.status().WithContext("pipeline {}", options_->id);
  }
  Result<std::unique_ptr<TableRules>> made =
      TableRules::Create(*read, input, options_->transform.time_zone);
  if (!made.ok()) {
    return made.status().WithContext("pipeline {}", options_->id);
  }
  return made;
}

Status Intake::BuildRules() {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<TableRules> made, CompileRules(*input_schema_));
  const bool changed = rules_ == nullptr ? !made->empty() : made->key() != rules_->key();
  rules_changed_in_batch_ = rules_changed_in_batch_ || (changed && open_->taken_rows() > 0);
  rules_ = std::move(made);
  return Status::OK();
}

std::string Intake::batch_rules_key() const {
  if (rules_changed_in_batch_) {
    return "stale";
  }
  return rules_ == nullptr ? empty_rules_key_ : rules_->key();
}

Status Intake::FollowTable() {
  rules_changed_in_batch_ = false;  // a new batch opens
  if (options_->decoder_factory) {
    FERRY_RETURN_IF_ERROR(SwitchInput(evolver_->NextInput(input_schema_)));
  }
  evolver_->OpenBatch(input_schema_);
  return Status::OK();
}

void Intake::Delivered(const source::Message& m, PartitionState* state) {
  state->delivered = m.position;
  metrics_->messages->Increment();
}

void Intake::TakeBad(const source::Message& m, PartitionState* state, const Status& error) {
  std::string_view reason = BadRecordReason(error.message());
  auto sample = [&](const char* action) {
    metrics_->journal->RecordBadRecord(metrics_->journal_key,
                                       {.time_ms = WallMillis(),
                                        .partition = state->key,
                                        .position = m.position,
                                        .action = action,
                                        .reason = std::string(reason),
                                        .error = error.message()},
                                       m.payload);
  };
  if (options_->on_bad_record == OnBadRecord::kSkip || !open_->keeps_dead_letters()) {
    metrics_->Bad("skipped", reason)->Increment();
    sample("skipped");
    FERRY_LOG_WARN("{} (skipped: on_bad_record = \"skip\")", error.message());
  } else if (state->dead_committed && m.position <= *state->dead_committed) {
    // Dead-lettered by an earlier run whose main commit did not land: already in its table.
    FERRY_LOG_DEBUG("{}: already in the dead-letter table", error.message());
  } else {
    metrics_->Bad("dead_letter", reason)->Increment();
    sample("dead_letter");
    FERRY_LOG_WARN("{} (to the dead-letter table)", error.message());
    open_->AddDeadLetter(options_->id, state->key, m, error.message());
    Delivered(m, state);
    return;
  }
  open_->Consume(m);
  Delivered(m, state);
}

Status Intake::AppendTombstone(const source::Message& m) {
  if (options_->tombstone_key_from_metadata) {
    // The key columns are metadata (or the key's decoder's): the value's columns are null.
    for (int column : decoder_->output_columns()) {
      open_->rows()->mutable_column(column)->AppendNull();
    }
    return Status::OK();
  }
  if (m.key.empty()) {
    return InvalidArgument("a tombstone (empty value) without a key: nothing to delete");
  }
  // A change-envelope decoder reads its format's keys (Debezium's, with or without the schema
  // wrapper); others decode the key as a value.
  Status st = decoder_->reads_tombstones() ? decoder_->AppendTombstone(m.key, open_->rows())
                                           : decoder_->Append(m.key, open_->rows());
  if (!st.ok()) {
    return Status(st.code(), fmt::format("tombstone: its key does not decode as the key "
                                         "columns: {}",
                                         st.message()));
  }
  return st;
}

Status Intake::BuildKeyDecoder() {
  if (!options_->key_decoder_factory) {
    return Status::OK();
  }
  Result<std::unique_ptr<transform::Decoder>> key = options_->key_decoder_factory(input_schema_);
  if (!key.ok()) {
    return key.status().WithContext("pipeline {}: the key's decoder", options_->id);
  }
  key_decoder_ = std::move(*key);
  return Status::OK();
}

Status Intake::DecodeKey(const source::Message& m) {
  Status st;
  if (m.key.empty()) {
    const int column = key_decoder_->output_columns().front();
    if (!input_schema_->fields()[static_cast<size_t>(column)].nullable) {
      st = InvalidArgument("the message has no key, and the key column is NOT NULL");
    } else {
      open_->rows()->mutable_column(column)->AppendNull();
    }
  } else {
    st = key_decoder_->Append(m.key, open_->rows());
  }
  if (!st.ok()) {
    open_->DropUntaken();  // the value's row goes with it
    return Status(st.code(), fmt::format("key: {}", st.message()));
  }
  return st;
}

void Intake::SetTable(const columnar::SchemaPtr& table, bool widening_off) {
  evolver_->SetTable(table, widening_off);
}

Status Intake::ResetToTable(const columnar::SchemaPtr& table, bool widening_off) {
  rules_changed_in_batch_ = false;  // the open batch is empty
  evolver_->SetTable(table, widening_off);
  if (options_->decoder_factory) {
    FERRY_RETURN_IF_ERROR(SwitchInput(evolver_->table_input()));
  }
  evolver_->OpenBatch(input_schema_);
  return Status::OK();
}

}  // namespace ferry::pipeline
