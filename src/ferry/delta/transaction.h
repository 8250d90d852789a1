// Transaction: one optimistic Delta commit of data files and source positions, the step of the
// exactly-once protocol where a batch becomes visible (DESIGN.md, "A batch", step 4-5).
//
//   delta::Transaction txn(*table, snapshot);
//   txn.AddFiles(std::move(adds));                       // from TableWriter::Finish()
//   txn.SetPosition("pipe/kafka/orders/3", 41871);       // expected: snapshot.position(...)
//   txn.SetOperation("STREAMING UPDATE", {{"outputMode", "Append"}});
//   auto result = txn.Commit();
//   if (result.status().code() == StatusCode::kAborted) { ...another writer owns a partition:
//     drop the batch, reload the snapshot, re-read positions... }
//   snapshot = result->snapshot;                          // the table right after the commit
//
// The commit protocol, numbered as Commit() runs it (failpoints in brackets):
//   1. Validate against the read snapshot: ferry can write the table (table_features.h), and
//      every appId's position in the snapshot equals the expected one (ExpectPosition, or the
//      snapshot's own for SetPosition); otherwise Aborted ("ConcurrentTransaction"), nothing
//      written. A commit that removes rows (a remove with dataChange = true) is NotSupported on
//      a table with delta.appendOnly or delta.enableChangeDataFeed (ferry writes no `cdc`
//      files); re-checked after every winner, so a property another writer sets in between
//      stops it too.
//   2. Prepare the attempt for version v (PrepareAttempt; redone for every attempt, since each
//      depends on v and on the commits before it):
//        - In-Commit Timestamps enabled (table_features.h): inCommitTimestamp = max(now,
//          previous commit's inCommitTimestamp + 1), the previous one taken from the snapshot
//          (or read from commit v-1 when the snapshot ends at a checkpoint); when this commit
//          enables them at v > 0, the previous commit's file time + 1 instead, and the metaData
//          records delta.inCommitTimestampEnablementVersion / Timestamp;
//        - row tracking active: each new add gets baseRowId = high-water mark + 1 + the rows of
//          the new adds before it and defaultRowCommitVersion = v; the raised mark is written as
//          a delta.rowTracking domainMetadata action; removes carry the ids of the add they end.
//          An add that recommits a live file (the same path, e.g. re-added with a deletion
//          vector) keeps that file's baseRowId and defaultRowCommitVersion: the same rows keep
//          their ids (PROTOCOL.md "Writer Requirements for Row Tracking").
//      Build the commit file: commitInfo first (inCommitTimestamp, timestamp, operation,
//      readVersion, isBlindAppend, operationMetrics, engineInfo "ferry/<version>", a random txnId,
//      and ferry's `positions` {appId: version}), then protocol/metaData if set, the
//      domainMetadata, the txn actions, the removes, the add actions.
//   3. Put-if-absent `_delta_log/<v>.json` with v = snapshot version + 1. [delta.commit.before_put,
//      then the store's own storage.local.* failpoints, delta.commit.after_put]
//        - OK: the commit is durable; go to 6.
//        - AlreadyExists: read version v, and at once the three versions after it (kReadAhead = 4
//          reads in flight, transaction.cc). If v carries our txnId it is ours (an earlier
//          attempt whose reply was lost): go to 6. Otherwise another writer won: go to 4.
//        - any other error: the outcome is unknown; read version v back. Ours: go to 6. Someone
//          else's: go to 4. Absent: retry the same version (counts as an attempt). Unreadable:
//          Unavailable, with the outcome left for the next snapshot to tell.
//   4. Resolve the conflict with the winning commit [delta.commit.on_conflict]:
//        - a txn for one of our appIds: Aborted (ConcurrentTransaction) -- another writer owns
//          that partition now; the batch must be abandoned (its files are orphans);
//        - a remove of a file we remove (Remove(), e.g. two compactions of one file): Aborted
//          (ConcurrentDeleteDelete); step 1 also checks that every file we remove is live;
//        - a metaData that changes the schema or partition columns, or any metaData when this
//          commit sets one, or a protocol when this commit sets one: Aborted (MetadataChanged)
//          -- the caller must re-validate the batch against the new schema (schema_evolution.h:
//          merge again, commit again); a metaData that only changes properties, or a protocol
//          change: re-run the write check of step 1;
//        - a table created (version 0) when we create: AlreadyExists;
//        - a domainMetadata for a domain this commit writes (delta.rowTracking, the only one
//          ferry writes): no conflict -- step 2 recomputes the row ids and the high-water mark
//          from the winner's (PROTOCOL.md: overlapping domain writers conflict; row tracking's
//          rule is to reassign). Other domains are kept as the winner left them;
//        - anything else (blind appends, compaction, deletes: ferry's adds never conflict with
//          them): apply the winner to the read snapshot and retry at v + 1.
//   5. (Before step 3's read of a taken v: a random sleep up to that put's round trip, capped by
//      max_backoff, so that retries do not keep the phase of a writer committing back to back.)
//      Resolve the versions read after v (step 4 for each) and go on reading four versions at a
//      time until one is absent; retry at once at that version, with no backoff (another
//      writer's commit is progress; a writer committing back to back would take every version a
//      sleeping, listing, one-read-at-a-time loser aims at: docs/RELIABILITY.md). A listing
//      beside the reads keeps the newest checkpoint known. Only an unknown outcome with the
//      version still absent backs off (a random sleep up to min(max_backoff, initial * 2^n))
//      before the same version is tried again. After max_attempts put attempts: Unavailable
//      ("too much contention", with where the time went).
//   6. The post-commit snapshot is the read snapshot plus the winners plus our actions (no log
//      re-read). If a checkpoint is due -- the newest checkpoint is older than the last multiple
//      of delta.checkpointInterval at or below v, so a checkpoint a crash skipped is retried by
//      the next commit -- write it (checkpointer.h, checkpoint_writer.h). A checkpoint failure does
//      not fail the commit: it is reported in CommitResult::checkpoint_status. After a checkpoint,
//      old log files are cleaned up (log_cleanup.h; best effort, logged).
//
// Error codes: Aborted (a conflict the caller must handle: re-read the log; conflict() says which),
// AlreadyExists
// (create of an existing table), NotSupported (a table feature ferry cannot write),
// Unavailable (contention or an unknown outcome: reload the snapshot, then decide), IOError.
//
// Thread-safety: a Transaction is used by one thread; several transactions (in several
// processes) may commit to one table at once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

