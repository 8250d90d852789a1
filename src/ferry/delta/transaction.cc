#include "ferry/delta/transaction.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "ferry/base/clock.h"
#include "ferry/base/failpoint.h"
#include "ferry/base/log.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/checkpointer.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/log_segment.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/snapshot_internal.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/table_properties.h"
#include "ferry/delta/uuid.h"

namespace ferry::delta {
namespace {

// Returns the milliseconds slept.
int64_t SleepBackoff(const CommitOptions& options, int attempt) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  int64_t cap = options.initial_backoff_ms << std::min(attempt, 20);
  cap = std::min(cap, options.max_backoff_ms);
  if (cap <= 0) {
    return 0;
  }
  std::uniform_int_distribution<int64_t> dist(0, cap);
  const int64_t ms = dist(rng);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return ms;
}

// After a lost race: a random sleep up to the lost put's round trip (at most max_backoff), BEFORE
// the log is read again, so that the next put does not come at the same point of a back-to-back
// writer's cycle each time (a loser whose retry takes as long as that cycle would otherwise lose
// every time); the reads and the put that follow come without delay. Returns the microseconds
// slept.
int64_t SleepJitter(const CommitOptions& options, int64_t round_trip_us) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const int64_t cap = std::min(round_trip_us, options.max_backoff_ms * 1000);
  if (cap <= 0) {
    return 0;
  }
  const int64_t us = std::uniform_int_distribution<int64_t>(0, cap)(rng);
  std::this_thread::sleep_for(std::chrono::microseconds(us));
  return us;
}

// For the attempt trace: who wrote a winning commit and what it was.
std::string DescribeWinner(const std::vector<Action>& actions) {
  std::string operation = "?";
  std::string txn_id;
  int txns = 0;
  int adds = 0;
  int removes = 0;
  for (const Action& action : actions) {
    if (const auto* info = std::get_if<CommitInfo>(&action)) {
      txn_id = info->txn_id.value_or("").substr(0, 8);
      operation = info->operation.value_or("?");
    } else if (std::holds_alternative<Txn>(action)) {
      ++txns;
    } else if (std::holds_alternative<AddFile>(action)) {
      ++adds;
    } else if (std::holds_alternative<RemoveFile>(action)) {
      ++removes;
    }
  }
  return fmt::format("{} txnId {} ({} txns, {} adds, {} removes)", operation, txn_id, txns, adds,
                     removes);
}

double Ms(int64_t micros) {
  return static_cast<double>(micros) / 1e3;
}

// A commit that needed this many attempts says where the time went, at INFO.
constexpr int kLogAttempts = 10;

// Versions read at once after a lost race (step 5): the lost one and those after it, so that the
// next put follows the newest commit by one round trip.
constexpr int kReadAhead = 4;

// The schema string carries the column rules in its field metadata (generation expressions,
// defaults, invariants, identity high-water marks); CHECK constraints live in the configuration
// (column_rules.h). A winner that changed any of them changed what a batch must satisfy.
bool SameConstraints(const Metadata& a, const Metadata& b) {
  auto constraints = [](const Metadata& m) {
    StringMap out;
    for (const auto& [key, value] : m.configuration) {
      if (key.rfind("delta.constraints.", 0) == 0) {
        out.emplace(key, value);
      }
    }
    return out;
  };
  return constraints(a) == constraints(b);
}

bool SameSchema(const Metadata& a, const Metadata& b) {
  return a.schema_string == b.schema_string && a.partition_columns == b.partition_columns &&
         SameConstraints(a, b);
}

}  // namespace

Transaction::Transaction(const Table& table, Snapshot read_snapshot, CommitOptions options)
    : table_(table),
      snapshot_(std::move(read_snapshot)),
      options_(options),
      read_version_(snapshot_.version()) {}

void Transaction::AddFiles(std::vector<AddFile> adds) {
  for (AddFile& add : adds) {
    adds_.push_back(std::move(add));
  }
}

