#include "ferry/pipeline/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ferry/base/check.h"
#include "ferry/base/clock.h"
#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/type_widening.h"

namespace ferry::pipeline {

using Clock = std::chrono::steady_clock;
using metrics::Labels;

struct Pipeline::Metrics {
  Metrics(metrics::Registry* r, const std::string& id)
      : registry(r), journal(r->journal()), pipeline(id) {
    const Labels l = {{"pipeline", id}};
    up = r->GetGauge("ferry_pipeline_up", "1 while the pipeline runs", l);
    rows = r->GetCounter("ferry_rows_written_total", "Rows committed to the table", l);
    bytes = r->GetCounter("ferry_bytes_written_total", "Bytes of data files committed", l);
    files = r->GetCounter("ferry_files_written_total", "Data files committed", l);
    messages = r->GetCounter("ferry_messages_received_total",
                             "Messages taken from the source into a batch", l);
    redeliveries = r->GetCounter("ferry_redeliveries_dropped_total",
                                 "Messages at or below a delivered position, dropped", l);
    const char* commits_help = "Commits by outcome (succeeded, failed, lost to another writer)";
    succeeded = r->GetCounter("ferry_commits_total", commits_help,
                              {{"pipeline", id}, {"outcome", "succeeded"}});
    committer.failed = r->GetCounter("ferry_commits_total", commits_help,
                                     {{"pipeline", id}, {"outcome", "failed"}});
    lost =
        r->GetCounter("ferry_commits_total", commits_help, {{"pipeline", id}, {"outcome", "lost"}});
    abandoned = r->GetCounter("ferry_batches_abandoned_total",
                              "Batches dropped because another writer owns a partition", l);
    unavailable = r->GetCounter("ferry_source_unavailable_total",
                                "Polls that found the broker unreachable", l);
    gaps = r->GetCounter("ferry_source_gaps_total",
                         "Ranges the broker no longer held, skipped (on_gap = continue)", l);
    gap_messages =
        r->GetCounter("ferry_source_gap_messages_total", "Positions in the skipped ranges", l);
    version = r->GetGauge("ferry_table_version", "Latest table version this pipeline knows", l);
    filtered = r->GetCounter("ferry_rows_filtered_total", "Rows dropped by the `where` filter", l);
    dedup_hits = r->GetCounter("ferry_dedup_hits_total",
                               "Rows not written because their dedup key was committed already", l);
    committer.checkpoint_seconds = r->GetHistogram("ferry_checkpoint_duration_seconds",
                                                   "Writing a Delta checkpoint after a commit", l);
    rate_limited = r->GetCounter("ferry_rate_limited_seconds_total",
                                 "Time partitions were held back by max_rate_per_partition", l);
    committer.dead_rows = r->GetCounter("ferry_dead_letter_rows_written_total",
                                        "Rows committed to the dead-letter table", l);
    batch_seconds = r->GetHistogram("ferry_batch_duration_seconds",
                                    "From a batch's first row to its durable commit", l);
    committer.commit_seconds = r->GetHistogram("ferry_commit_duration_seconds",
                                               "Writing a batch's files and committing them", l);
    committer.journal = journal;
    committer.schema_changes =
        r->GetCounter("ferry_schema_changes_total",
                      "Commits that changed the table's schema (schema_evolution)", l);
    committer.schema_replans = r->GetCounter(
        "ferry_schema_replans_total",
        "Batches merged again with the table's schema after another writer changed its metaData",
        l);
    schema_rewinds = r->GetCounter(
        "ferry_schema_rewinds_total",
        "Batches read again because the table's new schema could not take their values", l);
  }
  metrics::Gauge* Position(const std::string& name, const std::string& help,
                           const std::string& partition) {
    return registry->GetGauge(name, help, {{"pipeline", pipeline}, {"partition", partition}});
  }
  metrics::Counter* PartitionCounter(const std::string& name, const std::string& help,
                                     const std::string& partition) {
    return registry->GetCounter(name, help, {{"pipeline", pipeline}, {"partition", partition}});
  }

