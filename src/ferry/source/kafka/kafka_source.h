// KafkaSource: the Source (source.h) for Kafka topics, built on librdkafka's high-level
// (group) consumer. The app layer creates it; the pipeline sees only the Source interface.
//
// How the exactly-once protocol maps onto librdkafka (DESIGN.md, "Kafka"):
//   1. Create() configures the consumer with enable.auto.commit=false,
//      enable.auto.offset.store=false, isolation.level=read_committed, auto.offset.reset=error
//      and a rebalance callback. Start() subscribes (topic names or '^regex').
//   2. Assignment, inside Poll() from the rebalance callback: for each partition the listener's
//      OnAssigned() gives the table position p and the assignment list entry is set to p + 1;
//      a partition the table has never seen gets its offset from the StartResolver (policy).
//      Then rd_kafka_assign() (eager assignors: range, roundrobin) or
//      rd_kafka_incremental_assign() (cooperative-sticky): librdkafka starts exactly there.
//      rd_kafka_seek_partitions() is never used (its timeout is broken in 2.0.2). If the listener
//      or the broker fails, the partition stays pending: Poll returns the error and the next
//      Poll tries again.
//   3. Revocation, inside Poll(): OnRevoked() for each partition, then the partition's messages
//      taken in this Poll are dropped, then rd_kafka_assign(NULL) or
//      rd_kafka_incremental_unassign(). Nothing of it is delivered after OnRevoked().
//   4. Poll(): rd_kafka_consumer_poll() with the caller's timeout for the first message, then
//      with timeout 0 until the batch is full or the queue is empty (the batch API of 2.0.2
//      mishandles pause/resume, which the rate limit uses). Messages below the assigned start or
//      at/below the last offset taken are dropped (redeliveries). With a rate limit, messages
//      beyond a partition's budget are held and the partition paused until the budget refills.
//   5. An out-of-range fetch (the table position fell below the log start, or lies past its end)
//      is a DataLoss status naming topic, partition, the missing offsets and the broker's log
//      range (gap_report.h). The partition stops; nothing is skipped. Except with
//      on_gap = kContinue and a position below the log start (retention): the range is logged,
//      reported once through TakeGaps(), and the partition is assigned again at the log start.
//   6. Acknowledge(): rd_kafka_commit(async) of position + 1 for partitions still assigned. The
//      outcome arrives in a later Poll and is counted in stats(); never fatal.
//   7. Close(): rd_kafka_consumer_close_queue(), serving the revocation (OnRevoked) until the
//      consumer has left the group or close_timeout passes, then destroys the handle.
//
// With Assignment::kManual (kafka_source_options.h) Start() does not subscribe: the source asks
// the cluster for metadata (at Start, then every metadata_refresh, and after a failure every
// second or so) and assigns itself every partition of the matching topics it does not have yet,
// through the same step 2 (eager rd_kafka_assign of the whole list). A named topic missing from
// the metadata is asked for by name: a broker that refuses it (no DESCRIBE) ends the source with
// PermissionDenied (access_refusal.h); an unknown one is looked for again. Nothing is ever revoked
// except by Close(), which calls OnRevoked for every partition before closing.
//
// An error found in the middle of a Poll that already took messages is returned by the next Poll
// (before it takes anything), so taken messages are never lost to an error return.
//
// Thread-safety: like every Source, used from one thread; the listener is called on it.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/kafka/fetch_waker.h"
#include "ferry/source/kafka/gap_report.h"
#include "ferry/source/kafka/kafka_handles.h"
#include "ferry/source/kafka/kafka_source_options.h"
#include "ferry/source/kafka/log_throttle.h"
#include "ferry/source/kafka/partition_table.h"
#include "ferry/source/kafka/start_resolver.h"
#include "ferry/source/kafka/topic_matcher.h"
#include "ferry/source/source.h"

namespace ferry::source::kafka {

// Counters for metrics and tests. Monotonic over the source's life.
struct KafkaSourceStats {
  int64_t messages = 0;              // delivered by Poll
  int64_t redeliveries_dropped = 0;  // below the start or at/below the last offset taken
  int64_t assignments = 0;           // rebalance callbacks that assigned partitions
  int64_t revocations = 0;           // rebalance callbacks that revoked partitions
  int64_t offset_commits = 0;        // group offset commits acknowledged by the broker
  int64_t offset_commit_failures = 0;
  int64_t broker_errors = 0;  // transient errors reported by librdkafka (it retries)
  int64_t rate_limit_pauses = 0;
  int64_t rate_limited_us = 0;  // time partitions spent paused by the rate limit (ended pauses)
  int64_t gaps = 0;             // ranges skipped with on_gap = kContinue
  int64_t lost_offsets = 0;     // offsets in those ranges
};

class KafkaSource final : public Source {
 public:
  // InvalidArgument for bad options or a configuration librdkafka rejects.
  static Result<std::unique_ptr<KafkaSource>> Create(const KafkaSourceOptions& options);
  ~KafkaSource() override;

  KafkaSource(const KafkaSource&) = delete;
  KafkaSource& operator=(const KafkaSource&) = delete;