void Transaction::SetPosition(const std::string& app_id, int64_t version) {
  positions_[app_id] = version;
  if (expected_.count(app_id) == 0) {
    expected_[app_id] = snapshot_.position(app_id);
  }
}

void Transaction::ExpectPosition(const std::string& app_id, std::optional<int64_t> expected) {
  expected_[app_id] = expected;
}

void Transaction::SetOperation(std::string operation, StringMap parameters) {
  operation_ = std::move(operation);
  operation_parameters_ = std::move(parameters);
}

Status Transaction::Validate() {
  const Protocol& protocol = protocol_ ? *protocol_ : snapshot_.protocol();
  const Metadata& metadata = metadata_ ? *metadata_ : snapshot_.metadata();
  if (!metadata_.has_value() && snapshot_.version() < 0) {
    return NotFound("{}: no Delta table to commit to", table_.Describe());
  }
  columnar::SchemaPtr schema = snapshot_.schema();
  if (metadata_.has_value()) {
    FERRY_ASSIGN_OR_RETURN(schema, ParseSchemaJson(metadata_->schema_string));
  }
  FERRY_RETURN_IF_ERROR(CheckWriteSupported(protocol, metadata, *schema));
  FERRY_RETURN_IF_ERROR(CheckRowRemovalsAllowed(metadata));
  for (const RemoveFile& remove : removes_) {
    if (snapshot_.files().count(KeyOf(remove)) == 0) {
      conflict_ = Conflict::kDeleteRead;
      return Aborted("ConcurrentDeleteRead: file {} is not live in version {}", remove.path,
                     snapshot_.version());
    }
  }
  for (const auto& [app_id, expected] : expected_) {
    std::optional<int64_t> actual = snapshot_.position(app_id);
    if (actual != expected) {
      conflict_ = Conflict::kTransaction;
      return Aborted(
          "ConcurrentTransaction: the position of '{}' is {} in version {}, expected {}; another "
          "writer committed it",
          app_id, actual ? std::to_string(*actual) : "none", snapshot_.version(),
          expected ? std::to_string(*expected) : "none");
    }
  }
  return Status::OK();
}

Status Transaction::CheckRowRemovalsAllowed(const Metadata& metadata) const {
  const bool removes_rows = std::any_of(removes_.begin(), removes_.end(),
                                        [](const RemoveFile& r) { return r.data_change; });
  if (!removes_rows) {
    return Status::OK();  // appends and compactions (dataChange = false) change no row
  }
  FERRY_ASSIGN_OR_RETURN(TableProperties properties, ParseTableProperties(metadata.configuration));
  if (properties.append_only) {
    return NotSupported(
        "{} sets delta.appendOnly = true: this commit removes rows, which the table forbids",
        table_.Describe());
  }
  if (properties.change_data_feed) {
    // PROTOCOL.md "Add CDC File": a commit that deletes or updates rows must carry the change
    // data files (`cdc`, with _change_type) for the feed; without them readers would take the
    // removed files' rows as deleted and the re-added ones as inserted, a wrong feed.
    return NotSupported(
        "{} sets delta.enableChangeDataFeed = true: this commit removes or replaces rows, and "
        "ferry does not write the change data files (`cdc` actions) the feed needs; unset the "
        "property or use an append pipeline",
        table_.Describe());
  }
  return Status::OK();
}

Result<std::optional<int64_t>> Transaction::PreviousInCommitTimestamp() {
  auto actions = table_.ReadCommit(snapshot_.version());
  if (!actions.ok()) {
    if (actions.status().code() != StatusCode::kNotFound) {
      return actions.status();
    }
    // PROTOCOL.md "Metadata Cleanup" keeps the commit of the oldest checkpoint for this; a
    // cleanup that did not falls back to the checkpoint's time.
    FERRY_LOG_WARN("{}: commit {} is gone; its inCommitTimestamp is taken as {}", table_.Describe(),
                   snapshot_.version(), snapshot_.timestamp_ms());
    return std::optional<int64_t>();
  }
  for (const Action& action : *actions) {
    if (const auto* info = std::get_if<CommitInfo>(&action)) {
      MutableState(&snapshot_)->in_commit_timestamp = info->in_commit_timestamp;
      return info->in_commit_timestamp;
    }
  }
  return std::optional<int64_t>();
}