  metrics::Registry* registry;
  metrics::Journal* journal;  // what the status page lists: commits, state, bad records, fences
  std::string pipeline;
  metrics::Gauge* up;
  metrics::Counter* rows;
  metrics::Counter* bytes;
  metrics::Counter* files;
  metrics::Counter* messages;
  metrics::Counter* redeliveries;
  metrics::Counter* succeeded;
  metrics::Counter* lost;
  metrics::Counter* abandoned;
  metrics::Counter* unavailable;
  metrics::Counter* gaps;
  metrics::Counter* gap_messages;
  metrics::Gauge* version;
  metrics::Counter* filtered;
  metrics::Counter* dedup_hits;
  metrics::Counter* rate_limited;
  metrics::Counter* schema_rewinds;
  // Bad records by what became of them (skipped, dead_letter) and why.
  metrics::Counter* Bad(const char* action, std::string_view reason) {
    return registry->GetCounter(
        "ferry_bad_records_total",
        "Messages that did not decode or fit the schema, by action and reason",
        {{"pipeline", pipeline}, {"action", action}, {"reason", std::string(reason)}});
  }
  metrics::Histogram* batch_seconds;
  // The writer thread's (BatchCommitter).
  BatchCommitter::Metrics committer;
};

namespace {

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// The `reason` label of a bad record, from the decoder's message (transform/json_decoder.h).
std::string_view BadRecordReason(std::string_view error) {
  auto has = [&](std::string_view text) { return error.find(text) != std::string_view::npos; };
  if (has("schema evolution")) {
    return "schema";
  }
  if (has("malformed")) {
    return "malformed";
  }
  if (has("UTF-8")) {
    return "invalid_utf8";
  }
  if (has("missing required field") || has("null in a NOT NULL field")) {
    return "missing_required";
  }
  if (has("out of range") || has("does not fit")) {
    return "overflow";
  }
  if (has("expected")) {
    return "wrong_type";
  }
  return "other";
}

}  // namespace

Result<std::unique_ptr<Pipeline>> Pipeline::Create(PipelineOptions options,
                                                   std::unique_ptr<delta::Table> table,
                                                   delta::Snapshot snapshot,
                                                   SourceFactory source_factory,
                                                   std::unique_ptr<transform::Decoder> decoder,
                                                   metrics::Registry* registry) {
  if (options.id.empty()) {
    return InvalidArgument("a pipeline needs an id");
  }
  if (options.max_rows <= 0 || options.max_bytes <= 0 || options.max_latency.count() <= 0) {
    return InvalidArgument("pipeline {}: batch max_rows, max_bytes and max_latency must be > 0",
                           options.id);
  }
  if (options.max_in_flight < 0) {
    return InvalidArgument("pipeline {}: batch max_in_flight must be >= 0", options.id);
  }
  columnar::SchemaPtr input = InputSchema(*snapshot.schema(), options.transform.columns);
  // The table's order and types (a table that evolved has columns after the derived ones).
  Result<std::unique_ptr<TransformStage>> stage =
      TransformStage::Create(input, options.transform, snapshot.schema().get());
  if (!stage.ok()) {
    return stage.status().WithContext("pipeline {}", options.id);
  }
  if (options.schema_evolution != delta::SchemaEvolution::kNone && !options.decoder_factory) {
    return InvalidArgument("pipeline {}: schema evolution needs a decoder factory", options.id);
  }
  Result<MetadataWriter> metadata = MetadataWriter::Create(*input, options.metadata_columns);
  if (!metadata.ok()) {
    return metadata.status().WithContext("pipeline {}", options.id);
  }
  std::unique_ptr<DedupIndex> dedup;
  if (options.dedup) {
    DedupSpec spec = *options.dedup;
    if (spec.index_name.empty()) {
      spec.index_name = options.id;
    }
    Result<std::unique_ptr<DedupIndex>> index = DedupIndex::Create(snapshot.schema(), spec);
    if (!index.ok()) {
      return index.status().WithContext("pipeline {}", options.id);
    }
    dedup = std::move(*index);
  }
  auto widening = snapshot.metadata().configuration.find(delta::kEnableTypeWideningProperty);
  auto evolver = std::make_unique<SchemaEvolver>(
      SchemaEvolverOptions{.mode = options.schema_evolution,
                           .limits = options.evolution_limits,
                           .partition_columns = snapshot.partition_columns(),
                           .transform = options.transform,
                           .metadata_columns = options.metadata_columns,
                           .unknown_fields_column = options.unknown_fields_column,
                           .dedup = options.dedup},
      snapshot.schema(),
      widening != snapshot.metadata().configuration.end() && widening->second != "true");
  return std::unique_ptr<Pipeline>(
      new Pipeline(std::move(options), std::move(table), std::move(snapshot),
                   std::move(source_factory), std::move(decoder), std::move(*metadata),
                   std::move(*stage), std::move(dedup), std::move(evolver), registry));
}

Pipeline::Pipeline(PipelineOptions options, std::unique_ptr<delta::Table> table,
                   delta::Snapshot snapshot, SourceFactory source_factory,
                   std::unique_ptr<transform::Decoder> decoder, MetadataWriter metadata,
                   std::unique_ptr<TransformStage> stage, std::unique_ptr<DedupIndex> dedup,
                   std::unique_ptr<SchemaEvolver> evolver, metrics::Registry* registry)
    : options_(std::move(options)),
      source_factory_(std::move(source_factory)),
      decoder_(std::move(decoder)),
      metadata_(std::move(metadata)),
      metrics_(std::make_unique<Metrics>(registry, options_.id)),
      evolver_(std::move(evolver)),
      input_schema_(stage->input_schema()),
      known_table_(snapshot.schema()),
      committer_(std::make_unique<BatchCommitter>(
          BatchCommitterOptions{.id = options_.id,
                                .writer = options_.writer,
                                .commit = options_.commit,
                                .initial_backoff = options_.initial_backoff,
                                .max_backoff = options_.max_backoff,
                                .transform = options_.transform,
                                .schema_evolution = options_.schema_evolution,
                                .evolution_limits = options_.evolution_limits},
          std::move(table), std::move(snapshot), std::move(stage), std::move(dedup),
          metrics_->committer)),
      queue_(
          std::make_unique<CommitQueue>(static_cast<size_t>(std::max(1, options_.max_in_flight)))) {
  batch_ = columnar::RecordBatch::MakeEmpty(input_schema_);
  metrics_->version->Set(static_cast<double>(committer_->snapshot().version()));
}

Pipeline::~Pipeline() {
  // Run() returns with nothing in flight; the queue is idle here.
  CloseSource();
}

Status Pipeline::SetDeadLetterTable(std::unique_ptr<delta::Table> table, delta::Snapshot snapshot) {
  Result<columnar::Schema> expected = columnar::ParseDdlSchema(kDeadLetterSchema);
  FERRY_CHECK(expected.ok());
  // The table may have more columns (null in ferry's rows); under schema evolution it may also
  // lack some, which its first commit adds (the dead-letter table evolves with its pipeline).
  Result<delta::SchemaMerge> merge =
      delta::MergeSchema(*snapshot.schema(), *expected, {.mode = options_.schema_evolution});
  if (!merge.ok()) {
    return InvalidArgument("pipeline {}: the dead-letter table {} has columns ({}), not ({}): {}",
                           options_.id, table->Describe(), snapshot.schema()->ToString(),
                           expected->ToString(), merge.status().message());
  }
  dead_ = columnar::RecordBatch::MakeEmpty(
      std::make_shared<const columnar::Schema>(std::move(*expected)));
  committer_->SetDeadLetterTable(std::move(table), std::move(snapshot));
  return Status::OK();
}

Status Pipeline::StartSource() {
  rate_limited_us_ = 0;
  positions_fresh_ = false;
  FERRY_ASSIGN_OR_RETURN(source_, source_factory_());
  Status st = source_->Start(this);
  if (!st.ok()) {
    source_.reset();
  }
  return st;
}

void Pipeline::CloseSource() {
  if (source_ == nullptr) {
    return;
  }
  Status st = source_->Close();
  if (!st.ok()) {
    FERRY_LOG_WARN("pipeline {}: closing the source: {}", options_.id, st.ToString());
  }
  source_.reset();
}

Result<std::optional<int64_t>> Pipeline::OnAssigned(const source::PartitionInfo& partition) {
  last_contact_ = Clock::now();
  // The batch in flight may hold the partition: its commit comes first, then the position is
  // read, and the table handle is ours again.
  queue_->WaitIdle();
  PartitionState state{.key = partition.key, .app_id = options_.id + "/" + partition.key};
  // Another writer may have moved the partition since our snapshot: read the log first (once
  // for all the partitions of one assignment).
  const bool refresh = !positions_fresh_;
  Result<std::optional<int64_t>> committed = committer_->ReadPosition(state.app_id, refresh);
  if (!committed.ok()) {
    return committed.status().WithContext("pipeline {}: reading positions for {}", options_.id,
                                          partition.key);
  }
  metrics_->version->Set(static_cast<double>(committer_->snapshot().version()));
  state.committed = *committed;
  state.delivered = state.committed;
  if (committer_->has_dead_letter_table()) {
    Result<std::optional<int64_t>> dead = committer_->ReadDeadLetterPosition(state.app_id, refresh);
    if (!dead.ok()) {
      return dead.status().WithContext("pipeline {}: reading the dead-letter position of {}",
                                       options_.id, partition.key);
    }
    state.dead_committed = *dead;
  }
  positions_fresh_ = true;
  state.sealed = state.committed;
  state.dead_sealed = state.dead_committed;
  if (state.committed) {
    metrics_->Position("ferry_committed_position", "Position committed in the table", state.key)
        ->Set(static_cast<double>(*state.committed));
  }
  FERRY_LOG_INFO("pipeline {}: {} assigned, {}", options_.id, partition.key,
                 state.committed ? fmt::format("resuming after position {}", *state.committed)
                                 : std::string("new to the table (start policy applies)"));
  std::optional<int64_t> position = state.committed;
  partitions_[partition.index] = std::move(state);
  heads_known_ = false;
  return position;
}

void Pipeline::OnRevoked(const source::PartitionInfo& partition) {
  // A partition given up may move on in another writer's hands before it comes back, even
  // within one poll: the next assignment reads the log again.
  positions_fresh_ = false;
  // A sealed batch holding the partition's rows is committed before the partition is given up
  // (as the serial loop committed it before polling again).
  queue_->WaitIdle();
  auto it = partitions_.find(partition.index);
  if (it == partitions_.end()) {
    return;
  }
  int32_t p = partition.index;
  if (batch_last_.count(p) != 0) {
    if (committer_->has_dead_letter_table() && !dead_partition_.empty()) {
      std::vector<int64_t> keep_dead;
      for (size_t row = 0; row < dead_partition_.size(); ++row) {
        if (dead_partition_[row] != p) {
          keep_dead.push_back(static_cast<int64_t>(row));
        }
      }
      dead_ = dead_.Take(keep_dead);
      std::erase(dead_partition_, p);
    }
    std::vector<int64_t> keep;
    keep.reserve(row_partition_.size());
    for (size_t row = 0; row < row_partition_.size(); ++row) {
      if (row_partition_[row] != p) {
        keep.push_back(static_cast<int64_t>(row));
      }
    }
    int64_t dropped = batch_.num_rows() - static_cast<int64_t>(keep.size());
    batch_ = batch_.Take(keep);
    std::erase(row_partition_, p);
    batch_last_.erase(p);
    batch_first_.erase(p);
    batch_bytes_.erase(p);
    FERRY_LOG_INFO("pipeline {}: {} revoked; {} uncommitted rows of it dropped", options_.id,
                   partition.key, dropped);
  } else {
    FERRY_LOG_INFO("pipeline {}: {} revoked", options_.id, partition.key);
  }
  partitions_.erase(it);
}

std::string Pipeline::Describe(const source::Message& m) const {
  if (m.kafka_partition >= 0) {
    return fmt::format("topic {} partition {} offset {}", m.topic, m.kafka_partition, m.position);
  }
  return fmt::format("stream {} subject {} sequence {}", m.topic, m.subject, m.position);
}

Status Pipeline::Take(const source::Message& m) {
  auto it = partitions_.find(m.partition);
  if (it == partitions_.end()) {
    return Internal("pipeline {}: the source delivered {} of a partition it never announced",
                    options_.id, Describe(m));
  }
  PartitionState& state = it->second;
  if (state.delivered && m.position <= *state.delivered) {
    metrics_->redeliveries->Increment();
    return Status::OK();
  }
  Status st = decoder_->Append(m.payload, &batch_);
  if (decoder_->has_observations()) {  // never while messages fit the schema
    st = Evolve(m, std::move(st));
    if (st.code() == StatusCode::kNotSupported || st.code() == StatusCode::kInternal) {
      return st.WithContext("pipeline {}: {}", options_.id, Describe(m));
    }
    if (st.code() == StatusCode::kResourceExhausted) {
      return st;
    }
  }
  if (!st.ok()) {
    Status bad = st.WithContext("pipeline {}: {}", options_.id, Describe(m));
    if (options_.on_bad_record == OnBadRecord::kFail) {
      return bad;
    }
    return TakeBad(m, bad);
  }
  metadata_.Append(m, &batch_);
  row_partition_.push_back(m.partition);
  batch_bytes_[m.partition] += static_cast<int64_t>(m.payload.size());
  Consume(m);
  return Status::OK();
}

Status Pipeline::Evolve(const source::Message& m, Status decoded) {
  // Rows before this message are complete; a row it appended is dropped before a change.
  auto drop_row = [&] {
    if (decoded.ok()) {
      for (int c = 0; c < batch_.num_columns(); ++c) {
        batch_.mutable_column(c)->Truncate(static_cast<int64_t>(row_partition_.size()));
      }
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
          (code == StatusCode::kResourceExhausted && !row_partition_.empty())) {
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
                   options_.id, Describe(m), fmt::join(changes, "; "));
    decoded = decoder_->Append(m.payload, &batch_);
    if (!decoder_->has_observations()) {
      return decoded;
    }
  }
  (void)decoder_->TakeObservations();
  drop_row();
  return InvalidArgument("schema evolution: the message's fields did not settle after {} changes",
                         kRounds);
}

Status Pipeline::SwitchInput(const columnar::SchemaPtr& input, columnar::ConformOptions conform) {
  if (input == input_schema_ || input->Equals(*input_schema_, /*check_metadata=*/true)) {
    return Status::OK();
  }
  if (Status st = ConformBatch(&batch_, input, conform); !st.ok()) {
    return Internal("pipeline {}: the open batch does not convert to the new schema: {}",
                    options_.id, st.message());
  }
  Result<std::unique_ptr<transform::Decoder>> decoder = options_.decoder_factory(input);
  if (!decoder.ok()) {
    return NotSupported("pipeline {}: no decoder for the schema ({}): {}", options_.id,
                        input->ToString(), decoder.status().message());
  }
  Result<MetadataWriter> metadata = MetadataWriter::Create(*input, options_.metadata_columns);
  if (!metadata.ok()) {
    return NotSupported("pipeline {}: {}", options_.id, metadata.status().message());
  }
  decoder_ = std::move(*decoder);
  metadata_ = std::move(*metadata);
  input_schema_ = input;
  spare_ = columnar::RecordBatch();  // its columns are of the old schema
  return Status::OK();
}

Status Pipeline::FollowTable() {
  if (options_.decoder_factory) {
    FERRY_RETURN_IF_ERROR(SwitchInput(evolver_->NextInput(input_schema_)));
  }
  evolver_->OpenBatch(input_schema_);
  return Status::OK();
}

void Pipeline::Consume(const source::Message& m) {
  if (batch_last_.empty()) {
    batch_opened_ = Clock::now();
  }
  batch_first_.try_emplace(m.partition, m.position);
  batch_last_[m.partition] = m.position;
  batch_last_timestamp_[m.partition] = m.timestamp_us;
  partitions_.at(m.partition).delivered = m.position;
  metrics_->messages->Increment();
}

Status Pipeline::TakeBad(const source::Message& m, const Status& error) {
  PartitionState& state = partitions_.at(m.partition);
  std::string_view reason = BadRecordReason(error.message());
  auto sample = [&](const char* action) {
    metrics_->journal->RecordBadRecord(options_.id,
                                       {.time_ms = WallMillis(),
                                        .partition = state.key,
                                        .position = m.position,
                                        .action = action,
                                        .reason = std::string(reason),
                                        .error = error.message()},
                                       m.payload);
  };
  if (options_.on_bad_record == OnBadRecord::kSkip || !committer_->has_dead_letter_table()) {
    metrics_->Bad("skipped", reason)->Increment();
    sample("skipped");
    FERRY_LOG_WARN("{} (skipped: on_bad_record = \"skip\")", error.message());
  } else if (state.dead_committed && m.position <= *state.dead_committed) {
    // Dead-lettered by an earlier run whose main commit did not land: already in its table.
    FERRY_LOG_DEBUG("{}: already in the dead-letter table", error.message());
  } else {
    metrics_->Bad("dead_letter", reason)->Increment();
    sample("dead_letter");
    FERRY_LOG_WARN("{} (to the dead-letter table)", error.message());
    dead_.mutable_column(0)->As<columnar::BinaryColumn>()->Append(options_.id);
    dead_.mutable_column(1)->As<columnar::BinaryColumn>()->Append(state.key);
    dead_.mutable_column(2)->As<columnar::Int64Column>()->Append(m.position);
    if (m.key.empty()) {
      dead_.mutable_column(3)->AppendNull();
    } else {
      dead_.mutable_column(3)->As<columnar::BinaryColumn>()->Append(m.key);
    }
    dead_.mutable_column(4)->As<columnar::BinaryColumn>()->Append(m.payload);
    dead_.mutable_column(5)->As<columnar::BinaryColumn>()->Append(error.message());
    dead_.mutable_column(6)->As<columnar::Int64Column>()->Append(WallMicros());
    dead_partition_.push_back(m.partition);
  }
  Consume(m);
  return Status::OK();
}

bool Pipeline::TriggerFired() const {
  if (batch_last_.empty()) {
    return false;
  }
  return batch_.num_rows() >= options_.max_rows || batch_.ByteSize() >= options_.max_bytes ||
         Clock::now() - batch_opened_ >= options_.max_latency;
}

void Pipeline::ClearBatch() {
  batch_.Clear();
  row_partition_.clear();
  batch_last_.clear();
  batch_first_.clear();
  batch_bytes_.clear();
  batch_last_timestamp_.clear();
  if (committer_->has_dead_letter_table()) {
    dead_.Clear();
  }
  dead_partition_.clear();
}

// ---- Pipeline thread: sealing, outcomes, fencing ----

std::unique_ptr<SealedBatch> Pipeline::Seal() {
  auto sealed = std::make_unique<SealedBatch>();
  sealed->rows = std::move(batch_);
  if (spare_.num_columns() > 0 && spare_.schema_ptr() == input_schema_) {
    // The columns of a batch that came back: their memory is allocated and touched already, so
    // decoding into them neither moves growing buffers nor faults in fresh pages.
    batch_ = std::move(spare_);
    spare_ = columnar::RecordBatch();
  } else {
    batch_ = columnar::RecordBatch::MakeEmpty(input_schema_);
  }
  for (const auto& [p, last] : batch_last_) {
    PartitionState& state = partitions_.at(p);
    SealedPartition& part = sealed->partitions[p];
    part.key = state.key;
    part.app_id = state.app_id;
    part.first = batch_first_.at(p);
    part.last = last;
    part.expected = state.sealed;
    state.sealed = last;
    if (auto ts = batch_last_timestamp_.find(p); ts != batch_last_timestamp_.end()) {
      part.last_timestamp_us = ts->second;
    }
  }
  if (committer_->has_dead_letter_table()) {
    columnar::SchemaPtr dead_schema = dead_.schema_ptr();
    sealed->dead = std::move(dead_);
    dead_ = columnar::RecordBatch::MakeEmpty(dead_schema);
    for (int32_t p : dead_partition_) {
      SealedPartition& part = sealed->partitions.at(p);
      if (!part.has_dead) {
        PartitionState& state = partitions_.at(p);
        part.has_dead = true;
        part.dead_expected = state.dead_sealed;
        state.dead_sealed = part.last;
      }
    }
  }
  sealed->gaps = std::move(batch_gaps_);
  batch_gaps_.clear();
  sealed->opened = batch_opened_;
  ClearBatch();
  return sealed;
}

Status Pipeline::SubmitBatch() {
  if (batch_last_.empty()) {
    return Status::OK();
  }
  if (queue_->full()) {
    FERRY_RETURN_IF_ERROR(HandleOutcome(queue_->Take()));
    if (batch_last_.empty()) {
      return Status::OK();  // fenced: the open batch went with the one before it
    }
  }
  std::unique_ptr<SealedBatch> sealed = Seal();
  SealedBatch* batch = sealed.get();
  in_flight_.push_back(std::move(sealed));
  queue_->Submit([committer = committer_.get(), batch, stop = stop_] {
    return committer->Commit(batch, stop);
  });
  FERRY_RETURN_IF_ERROR(FollowTable());
  return options_.max_in_flight == 0 ? Settle(/*wait=*/true) : Status::OK();
}

Status Pipeline::Settle(bool wait) {
  while (queue_->in_flight() > 0) {
    std::optional<Status> outcome;
    if (wait) {
      outcome = queue_->Take();
    } else {
      outcome = queue_->TryTake();
      if (!outcome) {
        break;
      }
    }
    FERRY_RETURN_IF_ERROR(HandleOutcome(*outcome));
  }
  return Status::OK();
}

Status Pipeline::Flush() {
  FERRY_RETURN_IF_ERROR(SubmitBatch());
  return Settle(/*wait=*/true);
}

Status Pipeline::HandleOutcome(const Status& outcome) {
  std::unique_ptr<SealedBatch> batch = std::move(in_flight_.front());
  in_flight_.pop_front();
  // The writer thread is done with the rows: keep their columns for the next open batch.
  batch->rows.Clear();
  spare_ = std::move(batch->rows);
  if (outcome.ok()) {
    AfterCommit(*batch);
    if (batch->table_schema != nullptr && batch->table_schema != known_table_) {
      known_table_ = batch->table_schema;
      evolver_->SetTable(known_table_, batch->widening_off);
      if (batch_last_.empty()) {
        return FollowTable();  // the open batch is empty: decode into the table's schema now
      }
    }
    return Status::OK();
  }
  if (outcome.code() == StatusCode::kAborted) {
    if (batch->schema_rewind) {
      metrics_->schema_rewinds->Increment();
    }
    return Fence(outcome, batch->schema_rewind);
  }
  DiscardInFlight();
  return outcome;
}

void Pipeline::DiscardInFlight() {
  while (queue_->in_flight() > 0) {
    (void)queue_->Take();
    in_flight_.pop_front();
  }
}

void Pipeline::AfterCommit(const SealedBatch& batch) {
  std::vector<source::CommittedPosition> positions;
  std::string summary;
  double batch_seconds = Seconds(Clock::now() - batch.opened);
  metrics::CommitRecord record{.version = batch.version,
                               .time_ms = WallMillis(),
                               .rows = batch.rows_written,
                               .files = batch.files,
                               .bytes = batch.bytes,
                               .commit_seconds = batch.commit_seconds,
                               .batch_seconds = batch_seconds};
  for (const auto& [p, part] : batch.partitions) {
    summary +=
        fmt::format("{}{} {}..{}", summary.empty() ? "" : ", ", part.key, part.first, part.last);
    record.positions.push_back({.partition = part.key, .first = part.first, .last = part.last});
    metrics_->Position("ferry_committed_position", "Position committed in the table", part.key)
        ->Set(static_cast<double>(part.last));
    auto it = partitions_.find(p);
    if (it == partitions_.end() || it->second.key != part.key) {
      continue;  // revoked since: the new owner reports it
    }
    PartitionState& state = it->second;
    state.committed = part.last;
    if (part.has_dead) {
      state.dead_committed = part.last;
    }
    state.committed_timestamp_us = part.last_timestamp_us;
    positions.push_back({.partition = p, .position = part.last});
    if (state.caught_up_at) {
      // Lag against the last head seen, so it falls with each commit, not only at head refresh.
      double head =
          metrics_
              ->Position("ferry_broker_head_position", "Last position the broker holds", state.key)
              ->value();
      SetLag(state, std::max(0.0, head - static_cast<double>(part.last)));
    }
  }
  metrics_->rows->Increment(static_cast<double>(batch.rows_written));
  metrics_->filtered->Increment(static_cast<double>(batch.filtered));
  metrics_->dedup_hits->Increment(static_cast<double>(batch.dedup_hits));
  metrics_->files->Increment(static_cast<double>(batch.files));
  metrics_->bytes->Increment(static_cast<double>(batch.bytes));
  metrics_->succeeded->Increment();
  metrics_->version->Set(static_cast<double>(batch.version));
  metrics_->batch_seconds->Observe(batch_seconds);
  metrics_->journal->RecordCommit(options_.id, std::move(record));
  FERRY_LOG_INFO("pipeline {}: committed version {}: {} rows in {} files ({})", options_.id,
                 batch.version, batch.rows_written, batch.files, summary);
  // Only now may the broker hear about it (DESIGN.md, step 5).
  Status fp = FERRY_FAILPOINT("pipeline.before_ack");
  if (fp.ok() && source_ != nullptr) {
    source_->Acknowledge(positions);
    fp = FERRY_FAILPOINT("pipeline.after_ack");
  }
  if (!fp.ok()) {
    FERRY_LOG_WARN("pipeline {}: acknowledging version {}: {}", options_.id, batch.version,
                   fp.ToString());
  }
}

Status Pipeline::Fence(const Status& why, bool rewind) {
  // The batches still out were sealed on positions that are no longer ours.
  DiscardInFlight();
  ++fences_;
  if (rewind) {
    FERRY_LOG_WARN(
        "pipeline {}: {}; dropping {} uncommitted rows and reading every partition again from "
        "the table's positions",
        options_.id, why.message(), batch_.num_rows());
  } else if (why.code() == StatusCode::kAborted) {
    metrics_->lost->Increment();
    metrics_->abandoned->Increment();
    FERRY_LOG_WARN(
        "pipeline {}: another writer committed positions of partitions in this batch ({}); "
        "dropping {} uncommitted rows and resuming every partition from the table",
        options_.id, why.message(), batch_.num_rows());
  } else {
    FERRY_LOG_WARN(
        "pipeline {}: reading from the source failed ({}); dropping {} uncommitted rows and "
        "resuming every partition from the table",
        options_.id, why.ToString(), batch_.num_rows());
  }
  metrics_->journal->RecordFence(
      options_.id,
      {.time_ms = WallMillis(), .reason = why.ToString(), .rows_dropped = batch_.num_rows()});
  ClearBatch();
  batch_gaps_.clear();
  CloseSource();
  partitions_.clear();
  FERRY_RETURN_IF_ERROR(committer_->Reload());
  // Changes of the dropped batches are gone with them: decode into the table's schema.
  known_table_ = committer_->snapshot().schema();
  const auto& config = committer_->snapshot().metadata().configuration;
  auto widening = config.find(delta::kEnableTypeWideningProperty);
  evolver_->SetTable(known_table_, widening != config.end() && widening->second != "true");
  if (options_.decoder_factory) {
    FERRY_RETURN_IF_ERROR(SwitchInput(evolver_->table_input()));
  }
  evolver_->OpenBatch(input_schema_);
  return StartSource();
}

// ---- Pipeline thread: lag, heads, the loop ----

void Pipeline::SetLag(const PartitionState& state, double messages) {
  metrics_->Position("ferry_lag_messages", "Head minus committed position", state.key)
      ->Set(messages);
  // In seconds: the age of the last committed message while messages wait behind it (burrow's
  // time lag); 0 when caught up or when the broker gives no timestamps.
  double seconds = 0;
  if (messages > 0 && state.committed_timestamp_us > 0) {
    seconds = std::max(0.0, static_cast<double>(WallMicros() - state.committed_timestamp_us) / 1e6);
  }
  metrics_
      ->Position("ferry_lag_seconds", "Age of the last committed message while lagging", state.key)
      ->Set(seconds);
}

void Pipeline::UpdateHeads() {
  Result<std::vector<source::PartitionHead>> heads = source_->Heads();
  last_heads_ = Clock::now();
  if (!heads.ok()) {
    FERRY_LOG_DEBUG("pipeline {}: broker heads: {}", options_.id, heads.status().ToString());
    if (heads.status().code() == StatusCode::kUnavailable) {
      SetBrokerReachable(false, heads.status());
    }
    return;
  }
  SetBrokerReachable(true, Status::OK());
  bool all_known = true;
  for (auto& [p, state] : partitions_) {
    if (int64_t pauses = source_->RateLimitPauses(p); pauses > state.rate_limit_pauses) {
      metrics_
          ->PartitionCounter("ferry_rate_limit_pauses_total",
                             "Times max_rate_per_partition held the partition back", state.key)
          ->Increment(static_cast<double>(pauses - state.rate_limit_pauses));
      state.rate_limit_pauses = pauses;
    }
    const std::string& key = state.key;  // clang 14 cannot capture a structured binding
    auto head = std::find_if(heads->begin(), heads->end(),
                             [&](const source::PartitionHead& h) { return h.key == key; });
    if (head == heads->end()) {
      all_known = all_known && state.caught_up_at.has_value();
      continue;
    }
    if (!head->last_position) {
      // The broker answered and holds nothing for the partition (or did not answer: then the
      // first position is unknown too).
      if (head->first_position) {
        last_contact_ = last_heads_;
      }
      if (!state.caught_up_at) {
        state.caught_up_at = -1;
      }
      continue;
    }
    last_contact_ = last_heads_;
    int64_t last = *head->last_position;
    if (!state.caught_up_at) {
      state.caught_up_at = last;
    }
    metrics_->Position("ferry_broker_head_position", "Last position the broker holds", state.key)
        ->Set(static_cast<double>(last));
    int64_t committed = state.committed.value_or(head->first_position.value_or(0) - 1);
    SetLag(state, static_cast<double>(std::max<int64_t>(0, last - committed)));
  }
  heads_known_ = all_known;
}

Status Pipeline::CheckMaxWait() const {
  if (!options_.until_caught_up || options_.max_wait.count() <= 0 ||
      Clock::now() - last_contact_ < options_.max_wait) {
    return Status::OK();
  }
  const auto waited =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - last_contact_).count();
  return Unavailable(
      "pipeline {}: no contact with the broker for {} s (max wait {} ms): {} partition(s) "
      "assigned, broker heads {}; last source error: {}. The run stops without being caught up; "
      "what was read is committed",
      options_.id, waited, options_.max_wait.count(), partitions_.size(),
      heads_known_ ? "known" : "not known",
      last_source_error_.empty() ? "none" : last_source_error_);
}

