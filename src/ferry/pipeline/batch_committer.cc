#include "ferry/pipeline/batch_committer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include <nlohmann/json.hpp>

#include "ferry/base/check.h"
#include "ferry/base/clock.h"
#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"
#include "ferry/delta/column_rules.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/type_widening.h"
#include "ferry/parquet/file_series.h"
#include "ferry/pipeline/schema_evolver.h"
#include "ferry/pipeline/table_rules.h"

namespace ferry::pipeline {

using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Errors no retry can fix: the pipeline stops with them.
bool IsFatal(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotSupported:
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
      return true;
    default:
      return false;
  }
}

// The table's files, one batch after another, share their dictionary verdicts
// (parquet/file_series.h): a unique column is not hashed again in every file.
BatchCommitterOptions WithFileSeries(BatchCommitterOptions options) {
  if (options.writer.parquet.series == nullptr) {
    options.writer.parquet.series = std::make_shared<parquet::FileSeries>();
  }
  return options;
}

std::string FormatDuration(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? fmt::format("{}s", d.count() / 1000)
                               : fmt::format("{}ms", d.count());
}

}  // namespace

BatchCommitter::BatchCommitter(BatchCommitterOptions options, std::unique_ptr<delta::Table> table,
                               delta::Snapshot snapshot, std::unique_ptr<TransformStage> stage,
                               std::unique_ptr<CommitStrategy> strategy, Metrics metrics)
    : options_(WithFileSeries(std::move(options))),
      metrics_(metrics),
      table_(std::move(table)),
      snapshot_(std::move(snapshot)),
      stage_(std::move(stage)),
      stage_schema_(snapshot_.schema()),
      strategy_(std::move(strategy)) {
  FERRY_CHECK(strategy_ != nullptr);
  main_commit_ = options_.commit;
  if (main_commit_.checkpoint) {
    // Checkpoints of the main table off the commit path (delta/checkpointer.h): at ten commits
    // a second they would otherwise hold up every tenth batch for as long as they take, and
    // they grow with the table. The dead-letter table, committed rarely, keeps them inline.
    main_commit_.checkpoint = false;
    checkpointer_ = std::make_unique<delta::BackgroundCheckpointer>(*table_);
    checkpointer_->Offer(snapshot_);
  }
  PublishTable(nullptr);
}

BatchCommitter::~BatchCommitter() {
  if (checkpointer_ != nullptr) {
    checkpointer_->Finish(nullptr);  // waits for a running one; the next start writes one due
    ReportCheckpoints();
  }
}

void BatchCommitter::FinishCheckpoints() {
  if (checkpointer_ != nullptr) {
    checkpointer_->Finish(&snapshot_);
    const delta::CheckpointOutcome* written = ReportCheckpoints();
    if (written != nullptr) {
      PublishTable(written);
    }
  }
}

const delta::CheckpointOutcome* BatchCommitter::ReportCheckpoints() {
  finished_checkpoints_ = checkpointer_->TakeFinished();
  const delta::CheckpointOutcome* newest = nullptr;
  for (const delta::CheckpointOutcome& done : finished_checkpoints_) {
    if (done.status.ok()) {
      metrics_.checkpoint_seconds->Observe(static_cast<double>(done.micros) / 1e6);
      newest = &done;
    } else {
      FERRY_LOG_WARN(
          "pipeline {}: checkpoint of {} at version {} failed (the next one due is "
          "written instead): {}",
          options_.id, table_->Describe(), done.version, done.status.ToString());
    }
  }
  return newest;
}

void BatchCommitter::PublishTable(const delta::CheckpointOutcome* checkpoint, int64_t small_added) {
  if (metrics_.journal == nullptr) {
    return;
  }
  Clock::time_point now = Clock::now();
  if (small_files_counted_ == Clock::time_point{} ||
      now - small_files_counted_ >= kTableScanInterval) {
    // O(files): at most every kTableScanInterval, on the writer thread after a commit.
    small_files_ = 0;
    for (const auto& [key, add] : snapshot_.files()) {
      small_files_ += add.size < metrics::Journal::kSmallFileBytes ? 1 : 0;
    }
    small_files_counted_ = now;
  } else {
    small_files_ += small_added;  // files another writer removed are seen at the next recount
  }
  metrics::TableRecord table{.version = snapshot_.version(),
                             .num_files = snapshot_.num_files(),
                             .size_bytes = snapshot_.size_bytes(),
                             .small_files = small_files_,
                             .checkpoint_version = snapshot_.newest_checkpoint_version(),
                             .time_ms = WallMillis()};
  if (checkpoint != nullptr) {
    table.checkpoint_version = checkpoint->version;
    table.checkpoint_ms = checkpoint->wall_ms;
  }
  metrics_.journal->SetTable(metrics_.journal_key, table);
}