Status Transaction::PrepareAttempt(int64_t version) {
  const Protocol& protocol = protocol_ ? *protocol_ : snapshot_.protocol();
  const Metadata& metadata = metadata_ ? *metadata_ : snapshot_.metadata();
  timestamp_ms_ = WallMillis();
  in_commit_timestamp_.reset();
  written_metadata_ = metadata_;
  row_id_domain_.reset();
  if (InCommitTimestampsEnabled(protocol, metadata)) {
    int64_t ict = timestamp_ms_;
    if (version > 0) {
      const bool was_enabled =
          InCommitTimestampsEnabled(snapshot_.protocol(), snapshot_.metadata());
      std::optional<int64_t> previous;
      if (was_enabled) {
        previous = snapshot_.in_commit_timestamp();
        if (!previous.has_value()) {
          FERRY_ASSIGN_OR_RETURN(previous, PreviousInCommitTimestamp());
        }
      }
      // Without a previous inCommitTimestamp (this commit enables them), the previous commit's
      // file time: the enabling commit must be later than it (PROTOCOL.md, requirement 5).
      ict = std::max(ict, previous.value_or(snapshot_.timestamp_ms()) + 1);
      if (!was_enabled && written_metadata_.has_value()) {
        written_metadata_->configuration["delta.inCommitTimestampEnablementVersion"] =
            std::to_string(version);
        written_metadata_->configuration["delta.inCommitTimestampEnablementTimestamp"] =
            std::to_string(ict);
      }
    }
    in_commit_timestamp_ = ict;
    timestamp_ms_ = ict;
  }
  for (RemoveFile& remove : removes_) {
    auto live = snapshot_.files().find(KeyOf(remove));
    if (live != snapshot_.files().end()) {
      remove.base_row_id = live->second.base_row_id;
      remove.default_row_commit_version = live->second.default_row_commit_version;
    }
  }
  row_tracking_enabled_ = RowTrackingEnabled(protocol, metadata);
  if (RowTrackingActive(protocol, metadata) && !adds_.empty()) {
    FERRY_ASSIGN_OR_RETURN(int64_t high_water_mark,
                           RowIdHighWaterMark(snapshot_.domain_metadata()));
    int64_t next = high_water_mark + 1;
    for (AddFile& add : adds_) {
      // A recommitted file keeps the ids of the last committed add of its path.
      const std::string canonical = CanonicalPath(add.path);
      auto live = snapshot_.files().lower_bound(FileKey{canonical, ""});
      if (live != snapshot_.files().end() && live->first.path == canonical &&
          live->second.base_row_id.has_value()) {
        add.base_row_id = live->second.base_row_id;
        add.default_row_commit_version = live->second.default_row_commit_version;
        continue;
      }
      std::optional<int64_t> rows = add.stats ? StatsNumRecords(*add.stats) : std::nullopt;
      if (!rows.has_value()) {
        return InvalidArgument(
            "{}: row tracking needs stats.numRecords in every add, and {} has none",
            table_.Describe(), add.path);
      }
      add.base_row_id = next;
      add.default_row_commit_version = version;
      next += *rows;
    }
    if (next - 1 > high_water_mark) {
      row_id_domain_ = RowIdHighWaterMarkDomain(next - 1);
    }
  }
  return Status::OK();
}