bool Pipeline::CaughtUp() const {
  if (partitions_.empty()) {
    return false;
  }
  for (const auto& [p, state] : partitions_) {
    if (!state.caught_up_at || state.delivered.value_or(-1) < *state.caught_up_at) {
      return false;
    }
  }
  return true;
}

void Pipeline::SetBrokerReachable(bool reachable, const Status& why) {
  if (reachable != broker_unreachable_) {
    return;  // no change: the journal is told only of transitions
  }
  broker_unreachable_ = !reachable;
  metrics_->journal->SetState(
      options_.id,
      reachable ? metrics::PipelineState::kRunning : metrics::PipelineState::kWaitingForBroker,
      reachable ? std::string_view() : why.message());
}

Status Pipeline::Run(StopSignal* stop) {
  Status result = RunLoop(stop);
  if (result.ok() && !stop->abandon()) {
    // Every batch is committed and the queue idle: the checkpoint due at the last commit, here
    // on the pipeline thread while a second signal can still abandon the process.
    committer_->FinishCheckpoints();
  }
  if (result.ok() || result.code() == StatusCode::kCancelled) {
    metrics_->journal->SetState(options_.id, metrics::PipelineState::kStopped);
  } else {
    metrics_->journal->SetState(options_.id, metrics::PipelineState::kFailed, result.ToString());
  }
  return result;
}