void BatchCommitter::SetDeadLetterTable(std::unique_ptr<delta::Table> table,
                                        delta::Snapshot snapshot) {
  dead_table_ = std::move(table);
  dead_snapshot_ = std::move(snapshot);
}

// ---- Pipeline thread (the queue idle) ----

Status BatchCommitter::LoadIndex() {
  return strategy_->Load(*table_, snapshot_);
}

Status BatchCommitter::Reload() {
  FERRY_ASSIGN_OR_RETURN(snapshot_, table_->LoadSnapshot());
  return LoadIndex();
}

Result<std::optional<int64_t>> BatchCommitter::ReadPosition(const std::string& app_id,
                                                            bool refresh) {
  if (refresh) {
    FERRY_ASSIGN_OR_RETURN(snapshot_, table_->Update(snapshot_));
  }
  return snapshot_.position(app_id);
}

Result<std::optional<int64_t>> BatchCommitter::ReadDeadLetterPosition(const std::string& app_id,
                                                                      bool refresh) {
  if (refresh) {
    FERRY_ASSIGN_OR_RETURN(dead_snapshot_, dead_table_->Update(dead_snapshot_));
  }
  return dead_snapshot_.position(app_id);
}

// ---- Writer thread ----

Status BatchCommitter::CommitDeadLetters(SealedBatch* batch) {
  if (batch->dead_committed || batch->dead.num_rows() == 0) {
    return Status::OK();
  }
  // A previous attempt may have landed with its reply lost.
  FERRY_ASSIGN_OR_RETURN(dead_snapshot_, dead_table_->Update(dead_snapshot_));
  bool landed = true;
  for (const auto& [p, part] : batch->partitions) {
    landed = landed && (!part.has_dead || dead_snapshot_.position(part.dead_app_id) == part.last);
  }
  for (int replans = 0; !landed; ++replans) {
    bool metadata_changed = false;
    Status st = WriteDeadLetters(batch, &metadata_changed);
    if (st.ok()) {
      break;
    }
    if (!metadata_changed || replans >= kMaxReplans) {
      return st;
    }
    FERRY_ASSIGN_OR_RETURN(dead_snapshot_, dead_table_->Update(dead_snapshot_));
  }
  batch->dead_committed = true;
  // Between the two commits: a crash here must leave the counts unchanged after a restart.
  return FERRY_FAILPOINT("pipeline.after_dead_letter_commit");
}

