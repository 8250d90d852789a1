// KafkaSource: the Source (source.h) for Kafka topics, built on librdkafka's high-level
// (group) consumer. The app layer creates it; the pipeline sees only the Source interface.
//
// How the exactly-once protocol maps onto librdkafka (DESIGN.md, "Kafka"):
//   1. Create() configures the consumer with enable.auto.commit=false,
//      enable.auto.offset.store=false, isolation.level=read_committed, auto.offset.reset=error
//      and a rebalance callback. Start() subscribes (topic names or '^regex').
//   2. Assignment, inside Poll() from the rebalance callback: for each partition the listener's
//      OnAssigned() gives the table position p and the assignment list entry is set to p + 1;
//      a partition the table has never seen gets its offset from the StartResolver (policy),
//      the log start or end as an absolute offset asked of the broker (start_resolver.h: a
//      logical offset could cost a 500 ms wait inside librdkafka 2.0.2).
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
//      And except for a partition new to the table that has taken nothing since the policy
//      started it at the log start or end: the log moved under that offset (retention, a
//      recreated topic), nothing is expected there, and it starts again at the new log start or
//      end (assignment_controller.h).
//   6. Acknowledge(): rd_kafka_commit(async) of position + 1 for partitions still assigned. The
//      outcome arrives in a later Poll and is counted in stats(); never fatal.
//   7. Close(): rd_kafka_consumer_close_queue(), serving the revocation (OnRevoked) until the
//      consumer has left the group or close_timeout passes, then destroys the handle.
//
// With Assignment::kManual (kafka_source_options.h) Start() does not subscribe: the source asks
// the cluster for metadata (at Start, then every metadata_refresh, and after a failure every
// second or so) and assigns itself every partition of the matching topics it does not have yet,
// through the same step 2 (eager rd_kafka_assign of the whole list). A named topic missing from
// the metadata is asked for by name when the client authenticates: a broker that refuses it (no
// DESCRIBE) ends the source with PermissionDenied (access_refusal.h); an unknown one is looked
// for again. Nothing is ever revoked
// except by Close(), which calls OnRevoked for every partition before closing.
//
// An error found in the middle of a Poll that already took messages is returned by the next Poll
// (before it takes anything), so taken messages are never lost to an error return.
//
// The pieces: AssignmentController (assignment_controller.h) does steps 2, 3 and 5's checks and
// the manual assignment; PartitionHeads (partition_heads.h) answers Heads(); ConsumerHandle
// (consumer_handle.h) owns the librdkafka handle and ends it in step 7. KafkaSource keeps the
// options, Poll (steps 4 and 5's delivery), the positions taken, the rate limit and the stats.
//
// Thread-safety: like every Source, used from one thread; the listener is called on it.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/kafka/assignment_controller.h"
#include "ferry/source/kafka/consumer_handle.h"
#include "ferry/source/kafka/fetch_waker.h"
#include "ferry/source/kafka/kafka_handles.h"
#include "ferry/source/kafka/kafka_source_options.h"
#include "ferry/source/kafka/kafka_source_stats.h"
#include "ferry/source/kafka/log_throttle.h"
#include "ferry/source/kafka/partition_table.h"
#include "ferry/source/source.h"

namespace ferry::source::kafka {

class KafkaSource final : public Source, private AssignmentHost {
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
  std::vector<Gap> TakeGaps() override { return assignment_.TakeGaps(); }
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

  // AssignmentHost.
  void Forget(PartitionState* state) override;
  void NoteBrokerError(std::string_view what) override;
  void Defer(Status error) override;

  // Poll helpers.
  Status TakeDeferred() { return std::exchange(deferred_error_, Status::OK()); }
  void Take(rd_kafka_message_t* raw, int64_t now_us);
  void ReleaseHeld(size_t max_messages, int64_t now_us);
  int64_t MicrosUntilHeldToken(int64_t now_us);
  void SetPaused(PartitionState* state, bool paused);
  Status HandleConsumerError(const rd_kafka_message_t& message);
  void Emit(std::vector<Message>* out);
  // Close: serves an event of the close queue (the final revocation, commit results).
  void ServeCloseEvent(rd_kafka_event_t* event);

  KafkaSourceOptions options_;
  bool started_ = false;
  bool closed_ = false;
  Status deferred_error_;  // returned by the next Poll
  KafkaSourceStats stats_;
  LogThrottle broker_log_{1'000'000, 60'000'000};
  LogThrottle commit_log_{1'000'000, 60'000'000};

  // Destruction order: the handle is declared before everything that borrows from it (messages
  // held in table_ and taken_, the controller) so that it is destroyed after them.
  ConsumerHandle consumer_;
  PartitionTable table_;
  AssignmentController assignment_;
  std::vector<int32_t> held_partitions_;  // indices of states with held messages
  std::vector<Taken> taken_;              // this Poll's messages; views into them go out
  std::vector<Header> headers_;           // header views of taken_, in order
  // After consumer_: destroyed (its thread joined) before the handle. Null with fetch_wakeup off.
  std::unique_ptr<FetchWaker> waker_;
  FetchWakePolicy wake_policy_{0, 0};
  int64_t fetch_wakeups_ = 0;  // the waker's count, kept when Close() ends it
};

}  // namespace ferry::source::kafka