Status Pipeline::RunLoop(StopSignal* stop) {
  stop_ = stop;
  metrics_->journal->SetState(options_.id, metrics::PipelineState::kStarting);
  FERRY_RETURN_IF_ERROR(committer_->LoadDedupIndex());
  FERRY_RETURN_IF_ERROR(StartSource());
  metrics_->up->Set(1);
  metrics_->journal->SetState(options_.id, metrics::PipelineState::kRunning);
  std::vector<source::Message> messages;
  Status result;
  last_contact_ = Clock::now();
  while (true) {
    if (stop->abandon()) {
      // The batch in flight sees the same signal and gives up between attempts.
      bool open = !batch_last_.empty();
      result = Settle(/*wait=*/true);
      if (result.ok() && open) {
        result = Cancelled(
            "pipeline {}: stopped with {} rows not committed (they are read again at the next "
            "start)",
            options_.id, batch_.num_rows());
      }
      break;
    }
    if (stop->stopping() || (options_.until_caught_up && CaughtUp())) {
      result = Flush();
      if (result.ok() && options_.until_caught_up && !stop->stopping() && !CaughtUp()) {
        continue;  // fenced: the partitions start over
      }
      break;
    }
    size_t room = static_cast<size_t>(std::max<int64_t>(1, options_.max_rows - batch_.num_rows()));
    std::chrono::milliseconds timeout = options_.poll_timeout;
    if (!batch_last_.empty()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          options_.max_latency - (Clock::now() - batch_opened_));
      timeout = std::clamp(left, std::chrono::milliseconds(0), timeout);
    }
    positions_fresh_ = false;
    Status st = source_->Poll(room, timeout, &messages);
    if (!st.ok() && st.code() != StatusCode::kUnavailable) {
      result = st.WithContext("pipeline {}", options_.id);
      break;
    }
    if (int64_t limited = source_->RateLimitedMicros(); limited > rate_limited_us_) {
      metrics_->rate_limited->Increment(static_cast<double>(limited - rate_limited_us_) / 1e6);
      rate_limited_us_ = limited;
    }
    if (!st.ok()) {
      metrics_->unavailable->Increment();
      FERRY_LOG_DEBUG("pipeline {}: {}", options_.id, st.ToString());
      last_source_error_ = st.message();
      SetBrokerReachable(false, st);
    }
    if (!messages.empty()) {
      last_contact_ = Clock::now();
      SetBrokerReachable(true, st);
    }
    if (Status fp = FERRY_FAILPOINT("pipeline.after_poll"); !fp.ok()) {
      // What was polled is not in the batch: start the partitions over from the table, once the
      // batches in flight are settled.
      result = Settle(/*wait=*/true);
      if (result.ok()) {
        result = Fence(fp);
      }
      if (!result.ok()) {
        break;
      }
      continue;
    }
    Status bad;
    for (const source::Message& m : messages) {
      bad = Take(m);
      if (bad.code() == StatusCode::kResourceExhausted) {
        // The batch holds its limit of new columns: commit it, and the message opens the next.
        int64_t fences = fences_;
        bad = SubmitBatch();
        if (bad.ok() && fences != fences_) {
          break;  // fenced: the partitions start over from the table, this poll with them
        }
        if (bad.ok()) {
          bad = Take(m);
        }
      }
      if (!bad.ok()) {
        break;
      }
    }
    for (source::Gap& gap : source_->TakeGaps()) {
      metrics_->gaps->Increment();
      metrics_->gap_messages->Increment(
          static_cast<double>(gap.last_position - gap.first_position + 1));
      FERRY_LOG_WARN("pipeline {}: {} positions {}..{} were skipped: {}", options_.id, gap.key,
                     gap.first_position, gap.last_position, gap.reason);
      batch_gaps_.push_back(std::move(gap));
    }
    if (!bad.ok()) {
      // The rows before the bad message are committed; nothing after it.
      Status committed = Flush();
      result = committed.ok() ? bad : committed;
      break;
    }
    if ((!heads_known_ && options_.until_caught_up) ||
        Clock::now() - last_heads_ >= options_.heads_interval) {
      UpdateHeads();
    }
    if (Status waited = CheckMaxWait(); !waited.ok()) {
      // What was read is committed; the one-shot run then reports why it stopped.
      Status committed = Flush();
      result = committed.ok() ? waited : committed;
      break;
    }
    if (TriggerFired()) {
      result = SubmitBatch();
      if (!result.ok()) {
        break;
      }
    }
    // Acks of the batches committed meanwhile.
    result = Settle(/*wait=*/false);
    if (!result.ok()) {
      break;
    }
  }
  // Nothing stays in flight past Run(): the outcomes are waited for (and acked when committed).
  Status settled = Settle(/*wait=*/true);
  if (result.ok()) {
    result = settled;
  }
  CloseSource();
  metrics_->up->Set(0);
  return result;
}

}  // namespace ferry::pipeline