Status BatchCommitter::WriteDeadLetters(SealedBatch* batch, bool* metadata_changed) {
  *metadata_changed = false;
  // The dead-letter table evolves with its pipeline: a table made by an older ferry (or by hand)
  // gets the columns it lacks; columns it has beyond ferry's stay null.
  std::optional<delta::SchemaChangeCommit> change;
  if (!batch->dead.schema().Equals(*dead_snapshot_.schema())) {
    Result<delta::SchemaMerge> merge =
        delta::MergeSchema(*dead_snapshot_.schema(), batch->dead.schema(),
                           {.mode = options_.schema_evolution,
                            .limits = options_.evolution_limits,
                            .partition_columns = dead_snapshot_.partition_columns()});
    if (!merge.ok()) {
      return InvalidArgument(
          "pipeline {}: the dead-letter table {} cannot take ferry's dead letters: {}", options_.id,
          dead_table_->Describe(), merge.status().message());
    }
    columnar::SchemaPtr schema = dead_snapshot_.schema();
    if (merge->changed()) {
      FERRY_ASSIGN_OR_RETURN(change, delta::PlanSchemaChange(dead_snapshot_, *merge));
      schema = change->schema;
    }
    FERRY_RETURN_IF_ERROR(ConformBatch(&batch->dead, schema));
  }
  delta::TableWriterOptions writer_options = options_.writer;
  writer_options.parquet.series = nullptr;  // other columns than the main table's
  if (change) {
    writer_options.schema = change->schema;
  }
  FERRY_ASSIGN_OR_RETURN(auto writer,
                         delta::TableWriter::Create(*dead_table_, dead_snapshot_, writer_options));
  FERRY_RETURN_IF_ERROR(writer->Write(batch->dead));
  FERRY_ASSIGN_OR_RETURN(std::vector<delta::AddFile> adds, writer->Finish());
  delta::Transaction txn(*dead_table_, dead_snapshot_, options_.commit);
  txn.AddFiles(std::move(adds));
  for (const auto& [p, part] : batch->partitions) {
    if (part.has_dead) {
      txn.SetPosition(part.dead_app_id, part.last);
      txn.ExpectPosition(part.dead_app_id, part.dead_expected);
    }
  }
  if (change) {
    txn.SetMetadata(change->metadata);
    if (change->protocol) {
      txn.SetProtocol(*change->protocol);
    }
  }
  txn.SetOperation("STREAMING UPDATE", {{"outputMode", "Append"},
                                        {"queryId", options_.id + "/dead_letter"},
                                        {"epochId", std::to_string(epoch_)}});
  Result<delta::CommitResult> result = txn.Commit();
  if (!result.ok()) {
    *metadata_changed = result.status().code() == StatusCode::kAborted &&
                        txn.conflict() == delta::Conflict::kMetadataChanged;
    return result.status();
  }
  dead_snapshot_ = std::move(result->snapshot);
  metrics_.dead_rows->Increment(static_cast<double>(batch->dead.num_rows()));
  FERRY_LOG_INFO("pipeline {}: {} bad records committed to the dead-letter table {} (version {})",
                 options_.id, batch->dead.num_rows(), dead_table_->Describe(),
                 dead_snapshot_.version());
  return Status::OK();
}

Status BatchCommitter::RefreshStage() {
  if (stage_schema_ == snapshot_.schema()) {
    return Status::OK();
  }
  const columnar::SchemaPtr& table = snapshot_.schema();
  Result<std::unique_ptr<TransformStage>> stage = TransformStage::Create(
      InputSchema(*table, options_.transform.columns), options_.transform, table.get());
  if (!stage.ok()) {
    return stage.status().WithContext(
        "pipeline {}: the schema of {} (version {}) no longer fits the derived columns",
        options_.id, table_->Describe(), snapshot_.version());
  }
  stage_ = std::move(*stage);
  stage_schema_ = table;
  return Status::OK();
}