std::string Transaction::BuildCommit(int64_t version, const std::string& txn_id) const {
  nlohmann::ordered_json info;
  if (in_commit_timestamp_.has_value()) {
    info["inCommitTimestamp"] = *in_commit_timestamp_;
  }
  info["timestamp"] = timestamp_ms_;
  info["operation"] = operation_;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (const auto& [k, v] : operation_parameters_) {
    params[k] = v;
  }
  info["operationParameters"] = std::move(params);
  if (version > 0) {
    info["readVersion"] = version - 1;
  }
  info["isolationLevel"] = "Serializable";
  // Spark's rule (OptimisticTransaction): only adds, and nothing read from the table. At
  // WriteSerializable its conflict checker lets a DELETE, UPDATE or MERGE commit after a blind
  // append (open-source Delta's Serializable does not: docs/interop.md, "Findings"); a metaData
  // action conflicts on its own unless tagged as an identity high-water mark update
  // (ConflictChecker.checkNoMetadataUpdates).
  info["isBlindAppend"] = removes_.empty() && (!metadata_.has_value() || identity_only_metadata_);
  int64_t rows = 0;
  int64_t bytes = 0;
  for (const AddFile& add : adds_) {
    bytes += add.size;
    rows += add.stats ? StatsNumRecords(*add.stats).value_or(0) : 0;
  }
  info["operationMetrics"] = {{"numFiles", std::to_string(adds_.size())},
                              {"numOutputRows", std::to_string(rows)},
                              {"numOutputBytes", std::to_string(bytes)}};
  if (!removes_.empty()) {
    info["operationMetrics"]["numRemovedFiles"] = std::to_string(removes_.size());
  }
  if (row_tracking_enabled_) {
    // Rows ferry commits are new (appends), or copied by optimize with their stable ids
    // materialized (PreserveRowTracking).
    info["tags"]["delta.rowTracking.preserved"] =
        removes_.empty() || preserves_row_tracking_ ? "true" : "false";
  }
  if (identity_only_metadata_ && metadata_.has_value()) {
    info["tags"]["delta.identity.schemaUpdate"] = "true";
  }
  info["engineInfo"] = std::string("ferry/") + FERRY_VERSION;
  info["txnId"] = txn_id;
  if (!positions_.empty()) {
    nlohmann::ordered_json positions = nlohmann::ordered_json::object();
    for (const auto& [app_id, v] : positions_) {
      positions[app_id] = v;
    }
    info["positions"] = std::move(positions);
  }
  CommitInfo commit_info;
  commit_info.json = info.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out = ActionToJson(commit_info) + "\n";
  if (protocol_.has_value()) {
    out += ActionToJson(*protocol_) + "\n";
  }
  if (written_metadata_.has_value()) {
    out += ActionToJson(*written_metadata_) + "\n";
  }
  if (row_id_domain_.has_value()) {
    out += ActionToJson(*row_id_domain_) + "\n";
  }
  for (const auto& [app_id, v] : positions_) {
    out += ActionToJson(Txn{app_id, v, timestamp_ms_}) + "\n";
  }
  for (const RemoveFile& remove : removes_) {
    out += ActionToJson(remove) + "\n";
  }
  for (const AddFile& add : adds_) {
    out += ActionToJson(add) + "\n";
  }
  return out;
}

Result<std::optional<std::vector<Action>>> Transaction::ReadVersion(int64_t version) const {
  auto actions = table_.ReadCommit(version);
  if (!actions.ok()) {
    if (actions.status().code() == StatusCode::kNotFound) {
      return std::optional<std::vector<Action>>();
    }
    return actions.status();
  }
  return std::optional<std::vector<Action>>(std::move(*actions));
}

bool Transaction::IsOurs(const std::vector<Action>& actions, const std::string& txn_id) const {
  for (const Action& action : actions) {
    if (const auto* info = std::get_if<CommitInfo>(&action)) {
      return info->txn_id == txn_id;
    }
  }
  return false;
}

