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
#include "ferry/pipeline/append_commit.h"
#include "ferry/pipeline/upsert_commit.h"

namespace ferry::pipeline {

using Clock = std::chrono::steady_clock;
using metrics::Labels;

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
  // The commit strategy (commit_strategy.h), chosen once here.
  std::unique_ptr<CommitStrategy> strategy;
  if (options.upsert) {
    if (options.dedup || !options.transform.where.empty()) {
      return InvalidArgument(
          "pipeline {}: an upsert pipeline cannot dedup or filter (`where`): it replaces rows by "
          "key",
          options.id);
    }
    UpsertSpec spec = *options.upsert;
    if (spec.index_name.empty()) {
      spec.index_name = options.id;
    }
    if (spec.key_partitions.empty()) {
      spec.key_partitions =
          KeyDerivedPartitions(*snapshot.schema(), snapshot.partition_columns(), spec.key,
                               options.transform.columns, options.transform.time_zone);
    }
    spec.key_partition_definitions = KeyPartitionDefinitions(
        spec.key_partitions, options.transform.columns, options.transform.time_zone);
    if (registry != nullptr) {
      spec.metrics = KeyIndexSeries(registry, options.id, options.metrics_table);
    }
    Result<std::unique_ptr<UpsertCommit>> upsert = UpsertCommit::Create(*snapshot.schema(), spec);
    if (!upsert.ok()) {
      return upsert.status().WithContext("{}: pipeline {}: table {}", options.upsert->origin,
                                         options.id, table->Describe());
    }
    strategy = std::move(*upsert);
  } else {
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
    strategy = std::make_unique<AppendCommit>(options.id, std::move(dedup));
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
  std::unique_ptr<Pipeline> pipeline(
      new Pipeline(std::move(options), std::move(table), std::move(snapshot),
                   std::move(source_factory), std::move(decoder), std::move(*metadata),
                   std::move(*stage), std::move(strategy), std::move(evolver), registry));
  FERRY_RETURN_IF_ERROR(pipeline->intake_.BuildKeyDecoder());
  // The table's column rules (table_rules.h); an expression ferry cannot evaluate stops here.
  const delta::Snapshot& created = pipeline->committer_->snapshot();
  FERRY_RETURN_IF_ERROR(
      pipeline->intake_.SetTableRules(created.protocol(), created.metadata().configuration));
  return pipeline;
}

Pipeline::Pipeline(PipelineOptions options, std::unique_ptr<delta::Table> table,
                   delta::Snapshot snapshot, SourceFactory source_factory,
                   std::unique_ptr<transform::Decoder> decoder, MetadataWriter metadata,
                   std::unique_ptr<TransformStage> stage, std::unique_ptr<CommitStrategy> strategy,
                   std::unique_ptr<SchemaEvolver> evolver, metrics::Registry* registry)
    : options_(std::move(options)),
      source_factory_(std::move(source_factory)),
      metrics_(std::make_unique<PipelineMetrics>(registry, options_.id, options_.metrics_table)),
      known_table_(snapshot.schema()),
      book_(options_.id, metrics_.get()),
      open_(stage->input_schema()),
      intake_(&options_, std::move(decoder), std::move(metadata), std::move(evolver),
              stage->input_schema(), &open_, metrics_.get(), table->Describe()),
      limits_{.max_rows = options_.max_rows,
              .max_bytes = options_.max_bytes,
              .max_latency = options_.max_latency},
      committer_(std::make_unique<BatchCommitter>(
          BatchCommitterOptions{.id = options_.id,
                                .writer = options_.writer,
                                .commit = options_.commit,
                                .initial_backoff = options_.initial_backoff,
                                .max_backoff = options_.max_backoff,
                                .transform = options_.transform,
                                .schema_evolution = options_.schema_evolution,
                                .evolution_limits = options_.evolution_limits},
          std::move(table), std::move(snapshot), std::move(stage), std::move(strategy),
          metrics_->committer)),
      queue_(
          std::make_unique<CommitQueue>(static_cast<size_t>(std::max(1, options_.max_in_flight)))) {
  metrics_->version->Set(static_cast<double>(committer_->snapshot().version()));
}

Pipeline::~Pipeline() {
  // Run() returns with nothing in flight; the queue is idle here.
  CloseSource();
  if (options_.shared_batch_budget != nullptr) {
    options_.shared_batch_budget->Report(reported_batch_bytes_, 0);
  }
}

void Pipeline::ReportBatchBytes() {
  if (options_.shared_batch_budget == nullptr) {
    return;
  }
  const int64_t now = open_.empty() ? 0 : open_.byte_size();
  options_.shared_batch_budget->Report(reported_batch_bytes_, now);
  reported_batch_bytes_ = now;
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
  open_.KeepDeadLetters(std::make_shared<const columnar::Schema>(std::move(*expected)));
  committer_->SetDeadLetterTable(std::move(table), std::move(snapshot));
  return Status::OK();
}

// ---- Pipeline thread: sealing, outcomes, fencing ----

Status Pipeline::SubmitBatch() {
  if (open_.empty()) {
    return Status::OK();
  }
  const auto seal_start = Clock::now();
  if (queue_->full()) {
    FERRY_RETURN_IF_ERROR(HandleOutcome(queue_->Take()));
    if (open_.empty()) {
      return Status::OK();  // fenced: the open batch went with the one before it
    }
  }
  FERRY_LOG_DEBUG("pipeline {}: sealing {} rows ({} bytes) after waiting {:.1f} ms for the writer",
                  options_.id, open_.num_rows(), open_.byte_size(),
                  std::chrono::duration<double, std::milli>(Clock::now() - seal_start).count());
  std::unique_ptr<SealedBatch> sealed = open_.Seal();
  sealed->rules_key = intake_.batch_rules_key();
  book_.Seal(sealed.get());
  if (options_.seal_hook) {
    options_.seal_hook(sealed.get());
  }
  SealedBatch* batch = sealed.get();
  in_flight_.push_back(std::move(sealed));
  queue_->Submit([committer = committer_.get(), batch, stop = stop_] {
    return committer->Commit(batch, stop);
  });
  FERRY_RETURN_IF_ERROR(intake_.FollowTable());
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
  open_.Recycle(std::move(batch->rows));
  if (outcome.ok()) {
    AfterCommit(*batch);
    // Another writer may have changed the constraints: rows from now on are checked against
    // the table's (the open batch, if checked against others, is read again: Intake).
    if (batch->table_schema != nullptr) {
      FERRY_RETURN_IF_ERROR(
          intake_.SetTableRules(batch->table_protocol, batch->table_configuration));
    }
    if (batch->table_schema != nullptr && batch->table_schema != known_table_) {
      known_table_ = batch->table_schema;
      intake_.SetTable(known_table_, batch->widening_off);
      if (open_.empty()) {
        return intake_
            .FollowTable();  // the open batch is empty: decode into the table's schema now
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
  std::string summary;
  double batch_seconds = std::chrono::duration<double>(Clock::now() - batch.opened).count();
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
  }
  std::vector<source::CommittedPosition> positions = book_.Committed(batch);
  seal_lead_.Observe(batch.commit_seconds);
  limits_.max_latency = seal_lead_.Trigger(options_.max_latency);
  // The commit is counted before its rows: a scrape that sees every row sees its commit.
  metrics_->succeeded->Increment();
  metrics_->rows->Increment(static_cast<double>(batch.rows_written));
  metrics_->filtered->Increment(static_cast<double>(batch.filtered));
  metrics_->dedup_hits->Increment(static_cast<double>(batch.dedup_hits));
  metrics_->files->Increment(static_cast<double>(batch.files));
  metrics_->bytes->Increment(static_cast<double>(batch.bytes));
  metrics_->version->Set(static_cast<double>(batch.version));
  metrics_->batch_seconds->Observe(batch_seconds);
  metrics_->journal->RecordCommit(metrics_->journal_key, std::move(record));
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
        options_.id, why.message(), open_.num_rows());
  } else if (why.code() == StatusCode::kAborted) {
    metrics_->lost->Increment();
    metrics_->abandoned->Increment();
    FERRY_LOG_WARN(
        "pipeline {}: another writer committed positions of partitions in this batch ({}); "
        "dropping {} uncommitted rows and resuming every partition from the table",
        options_.id, why.message(), open_.num_rows());
  } else {
    FERRY_LOG_WARN(
        "pipeline {}: reading from the source failed ({}); dropping {} uncommitted rows and "
        "resuming every partition from the table",
        options_.id, why.ToString(), open_.num_rows());
  }
  metrics_->journal->RecordFence(
      metrics_->journal_key,
      {.time_ms = WallMillis(), .reason = why.ToString(), .rows_dropped = open_.num_rows()});
  open_.Clear();
  polled_.clear();
  next_polled_ = 0;
  CloseSource();
  book_.Clear();
  FERRY_RETURN_IF_ERROR(committer_->Reload());
  // Changes of the dropped batches are gone with them: decode into the table's schema.
  known_table_ = committer_->snapshot().schema();
  const auto& config = committer_->snapshot().metadata().configuration;
  auto widening = config.find(delta::kEnableTypeWideningProperty);
  FERRY_RETURN_IF_ERROR(
      intake_.ResetToTable(known_table_, widening != config.end() && widening->second != "true"));
  FERRY_RETURN_IF_ERROR(intake_.SetTableRules(committer_->snapshot().protocol(), config));
  return StartSource();
}

// ---- Pipeline thread: the loop ----

Status Pipeline::Run(StopSignal* stop) {
  Status result = RunLoop(stop);
  if (options_.shared_batch_budget != nullptr) {
    // Committed, or left for the next start: no longer part of a shared budget.
    options_.shared_batch_budget->Report(reported_batch_bytes_, 0);
    reported_batch_bytes_ = 0;
  }
  if (result.ok() && !stop->abandon()) {
    // Every batch is committed and the queue idle: the checkpoint due at the last commit, here
    // on the pipeline thread while a second signal can still abandon the process.
    committer_->FinishCheckpoints();
  }
  if (result.ok() || result.code() == StatusCode::kCancelled) {
    metrics_->journal->SetState(metrics_->journal_key, metrics::PipelineState::kStopped);
  } else {
    metrics_->journal->SetState(metrics_->journal_key, metrics::PipelineState::kFailed,
                                result.ToString());
  }
  return result;
}

bool Pipeline::TailSealDue() const {
  if (!options_.until_caught_up || options_.max_in_flight == 0 || queue_->full() ||
      open_.num_rows() < kMinTailSealRows) {
    return false;
  }
  // A small run (or a small batch) gains nothing from being cut in two.
  if (open_.num_rows() * 4 < limits_.max_rows && open_.byte_size() * 4 < limits_.max_bytes) {
    return false;
  }
  std::optional<int64_t> left = book_.Remaining();
  return left.has_value() && *left > 0 && *left <= open_.num_rows();
}

Status Pipeline::RunLoop(StopSignal* stop) {
  stop_ = stop;
  metrics_->journal->SetState(metrics_->journal_key, metrics::PipelineState::kStarting);
  FERRY_RETURN_IF_ERROR(committer_->LoadIndex());
  FERRY_RETURN_IF_ERROR(StartSource());
  metrics_->up->Set(1);
  metrics_->journal->SetState(metrics_->journal_key, metrics::PipelineState::kRunning);
  Status result;
  book_.NoteContact();
  while (true) {
    if (stop->abandon()) {
      // The batch in flight sees the same signal and gives up between attempts.
      bool open = !open_.empty();
      result = Settle(/*wait=*/true);
      if (result.ok() && open) {
        result = Cancelled(
            "pipeline {}: stopped with {} rows not committed (they are read again at the next "
            "start)",
            options_.id, open_.num_rows());
      }
      break;
    }
    if (stop->stopping() || (options_.until_caught_up && book_.CaughtUp())) {
      result = Flush();
      if (result.ok() && options_.until_caught_up && !stop->stopping() && !book_.CaughtUp()) {
        continue;  // fenced: the partitions start over
      }
      break;
    }
    if (next_polled_ < polled_.size()) {
      // Messages wait for the decoder (a schema registry that did not answer): no poll until
      // they are taken, so nothing more is held than one poll.
      auto retry =
          std::chrono::duration_cast<std::chrono::milliseconds>(retry_decode_at_ - Clock::now());
      stop->WaitFor(std::clamp(retry, std::chrono::milliseconds(0), PollTimeout()));
    } else if (result = PollSource(); !result.ok()) {
      break;
    } else if (Status fp = FERRY_FAILPOINT("pipeline.after_poll"); !fp.ok()) {
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
    Status bad = TakePolled();
    if (source_ == nullptr && bad.ok()) {
      continue;  // fenced, and a stop came while the source restarted: the loop ends above
    }
    for (source::Gap& gap : source_ ? source_->TakeGaps() : std::vector<source::Gap>()) {
      metrics_->gaps->Increment();
      metrics_->gap_messages->Increment(
          static_cast<double>(gap.last_position - gap.first_position + 1));
      FERRY_LOG_WARN("pipeline {}: {} positions {}..{} were skipped: {}", options_.id, gap.key,
                     gap.first_position, gap.last_position, gap.reason);
      open_.AddGap(std::move(gap));
    }
    if (!bad.ok()) {
      // The rows before the bad message are committed; nothing after it.
      Status committed = Flush();
      result = committed.ok() ? bad : committed;
      break;
    }
    if (source_ != nullptr && book_.HeadsDue(options_.until_caught_up, options_.heads_interval)) {
      UpdateHeads();
    }
    if (Status waited = CheckMaxWait(); !waited.ok()) {
      // What was read is committed; the one-shot run then reports why it stopped.
      Status committed = Flush();
      result = committed.ok() ? waited : committed;
      break;
    }
    ReportBatchBytes();
    const bool seal_now =
        polled_.empty() && !open_.empty() && options_.seal_now && options_.seal_now();
    if (open_.TriggerFired(limits_) || TailSealDue() ||
        (options_.shared_batch_budget != nullptr &&
         options_.shared_batch_budget->ShouldSeal(reported_batch_bytes_)) ||
        seal_now) {
      result = SubmitBatch();
      ReportBatchBytes();
      if (!result.ok()) {
        break;
      }
      if (seal_now) {
        // Nothing more is coming: the commit's acknowledgement is waited for here, not held
        // until the next poll returns (a routed run's end waits for it).
        result = Settle(/*wait=*/true);
        if (!result.ok()) {
          break;
        }
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