class Table;

struct CommitOptions {
  int max_attempts = 200;
  int64_t initial_backoff_ms = 1;
  int64_t max_backoff_ms = 100;
  // Write checkpoints when due (checkpointer.h), on the committing thread. Off in tests that
  // count log files, and in ferry run's pipelines, which write them on a thread of their own.
  bool checkpoint = true;
};

struct CommitResult {
  int64_t version = -1;
  // The table right after this commit (winning concurrent commits included).
  Snapshot snapshot;
  // Put attempts made (1 without contention).
  int attempts = 0;
  // Set when this commit wrote a checkpoint; checkpoint_status says whether that worked.
  std::optional<int64_t> checkpoint_version;
  Status checkpoint_status;
  int64_t checkpoint_micros = 0;  // time spent writing it
};

// Which conflict made Commit() return Aborted.
enum class Conflict : uint8_t {
  kNone,
  kTransaction,      // another writer's txn for one of our appIds (or a position moved)
  kDeleteRead,       // a file we remove is not live
  kDeleteDelete,     // another writer removed a file we remove
  kMetadataChanged,  // another writer's metaData or protocol (see step 4)
};

class Transaction {
 public:
  Transaction(const Table& table, Snapshot read_snapshot, CommitOptions options = {});

  void Add(AddFile add) { adds_.push_back(std::move(add)); }
  void AddFiles(std::vector<AddFile> adds);
  // Removes a live file (compaction: `remove` with dataChange=false beside the adds that
  // replace it). The commit aborts if the file is not live or a concurrent commit removes it.
  void Remove(RemoveFile remove) { removes_.push_back(std::move(remove)); }
  // Records `version` as the new position of `app_id` (a txn action). Unless ExpectPosition()
  // says otherwise, the commit requires the position to still be what the read snapshot holds.
  void SetPosition(const std::string& app_id, int64_t version);
  // The position `app_id` must have (nullopt: none) for the commit to go through. Any later
  // commit carrying a txn for `app_id` aborts this one as well.
  void ExpectPosition(const std::string& app_id, std::optional<int64_t> expected);
  // commitInfo.operation and operationParameters (default "WRITE", {"mode": "Append"}).
  void SetOperation(std::string operation, StringMap parameters);
  // The rows this commit copies (the files it removes, rewritten into its adds) keep their
  // stable row ids and row commit versions in materialized columns (optimize.h): commitInfo
  // tags delta.rowTracking.preserved "true" where row tracking is enabled (without this, a
  // commit that removes files says "false").
  void PreserveRowTracking() { preserves_row_tracking_ = true; }
  // For table creation: the protocol and metaData this commit sets.
  void SetProtocol(Protocol protocol) { protocol_ = std::move(protocol); }
  void SetMetadata(Metadata metadata) { metadata_ = std::move(metadata); }
  // Says the metaData of SetMetadata() differs from the table's only in identity columns'
  // high-water marks. The commit is then tagged `delta.identity.schemaUpdate` and stays a blind
  // append (`isBlindAppend`), as Spark writes such a commit: Delta's conflict checker lets a
  // concurrent DELETE, UPDATE or MERGE that changes no metadata commit after it instead of
  // failing with MetadataChangedException (or ConcurrentAppendException).
  void SetIdentityOnlyMetadataUpdate() { identity_only_metadata_ = true; }