Status Transaction::ResolveConflict(int64_t version, std::vector<Action>&& winner) {
  if (metadata_.has_value() && version == 0) {
    return AlreadyExists("{}: a table already exists (version 0 was created concurrently)",
                         table_.Describe());
  }
  for (const Action& action : winner) {
    if (const auto* txn = std::get_if<Txn>(&action)) {
      if (positions_.count(txn->app_id) != 0 || expected_.count(txn->app_id) != 0) {
        conflict_ = Conflict::kTransaction;
        return Aborted(
            "ConcurrentTransaction: version {} committed position {} for '{}', which this "
            "transaction also writes; another writer owns it now",
            version, txn->version, txn->app_id);
      }
    } else if (const auto* remove = std::get_if<RemoveFile>(&action)) {
      for (const RemoveFile& ours : removes_) {
        if (KeyOf(ours) == KeyOf(*remove)) {
          conflict_ = Conflict::kDeleteDelete;
          return Aborted(
              "ConcurrentDeleteDelete: version {} removed {}, which this transaction removes too",
              version, remove->path);
        }
      }
    } else if (const auto* metadata = std::get_if<Metadata>(&action)) {
      if (metadata_.has_value() || !SameSchema(*metadata, snapshot_.metadata())) {
        conflict_ = Conflict::kMetadataChanged;
        return Aborted(
            "MetadataChanged: version {} changed the table's schema, partitioning or constraints; "
            "re-validate the batch against the new schema",
            version);
      }
    } else if (std::holds_alternative<DomainMetadata>(action)) {
      // The only domain ferry writes is delta.rowTracking, and PrepareAttempt recomputes it
      // from the winner's high-water mark; any other domain stays as the winner left it.
    } else if (std::holds_alternative<Protocol>(action) && protocol_.has_value()) {
      conflict_ = Conflict::kMetadataChanged;
      return Aborted(
          "MetadataChanged: version {} changed the table's protocol, which this transaction "
          "changes too; re-validate the batch",
          version);
    }
  }
  SnapshotState* state = MutableState(&snapshot_);
  ApplyActions(std::move(winner), version, state);
  FERRY_RETURN_IF_ERROR(FinishReplay(table_.log_dir(), state));
  return Validate();
}

std::vector<Result<std::optional<std::vector<Action>>>> Transaction::ReadVersions(int64_t from,
                                                                                  int count) {
  int64_t t0 = MonotonicMicros();
  std::vector<std::future<Result<std::optional<std::vector<Action>>>>> reads;
  for (int64_t v = from; v < from + count; ++v) {
    reads.push_back(std::async(std::launch::async, [this, v] { return ReadVersion(v); }));
  }
  // The listing only keeps the newest checkpoint known (checkpointer.h decides by it); the reads
  // decide where the log ends.
  std::optional<int64_t> newest_checkpoint = snapshot_.newest_checkpoint_version();
  auto listed = std::async(std::launch::async, [this, from, &newest_checkpoint] {
    return ListCommitsAfter(table_.store(), table_.log_dir(), from - 1, &newest_checkpoint);
  });
  std::vector<Result<std::optional<std::vector<Action>>>> out;
  for (auto& read : reads) {
    out.push_back(read.get());
  }
  if (listed.get().ok() && newest_checkpoint.has_value()) {
    SnapshotState* state = MutableState(&snapshot_);
    if (!state->newest_checkpoint_version.has_value() ||
        *state->newest_checkpoint_version < *newest_checkpoint) {
      state->newest_checkpoint_version = newest_checkpoint;
    }
  }
  trace_.read_us += MonotonicMicros() - t0;
  return out;
}

Status Transaction::ResolveRead(int64_t version, Result<std::optional<std::vector<Action>>> read,
                                bool* absent) {
  if (!read.ok()) {
    return read.status();
  }
  if (!read->has_value()) {
    *absent = true;
    return Status::OK();
  }
  FERRY_LOG_DEBUG("commit to {}: catch-up read version {}: {}", table_.Describe(), version,
                  DescribeWinner(**read));
  ++trace_.winners;
  return ResolveConflict(version, std::move(**read));
}

Status Transaction::CatchUp() {
  const int64_t from = snapshot_.version();
  while (true) {
    const int64_t next = snapshot_.version() + 1;
    auto window = ReadVersions(next, kReadAhead);
    bool absent = false;
    for (size_t i = 0; i < window.size() && !absent; ++i) {
      FERRY_RETURN_IF_ERROR(
          ResolveRead(next + static_cast<int64_t>(i), std::move(window[i]), &absent));
    }
    if (absent) {
      break;
    }
  }
  FERRY_LOG_DEBUG("commit to {}: caught up from version {} to {}; next try at version {}",
                  table_.Describe(), from, snapshot_.version(), snapshot_.version() + 1);
  return Status::OK();
}