Result<BatchCommitter::Aligned> BatchCommitter::Align(SealedBatch* batch) {
  FERRY_RETURN_IF_ERROR(RefreshStage());
  const columnar::SchemaPtr& rows = batch->rows.schema_ptr();
  {
    Result<delta::ColumnRules> rules =
        delta::ReadColumnRules(snapshot_.protocol(), snapshot_.metadata(),
                               *InputSchema(*snapshot_.schema(), options_.transform.columns));
    if (!rules.ok()) {
      return rules.status().WithContext("pipeline {}: {}", options_.id, table_->Describe());
    }
    const std::string& checked = batch->rules_key;
    if ((checked.empty() && !rules->empty()) || (!checked.empty() && checked != rules->Key())) {
      batch->schema_rewind = true;
      return Aborted(
          "RulesChanged: the column rules of {} at version {} (constraints, generation "
          "expressions, defaults) are not those the batch's rows were checked against; the batch "
          "is read again and checked against the table's",
          table_->Describe(), snapshot_.version());
    }
  }
  if (rows == stage_->input_schema() || rows->Equals(*stage_->input_schema())) {
    return Aligned{.stage = stage_.get(), .schema = snapshot_.schema()};  // the steady state
  }
  // The batch evolved, or the table did: merge the batch's schema into the table's.
  auto rewind = [&](const Status& why) {
    batch->schema_rewind = true;
    return Aborted(
        "SchemaConflict: the batch's schema ({}) does not fit the schema of {} at version {}: "
        "{}; the batch is read again and decoded against the table's schema",
        rows->ToString(), table_->Describe(), snapshot_.version(), why.message());
  };
  // Another writer added top-level columns (Spark's ALTER TABLE ADD COLUMNS) after this batch
  // was decoded against the older schema: its decoder dropped those fields of the messages, so
  // committing it would write nulls where the messages have values. Read it again instead,
  // decoded against the new schema (once per change: the next batches know the columns).
  for (const std::string& name : foreign_columns_) {
    if (!rows->FieldIndex(name)) {
      std::string column = name;
      foreign_columns_.clear();
      return rewind(
          NotFound("column `{}` was added by another writer after the batch was decoded", column));
    }
  }
  Result<std::unique_ptr<TransformStage>> natural =
      TransformStage::Create(rows, options_.transform);
  if (!natural.ok()) {
    return rewind(natural.status());
  }
  Result<delta::SchemaMerge> merge =
      delta::MergeSchema(*snapshot_.schema(), *(*natural)->table_schema(),
                         {.mode = options_.schema_evolution,
                          .limits = options_.evolution_limits,
                          .partition_columns = snapshot_.partition_columns()});
  if (!merge.ok()) {
    return rewind(merge.status());
  }
  Aligned out;
  columnar::SchemaPtr table = snapshot_.schema();
  if (merge->changed()) {
    Result<delta::SchemaChangeCommit> change = delta::PlanSchemaChange(snapshot_, *merge);
    if (!change.ok()) {
      return rewind(change.status());
    }
    table = change->schema;
    out.change = std::move(*change);
    for (const delta::SchemaChange& c : merge->changes) {
      out.changes.push_back(c.Describe());
    }
  }
  columnar::SchemaPtr input = InputSchema(*table, options_.transform.columns);
  if (Status st = ConformBatch(&batch->rows, input); !st.ok()) {
    return rewind(st);  // the rows are intact: ConformBatch moves nothing unless all conform
  }
  if (!merge->changed()) {
    out.stage = stage_.get();
    out.schema = snapshot_.schema();
    return out;
  }
  Result<std::unique_ptr<TransformStage>> stage =
      TransformStage::Create(input, options_.transform, table.get());
  if (!stage.ok()) {
    return rewind(stage.status());
  }
  evolved_stage_ = std::move(*stage);
  out.stage = evolved_stage_.get();
  out.schema = table;
  return out;
}

Status BatchCommitter::PrepareRows(SealedBatch* batch, PreparedRows* prepared) {
  PreparedRows& out = *prepared;
  FERRY_ASSIGN_OR_RETURN(out.aligned, Align(batch));
  out.rows = &batch->rows;
  batch->filtered = 0;
  if (!out.aligned.stage->empty()) {
    out.transformed = out.aligned.stage->Apply(batch->rows, &batch->filtered);
    out.rows = &out.transformed;
  }
  FERRY_ASSIGN_OR_RETURN(
      delta::ColumnRules rules,
      delta::ReadColumnRules(snapshot_.protocol(), snapshot_.metadata(), *out.aligned.schema));
  if (!rules.identity.empty() && out.rows->num_rows() > 0) {
    // On a copy: a retry must see the rows' own (null) values again.
    std::vector<int64_t> all(static_cast<size_t>(out.rows->num_rows()));
    std::iota(all.begin(), all.end(), 0);
    out.with_identity = out.rows->Take(all);
    FERRY_ASSIGN_OR_RETURN(out.identity_schema,
                           AssignIdentityValues(rules, *out.aligned.schema, &out.with_identity));
    out.rows = &out.with_identity;
  }
  return Status::OK();
}

void BatchCommitter::AddPositionsAndMetadata(const SealedBatch& batch, const PreparedRows& prepared,
                                             delta::Transaction* txn) const {
  for (const auto& [p, part] : batch.partitions) {
    txn->SetPosition(part.app_id, part.last);
    txn->ExpectPosition(part.app_id, part.expected);
  }
  for (const auto& [app_id, position] : batch.extra_txns) {
    txn->SetPosition(app_id, position);
  }
  delta::StringMap parameters = {{"queryId", options_.id}, {"epochId", std::to_string(epoch_)}};
  strategy_->DescribeCommit(&parameters);
  if (!batch.gaps.empty()) {
    nlohmann::json gaps = nlohmann::json::array();
    for (const source::Gap& gap : batch.gaps) {
      gaps.push_back({{"partition", gap.key},
                      {"first", gap.first_position},
                      {"last", gap.last_position},
                      {"reason", gap.reason}});
    }
    parameters["gaps"] = gaps.dump();
  }
  const Aligned& aligned = prepared.aligned;
  if (aligned.change) {
    // One metaData (and a protocol when it changes) in the commit of the data that needs it.
    txn->SetMetadata(aligned.change->metadata);
    if (aligned.change->protocol) {
      txn->SetProtocol(*aligned.change->protocol);
    }
    parameters["schemaChanges"] = fmt::format("{}", fmt::join(aligned.changes, "; "));
  }
  txn->SetOperation("STREAMING UPDATE", std::move(parameters));
}