  // Runs the commit protocol above. Call once.
  Result<CommitResult> Commit();
  // After Commit() returned Aborted: why.
  Conflict conflict() const { return conflict_; }

 private:
  Status Validate();
  // Step 1's rule for commits that remove rows, against the table's `metadata`.
  Status CheckRowRemovalsAllowed(const Metadata& metadata) const;
  // Step 2: in-commit timestamp, row ids, metaData as written, for an attempt at `version`.
  Status PrepareAttempt(int64_t version);
  // The inCommitTimestamp of the read snapshot's commit when the snapshot does not know it.
  Result<std::optional<int64_t>> PreviousInCommitTimestamp();
  std::string BuildCommit(int64_t version, const std::string& txn_id) const;
  // Step 3's read-back: is version `v` ours? nullopt if it does not exist.
  Result<std::optional<std::vector<Action>>> ReadVersion(int64_t version) const;
  bool IsOurs(const std::vector<Action>& actions, const std::string& txn_id) const;
  Status ResolveConflict(int64_t version, std::vector<Action>&& winner);
  // Reads versions [from, from + count) at once (nullopt: absent), and lists the log beside
  // them for the newest checkpoint.
  std::vector<Result<std::optional<std::vector<Action>>>> ReadVersions(int64_t from, int count);
  // Step 4 for one version read (absent: sets *absent, nothing else).
  Status ResolveRead(int64_t version, Result<std::optional<std::vector<Action>>> read,
                     bool* absent);
  // Resolves every commit after the snapshot's version, as step 4 does for one, reading them
  // kReadAhead at a time until one is absent.
  Status CatchUp();
  Result<CommitResult> Finish(int64_t version, int attempts);

  const Table& table_;
  Snapshot snapshot_;  // the read snapshot, advanced past every winning commit
  CommitOptions options_;
  std::vector<AddFile> adds_;
  std::vector<RemoveFile> removes_;
  std::map<std::string, int64_t> positions_;
  std::map<std::string, std::optional<int64_t>> expected_;
  std::string operation_ = "WRITE";
  StringMap operation_parameters_ = {{"mode", "Append"}};
  std::optional<Protocol> protocol_;
  std::optional<Metadata> metadata_;
  int64_t read_version_;
  // Set by PrepareAttempt for the current attempt.
  int64_t timestamp_ms_ = 0;
  std::optional<int64_t> in_commit_timestamp_;
  std::optional<Metadata> written_metadata_;  // metadata_ plus ICT enablement properties
  std::optional<DomainMetadata> row_id_domain_;
  bool row_tracking_enabled_ = false;
  bool identity_only_metadata_ = false;
  bool preserves_row_tracking_ = false;
  bool committed_ = false;
  Conflict conflict_ = Conflict::kNone;
  // Where the attempts' time went: the DEBUG trace of each attempt, the INFO line of a commit
  // that needed many, and the contention error.
  struct AttemptTrace {
    int64_t first_version = -1;
    int64_t put_us = 0;
    int64_t read_us = 0;   // reading the winners and listing (steps 3 and 5)
    int64_t sleep_us = 0;  // jitter after a lost race, backoff before retrying an unknown outcome
    int64_t winners = 0;   // other writers' commits resolved
  };
  AttemptTrace trace_;
  std::string DescribeTrace(int attempts, int64_t last_version) const;
};

}  // namespace ferry::delta