std::string Transaction::DescribeTrace(int attempts, int64_t last_version) const {
  return fmt::format(
      "{} attempts at versions {}..{}, {} commits of other writers resolved; {:.0f} ms in puts, "
      "{:.0f} ms reading the log, {:.0f} ms backing off",
      attempts, trace_.first_version, last_version, trace_.winners, Ms(trace_.put_us),
      Ms(trace_.read_us), Ms(trace_.sleep_us));
}

Result<CommitResult> Transaction::Commit() {
  if (committed_) {
    return Internal("Transaction::Commit called twice");
  }
  committed_ = true;
  FERRY_RETURN_IF_ERROR(Validate());
  const std::string txn_id = RandomUuid();
  int attempts = 0;
  while (attempts < options_.max_attempts) {
    int64_t version = snapshot_.version() + 1;
    FERRY_RETURN_IF_ERROR(PrepareAttempt(version));
    std::string bytes = BuildCommit(version, txn_id);
    std::string key = table_.log_dir() + "/" + CommitFileName(version);
    attempts++;
    if (trace_.first_version < 0) {
      trace_.first_version = version;
    }
    FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("delta.commit.before_put"));
    int64_t put_start = MonotonicMicros();
    Status put = table_.store().PutIfAbsent(key, bytes);
    const int64_t put_us = MonotonicMicros() - put_start;
    trace_.put_us += put_us;
    FERRY_LOG_DEBUG("commit to {}: attempt {} at version {}: put {} in {:.1f} ms",
                    table_.Describe(), attempts, version,
                    put.ok() ? std::string("OK") : put.ToString(), Ms(put_us));
    if (put.ok()) {
      FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("delta.commit.after_put"));
      if (attempts >= kLogAttempts) {
        FERRY_LOG_INFO("commit to {}: version {} after {}", table_.Describe(), version,
                       DescribeTrace(attempts, version));
      }
      return Finish(version, attempts);
    }
    if (put.code() == StatusCode::kNotSupported) {
      // The store refused before writing (one that ignores the put-if-absent condition): the
      // outcome is known, and no retry can change it.
      return put.WithContext("commit of version {} to {}", version, table_.Describe());
    }
    std::optional<std::vector<Action>> existing;
    // The versions after `version`, read together with it when it is taken (step 5).
    std::vector<Result<std::optional<std::vector<Action>>>> after;
    if (put.code() == StatusCode::kAlreadyExists) {
      trace_.sleep_us += SleepJitter(options_, put_us);
      after = ReadVersions(version, kReadAhead);
      FERRY_ASSIGN_OR_RETURN(existing, std::move(after.front()));
      after.erase(after.begin());
    } else {
      int64_t read_start = MonotonicMicros();
      auto read_back = ReadVersion(version);
      trace_.read_us += MonotonicMicros() - read_start;
      if (!read_back.ok()) {
        return Unavailable("commit of version {} to {}: outcome unknown ({}; reading it back: {})",
                           version, table_.Describe(), put.ToString(),
                           read_back.status().ToString());
      }
      existing = std::move(*read_back);
      if (!existing.has_value()) {
        FERRY_LOG_WARN("commit of version {} to {} failed ({}); retrying", version,
                       table_.Describe(), put.ToString());
        trace_.sleep_us += SleepBackoff(options_, attempts) * 1000;
        continue;
      }
    }
    if (!existing.has_value()) {
      // AlreadyExists but gone again: only a log cleanup could do that. Retry the listing.
      return Unavailable("commit of version {} to {}: the version exists but cannot be read",
                         version, table_.Describe());
    }
    if (IsOurs(*existing, txn_id)) {
      // An earlier attempt at this version landed: its timestamps, and its metaData (which may
      // hold that attempt's ICT enablement timestamp), are the ones in the log.
      for (const Action& action : *existing) {
        if (const auto* info = std::get_if<CommitInfo>(&action)) {
          in_commit_timestamp_ = info->in_commit_timestamp;
          timestamp_ms_ = info->timestamp.value_or(timestamp_ms_);
        } else if (const auto* metadata = std::get_if<Metadata>(&action);
                   metadata != nullptr && written_metadata_.has_value()) {
          written_metadata_ = *metadata;
        }
      }
      return Finish(version, attempts);
    }
    FERRY_RETURN_IF_ERROR(FERRY_FAILPOINT("delta.commit.on_conflict"));
    FERRY_LOG_DEBUG("commit to {}: version {} is taken by {}", table_.Describe(), version,
                    DescribeWinner(*existing));
    ++trace_.winners;
    Status resolved = ResolveConflict(version, std::move(*existing));
    // No backoff between reading and the next put: another writer's commit is progress, not a
    // fault, and every millisecond between learning where the log ends and the next put is one in
    // which a writer committing back to back takes that version too (docs/RELIABILITY.md,
    // "JetStream elastic mode", issue 41: one writer committing every ~100 ms on radosgw took
    // 496 versions in a row from a loser that slept, listed and read one commit at a time).
    bool absent = false;
    for (size_t i = 0; resolved.ok() && i < after.size() && !absent; ++i) {
      resolved = ResolveRead(version + 1 + static_cast<int64_t>(i), std::move(after[i]), &absent);
    }
    if (resolved.ok() && !absent) {
      resolved = CatchUp();  // the unknown-outcome path read only `version`, or all were there
    }
    if (!resolved.ok()) {
      FERRY_LOG_DEBUG("commit to {}: {}", table_.Describe(), resolved.ToString());
      return resolved;
    }
  }
  return Unavailable("commit to {}: gave up after {} attempts (too much contention): {}",
                     table_.Describe(), attempts, DescribeTrace(attempts, snapshot_.version()));
}