Status BatchCommitter::TransformWriteCommit(SealedBatch* batch, bool* replan) {
  *replan = false;
  Clock::time_point start = Clock::now();
  // Step 3: the rows to commit, in the table's schema of this attempt.
  PreparedRows prepared;  // `rows` points into it: never moved
  FERRY_RETURN_IF_ERROR(PrepareRows(batch, &prepared));
  Aligned& aligned = prepared.aligned;
  delta::TableWriterOptions writer_options = options_.writer;
  if (aligned.change) {
    writer_options.schema = aligned.schema;
  }
  // Step 4: the strategy's files.
  FERRY_ASSIGN_OR_RETURN(
      CommitFiles files,
      strategy_->Plan(
          *table_, snapshot_,
          RowsToCommit{.rows = *prepared.rows, .ops = batch->ops, .filtered = batch->filtered},
          writer_options));
  batch->rows_written = files.rows_written;
  batch->dedup_hits = files.skipped;
  batch->upsert_deletes = files.deletes;
  batch->upsert_replaced = files.replaced;
  batch->files = static_cast<int64_t>(files.adds.size());
  batch->bytes = files.bytes;
  int64_t small_added = 0;
  for (const delta::AddFile& add : files.adds) {
    small_added += add.deletion_vector || add.size >= metrics::Journal::kSmallFileBytes ? 0 : 1;
  }
  delta::Transaction txn(*table_, snapshot_, main_commit_);
  if (files.preserves_row_ids) {
    txn.PreserveRowTracking();
  }
  txn.AddFiles(std::move(files.adds));
  for (delta::RemoveFile& remove : files.removes) {
    txn.Remove(std::move(remove));
  }
  Clock::time_point written = Clock::now();
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("pipeline.before_commit"));

  // Step 5.
  AddPositionsAndMetadata(*batch, prepared, &txn);
  if (prepared.identity_schema != nullptr) {
    // The raised identity high-water marks, in the commit of the values (PROTOCOL.md "Identity
    // Columns"): any other writer's metaData in between is a conflict (step 5: assign again).
    delta::Metadata metadata = aligned.change ? aligned.change->metadata : snapshot_.metadata();
    FERRY_ASSIGN_OR_RETURN(metadata.schema_string, delta::SchemaToJson(*prepared.identity_schema));
    txn.SetMetadata(std::move(metadata));
    if (!aligned.change) {
      txn.SetIdentityOnlyMetadataUpdate();
    }
  }
  Result<delta::CommitResult> committed = txn.Commit();
  if (!committed.ok()) {
    const bool aborted = committed.status().code() == StatusCode::kAborted;
    *replan = aborted && (txn.conflict() == delta::Conflict::kMetadataChanged ||
                          strategy_->Replans(txn.conflict()));
    return committed.status();
  }
  delta::CommitResult result = std::move(*committed);
  FERRY_LOG_DEBUG("pipeline {}: version {}: transform and write {:.0f} ms, commit {:.0f} ms",
                  options_.id, result.version, Seconds(written - start) * 1e3,
                  Seconds(Clock::now() - written) * 1e3);
  snapshot_ = std::move(result.snapshot);
  batch->version = result.version;
  batch->schema_changes = std::move(aligned.changes);
  if (aligned.change) {
    metrics_.schema_changes->Increment();
    FERRY_LOG_INFO("pipeline {}: version {} of {} changes the schema: {}", options_.id,
                   result.version, table_->Describe(), fmt::join(batch->schema_changes, "; "));
  }
  FERRY_RETURN_IF_ERROR(strategy_->Committed(*table_, snapshot_, result.version));
  batch->commit_seconds = Seconds(Clock::now() - start);
  metrics_.commit_seconds->Observe(batch->commit_seconds);
  const delta::CheckpointOutcome* checkpoint = nullptr;
  if (checkpointer_ != nullptr) {
    checkpoint = ReportCheckpoints();  // those finished since the last commit
    checkpointer_->Offer(snapshot_);
  }
  PublishTable(checkpoint, small_added);
  return Status::OK();
}

