// Journal: what the status page of `ferry run` shows beside the metric series, per pipeline (and
// per table of a routed pipeline: JournalKey): its state (running, waiting for the broker, retrying
// a commit, failed with the error...) and bounded lists of the last commits, bad records, fencing
// events, maintenance runs and writer fields dropped, and the table's figures after the last
// commit; for an elastic JetStream pipeline, the owner of each partition's lease.
//
// The pipeline writes it at events that happen once per batch or rarer (a commit, a state change,
// a bad record, a fence, the first message of a writer schema that drops a field), never per
// message, so its one mutex is off the ingest hot path. Every
// list keeps only its newest entries (the k* limits below): the memory is bounded whatever runs.
//
// Bad records are kept with their position and error; their payload bytes only when the operator
// asked for them (`[metrics] show_payloads`, set_keep_payloads), truncated to kMaxPayloadBytes.
// Every text (errors, payloads, reasons, details) goes through the redactor set by the app
// (set_redactor: the configuration's secrets become "***", as in the logs).
//
// Thread-safety: every method is thread-safe.
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::metrics {

// What a pipeline is doing, as it reports it. The status page refines kRunning into "catching
// up" or "running" from the lag.
enum class PipelineState {
  kStarting,            // before the source started
  kRunning,             // polling and committing
  kWaitingForBroker,    // the broker did not answer the last poll or head query (error says why)
  kWaitingForRegistry,  // the decoder's schema registry did not answer (error says why)
  kRetrying,            // a batch's write or commit failed and is being retried (error says why)
  kFailed,              // Run() returned an error (error holds it)
  kStopped,             // Run() returned after a stop request
};
std::string_view PipelineStateName(PipelineState state);

// A source partition's positions moved by one commit (inclusive).
struct PositionRange {
  std::string partition;
  int64_t first = 0;
  int64_t last = 0;
};

struct CommitRecord {
  int64_t version = 0;
  int64_t time_ms = 0;  // wall clock, when the pipeline took the outcome back
  int64_t rows = 0;
  int64_t files = 0;
  int64_t bytes = 0;
  double commit_seconds = 0;  // writing the files and committing (the writer thread)
  double batch_seconds = 0;   // from the batch's first row to its durable commit
  std::vector<PositionRange> positions;
};

struct BadRecordSample {
  int64_t time_ms = 0;
  std::string partition;
  int64_t position = 0;
  std::string action;  // skipped, dead_letter
  std::string reason;  // malformed, wrong_type, ... (ferry_bad_records_total's label)
  std::string error;
  std::optional<std::string> payload;  // only with keep_payloads()
};

struct FenceRecord {
  int64_t time_ms = 0;
  std::string reason;
  int64_t rows_dropped = 0;
};

struct MaintenanceRecord {
  int64_t time_ms = 0;
  std::string operation;  // optimize, vacuum
  bool ok = true;
  double seconds = 0;
  std::string detail;              // what it did, or the error
  std::optional<int64_t> version;  // the commit it made, if any
};

// A writer field (Avro, Protobuf) the table has no place for, first dropped at `time_ms`
// (ferry_dropped_fields_total counts its messages).
struct DroppedFieldRecord {
  int64_t time_ms = 0;
  std::string writer;  // "schema id 12", "schema id 12 message shop.Order"
  std::string field;   // "loc.alt"
};

// The table as the pipeline's writer last saw it.
struct TableRecord {
  int64_t version = -1;
  int64_t num_files = 0;
  int64_t size_bytes = 0;
  int64_t small_files = 0;  // live files under kSmallFileBytes
  std::optional<int64_t> checkpoint_version;
  std::optional<int64_t> checkpoint_ms;  // when this process wrote it; unknown for older ones
  int64_t time_ms = 0;                   // when these figures were taken
};

// Elastic JetStream: one partition's lease as this process's lease keeper last listed the bucket
// (every TTL / 3): who holds it (empty: free) and since when.
struct LeaseRecord {
  std::string partition;        // the source partition's key, "jetstream/<stream>/<filter>"
  std::string owner;            // the holding process's member id; empty: free
  bool mine = false;            // this process holds it
  int64_t taken_unix_ms = 0;    // when the owner took it
  int64_t renewed_unix_ms = 0;  // its last renewal
};

// Whose record: a pipeline's own (table empty), or one table of a routed pipeline (the table's
// location, PipelineOptions::metrics_table): each inner pipeline of a routed pipeline keeps its
// own state, commits, bad records, fences, dropped fields and table figures, so that one table's
// are not mixed with another's. Ordered by pipeline, then table, the pipeline's own first.
struct JournalKey {
  std::string pipeline;
  std::string table;
  auto operator<=>(const JournalKey&) const = default;
};

struct PipelineRecord {
  PipelineState state = PipelineState::kStarting;
  int64_t state_since_ms = 0;
  std::string error;  // the error of kFailed, or the last error of a waiting state/kRetrying
  int64_t error_ms = 0;
  std::deque<CommitRecord> commits;  // oldest first
  std::deque<BadRecordSample> bad_records;
  std::deque<FenceRecord> fences;
  std::deque<MaintenanceRecord> maintenance;
  std::deque<DroppedFieldRecord> dropped_fields;
  std::optional<TableRecord> table;
  std::vector<LeaseRecord> leases;  // elastic JetStream only; by partition
  int64_t leases_ms = 0;            // when `leases` was listed
};

class Journal {
 public:
  static constexpr size_t kMaxCommits = 20;
  static constexpr size_t kMaxBadRecords = 10;
  static constexpr size_t kMaxFences = 10;
  static constexpr size_t kMaxMaintenance = 10;
  static constexpr size_t kMaxDroppedFields = 20;
  static constexpr size_t kMaxPayloadBytes = 1024;
  static constexpr size_t kMaxErrorBytes = 4096;
  static constexpr int64_t kSmallFileBytes = int64_t{32} * 1000 * 1000;  // 32 MB

  // Wall-clock milliseconds; tests pass their own.
  explicit Journal(std::function<int64_t()> now_ms = {});

  // Moves the pipeline to `state`. `error` is kept for kFailed, the waiting states and kRetrying
  // (cut at kMaxErrorBytes); the error of a failure is never replaced by a later state.
  void SetState(const JournalKey& key, PipelineState state, std::string_view error = {});
  // Also ends kRetrying (the batch went through).
  void RecordCommit(const JournalKey& key, CommitRecord commit);
  // `payload` is copied (truncated) only when keep_payloads().
  void RecordBadRecord(const JournalKey& key, BadRecordSample sample, std::string_view payload);
  void RecordFence(const JournalKey& key, FenceRecord fence);
  void RecordMaintenance(const JournalKey& key, MaintenanceRecord run);
  // Once per (writer schema, field): the pipeline records the first message that drops it.
  void RecordDroppedField(const JournalKey& key, DroppedFieldRecord dropped);
  void SetTable(const JournalKey& key, const TableRecord& table);
  // Elastic JetStream: the leases as the keeper listed them, replacing the last listing.
  void SetLeases(const JournalKey& key, std::vector<LeaseRecord> leases);

  void set_keep_payloads(bool keep) { keep_payloads_.store(keep, std::memory_order_relaxed); }
  // Applied to every text recorded from now on.
  void set_redactor(std::function<std::string(std::string)> redact);
  bool keep_payloads() const { return keep_payloads_.load(std::memory_order_relaxed); }

  // A copy of every record, by pipeline id and table.
  std::map<JournalKey, PipelineRecord> Read() const;

 private:
  PipelineRecord& At(const JournalKey& key);  // REQUIRES: mu_ held

  std::string Clean(std::string_view text, size_t limit) const;  // redacted, then truncated

  std::function<int64_t()> now_ms_;
  std::function<std::string(std::string)> redact_;  // guarded by mu_
  std::atomic<bool> keep_payloads_{false};
  mutable std::mutex mu_;
  std::map<JournalKey, PipelineRecord> records_;
};

}  // namespace ferry::metrics