Result<CommitResult> Transaction::Finish(int64_t version, int attempts) {
  std::vector<Action> ours;
  if (protocol_.has_value()) {
    ours.emplace_back(*protocol_);
  }
  if (written_metadata_.has_value()) {
    ours.emplace_back(*written_metadata_);
  }
  if (row_id_domain_.has_value()) {
    ours.emplace_back(*row_id_domain_);
  }
  for (const auto& [app_id, v] : positions_) {
    ours.emplace_back(Txn{app_id, v, timestamp_ms_});
  }
  for (RemoveFile& remove : removes_) {
    ours.emplace_back(std::move(remove));
  }
  removes_.clear();
  for (AddFile& add : adds_) {
    ours.emplace_back(std::move(add));
  }
  adds_.clear();
  SnapshotState* state = MutableState(&snapshot_);
  ApplyActions(std::move(ours), version, state);
  state->timestamp_ms = timestamp_ms_;
  state->in_commit_timestamp = in_commit_timestamp_;
  FERRY_RETURN_IF_ERROR(FinishReplay(table_.log_dir(), state));
  CommitResult result;
  result.version = version;
  result.attempts = attempts;
  result.snapshot = std::move(snapshot_);
  if (!options_.checkpoint) {
    return result;
  }
  if (CheckpointDue(version, CheckpointInterval(result.snapshot),
                    result.snapshot.newest_checkpoint_version())) {
    CheckpointOutcome checkpoint = WriteCheckpointAndCleanUp(table_, result.snapshot);
    result.checkpoint_version = version;
    result.checkpoint_micros = checkpoint.micros;
    if (checkpoint.status.ok()) {
      state->newest_checkpoint_version = version;
    } else {
      FERRY_LOG_WARN("checkpoint of {} at version {} failed (the next commit retries): {}",
                     table_.Describe(), version, checkpoint.status.ToString());
    }
    result.checkpoint_status = std::move(checkpoint.status);
  }
  return result;
}

}  // namespace ferry::delta