Status BatchCommitter::WriteAndCommit(SealedBatch* batch) {
  FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("pipeline.before_write"));
  // Dead letters first: once they are committed with their positions, the main commit may fail
  // or crash without losing or repeating them.
  FERRY_RETURN_IF_ERROR(CommitDeadLetters(batch));
  while (true) {
    bool replan = false;
    Status st = TransformWriteCommit(batch, &replan);
    if (!replan || batch->replans >= kMaxReplans) {
      FERRY_RETURN_IF_ERROR(st);
      break;
    }
    // Another writer changed the table's metaData first (merge again with its schema), or
    // removed a file an upsert marks (find the keys' rows again in the files that replaced it).
    ++batch->replans;
    metrics_.schema_replans->Increment();
    FERRY_LOG_INFO("pipeline {}: {}; planning the batch again against the new version", options_.id,
                   st.message());
    columnar::SchemaPtr before = snapshot_.schema();
    FERRY_ASSIGN_OR_RETURN(snapshot_, table_->Update(snapshot_));
    for (const columnar::Field& f : snapshot_.schema()->fields()) {
      if (!before->FieldIndex(f.name)) {
        foreign_columns_.push_back(f.name);
      }
    }
  }
  NoteTableSchema(batch);
  // An error here leaves a durable commit behind an error: Commit finds it in the log.
  return FERRY_FAILPOINT("pipeline.after_commit");
}

void BatchCommitter::NoteTableSchema(SealedBatch* batch) const {
  batch->table_schema = snapshot_.schema();
  batch->table_protocol = snapshot_.protocol();
  batch->table_configuration = snapshot_.metadata().configuration;
  auto enabled = snapshot_.metadata().configuration.find(delta::kEnableTypeWideningProperty);
  batch->widening_off =
      enabled != snapshot_.metadata().configuration.end() && enabled->second != "true";
}

Status BatchCommitter::Commit(SealedBatch* batch, StopSignal* stop) {
  std::chrono::milliseconds backoff = options_.initial_backoff;
  while (true) {
    if (stop->abandon()) {
      return Cancelled(
          "pipeline {}: stopped with {} rows not committed (they are read again "
          "at the next start)",
          options_.id, batch->rows.num_rows());
    }
    Status st = WriteAndCommit(batch);
    if (st.ok()) {
      ++epoch_;
      return Status::OK();
    }
    if (st.code() == StatusCode::kAborted) {
      return st;  // the pipeline thread fences
    }
    if (IsFatal(st)) {
      return st.WithContext("pipeline {}: committing to {}", options_.id, table_->Describe());
    }
    metrics_.failed->Increment();
    if (metrics_.journal != nullptr) {
      metrics_.journal->SetState(
          metrics_.journal_key, metrics::PipelineState::kRetrying,
          fmt::format("batch of {} rows not committed to {}: {}", batch->rows.num_rows(),
                      table_->Describe(), st.ToString()));
    }
    FERRY_LOG_WARN("pipeline {}: batch of {} rows not committed: {}; retrying in {}", options_.id,
                   batch->rows.num_rows(), st.ToString(), FormatDuration(backoff));
    stop->WaitFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);

    // Learn from the log what happened: ours, untouched, or another writer's.
    Result<delta::Snapshot> updated = table_->LoadSnapshot();
    if (!updated.ok()) {
      FERRY_LOG_WARN("pipeline {}: reading {}: {}", options_.id, table_->Describe(),
                     updated.status().ToString());
      continue;
    }
    snapshot_ = std::move(*updated);
    bool ours = true;
    bool untouched = true;
    for (const auto& [p, part] : batch->partitions) {
      std::optional<int64_t> now = snapshot_.position(part.app_id);
      ours = ours && now == part.last;
      untouched = untouched && now == part.expected;
    }
    if (ours) {
      FERRY_LOG_INFO("pipeline {}: the batch was committed after all (version {})", options_.id,
                     snapshot_.version());
      batch->version = snapshot_.version();
      NoteTableSchema(batch);
      FERRY_RETURN_IF_ERROR(strategy_->Recovered(*table_, snapshot_));
      ++epoch_;
      return Status::OK();
    }
    if (!untouched) {
      return Aborted("positions moved while the commit was failing");
    }
  }
}

}  // namespace ferry::pipeline