  Status Start(PartitionListener* listener) override;
  // Errors: DataLoss (a gap, see step 5), the listener's error for a pending partition,
  // Internal for a fatal librdkafka error or use after Close.
  Status Poll(size_t max_messages, std::chrono::milliseconds timeout,
              std::vector<Message>* out) override;
  void Acknowledge(std::span<const CommittedPosition> positions) override;
  // Low and high watermarks of the assigned partitions: first_position = low,
  // last_position = high - 1 (-1 for an empty partition). Cached values from fetches when
  // available, else asked of the broker within request_timeout; unknown ones stay nullopt.
  Result<std::vector<PartitionHead>> Heads() override;
  // Ranges skipped below the log start with on_gap = kContinue since the last call (step 5).
  std::vector<Gap> TakeGaps() override;
  // Unavailable if leaving the group took longer than close_timeout (the handle is destroyed
  // anyway; the group moves the partitions after session.timeout.ms).
  Status Close() override;

  const KafkaSourceStats& stats() const { return stats_; }
  // Wake-up requests sent to librdkafka's fetchers (fetch_waker.h); 0 with fetch_wakeup off.
  int64_t FetchWakeups() const { return waker_ != nullptr ? waker_->wakes() : fetch_wakeups_; }
  int64_t RateLimitedMicros() const override;
  int64_t RateLimitPauses(int32_t partition) const override;
  // The partitions being consumed now.
  std::vector<PartitionInfo> Assignment() const;

 private:
  struct Taken {
    MessagePtr message;
    PartitionState* state;
    size_t header_begin = 0;
    size_t header_count = 0;
  };

  explicit KafkaSource(const KafkaSourceOptions& options);
  Status Init();

  static void RebalanceCallback(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                rd_kafka_topic_partition_list_t* partitions, void* opaque);
  static void CommitCallback(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t* offsets, void* opaque);
  static void ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque);

  void OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);
  void OnAssign(const rd_kafka_topic_partition_list_t* partitions);
  void OnRevoke(const rd_kafka_topic_partition_list_t* partitions);
  // Asks the listener and the resolver for the start of each state, then assigns the resolved
  // ones (step 2). Records the first failure in deferred_error_.
  void StartPartitions(const std::vector<PartitionState*>& states, bool from_callback);
  Status Assign(const std::vector<PartitionState*>& started);
  void Revoke(PartitionState* state);
  Status RetryPending();
  // Manual assignment: finds partitions of the topics not yet assigned and starts them. A
  // metadata failure is logged (throttled) and retried sooner; never an error.
  void DiscoverPartitions();
  // Manual assignment: PermissionDenied if the broker, asked for the metadata of the named
  // topic alone, refuses it (the principal may not DESCRIBE it); OK otherwise.
  Status RefusedTopic(const std::string& name, int timeout_ms);

  // Poll helpers.
  void Take(rd_kafka_message_t* raw, int64_t now_us);
  void ReleaseHeld(size_t max_messages, int64_t now_us);
  int64_t MicrosUntilHeldToken(int64_t now_us);
  void SetPaused(PartitionState* state, bool paused);
  Status HandleConsumerError(const rd_kafka_message_t& message);
  // on_gap = kContinue: records the range below the log start and restarts the partition there.
  Status SkipGap(PartitionState* s, const RefusedOffset& refused);
  void Emit(std::vector<Message>* out);
  void NoteBrokerError(std::string_view what);

  KafkaSourceOptions options_;
  StartResolver resolver_;
  PartitionListener* listener_ = nullptr;
  bool started_ = false;
  bool closed_ = false;
  bool cooperative_ = false;  // decided by the group at the first rebalance
  Status deferred_error_;     // returned by the next Poll
  KafkaSourceStats stats_;
  LogThrottle broker_log_{1'000'000, 60'000'000};
  LogThrottle commit_log_{1'000'000, 60'000'000};
  std::optional<TopicMatcher> topic_matcher_;  // manual assignment only
  int64_t next_discovery_us_ = 0;
  int64_t discovery_retry_us_ = 0;  // after a failed metadata request, doubled up to the refresh
  std::set<std::string> missing_topics_;  // named topics the cluster did not know at last look
  std::vector<Gap> gaps_;                 // skipped, not yet taken by TakeGaps()

  // Destruction order: rk_ is declared before everything that borrows from it (messages held in
  // table_ and taken_) so that it is destroyed after them.
  KafkaPtr rk_;
  PartitionTable table_;
  std::vector<int32_t> held_partitions_;  // indices of states with held messages
  std::vector<Taken> taken_;              // this Poll's messages; views into them go out
  std::vector<Header> headers_;           // header views of taken_, in order
  // After rk_: destroyed (its thread joined) before the handle. Null with fetch_wakeup off.
  std::unique_ptr<FetchWaker> waker_;
  FetchWakePolicy wake_policy_{0, 0};
  int64_t fetch_wakeups_ = 0;  // the waker's count, kept when Close() ends it
};

}  // namespace ferry::source::kafka
