// JetStreamSource: the Source (ferry/source/source.h) for one NATS JetStream stream, with one
// source partition per subject filter ("jetstream/<stream>/<filter>"). It sits between nats.c and
// the pipeline; the pipeline owns the positions (stream sequences committed in the Delta table).
//
// How it keeps exactly-once (DESIGN.md, "JetStream"; docs/jetstream.md for users):
//   1. Start() connects, reads the stream's info and refuses WorkQueue and Interest retention
//      (those delete messages on ack or delivery, so nothing could be replayed from a position),
//      and filters that match none of the stream's own subjects (nats-server 2.9 refused such a
//      consumer; 2.10 and later accept it, and it would wait forever).
//   2. For each filter it asks the listener for the table's position p (OnAssigned, called from
//      Start: the partitions of a stream are fixed) and compares p + 1 with the stream's first and
//      last sequence itself, because nats-server 2.9 clips a start sequence silently
//      (FilterCursor's CheckStart). Without a position the start policy applies.
//   3. Each filter is read by an nats.c ordered consumer (push, AckNone, flow control, idle
//      heartbeats) started at p + 1. nats.c checks that consumer sequences are contiguous and
//      recreates the consumer at its last received stream sequence + 1 on a gap. The source sets
//      the subscription's pending limits to unlimited: 3.4.1 checks for gaps before it applies
//      them, so a message dropped as "slow consumer" would otherwise be lost unnoticed.
//   4. The source restarts a filter's consumer itself at the last sequence Poll() delivered + 1
//      after a reconnect (the server may have restarted and forgotten the in-memory ordered
//      consumer; nats.c would notice only after two missed heartbeats), once the old
//      subscription's buffered messages are delivered; after a slow-consumer or subscription
//      error (buffer discarded: it may have a hole); and when a Poll() had to be abandoned. Each
//      restart repeats the check of step 2 with that sequence.
//   5. Poll() drops sequences at or below the last delivered one and records stream-sequence
//      jumps that may hide messages removed by retention; before returning, it reads the stream's
//      first sequence once and turns such jumps into lost ranges (FilterCursor). Lost ranges are
//      DataLoss, or with OnGap::kContinue gaps reported through TakeGaps().
//   6. Acknowledge() sends nothing: the consumers are AckNone, the table is the position, and the
//      server needs no acks to keep or drop messages of a Limits stream.
//   7. The source's own requests (stream info, a filter's last message for Heads()) go over a
//      second, control connection (StreamInfoClient, stream_info_client.h): on the data
//      connection each reply would wait behind the messages the server already pushed (a
//      flow-control window per consumer), and the pipeline thread waits for it. The consumers'
//      creation stays on the data connection (nats.c).
//
// Elastic mode (a PartitionLeases given to Create): the filters are the pipeline's partitions
// and the source reads only those the leases say this process holds. Each Poll() first lets its
// LeaseFollower (lease_follower.h) compare them with the filters it reads: a filter no longer
// held is unsubscribed and revoked (OnRevoked) before anything else is delivered, a newly held
// one assigned (OnAssigned, the table's position) and started as in step 2; then the follower
// tells the leases what it reads (Confirm), so that a lease being handed over is deleted only
// after the pipeline let go of it.
//
// Messages returned by Poll() borrow from nats.c messages the source keeps until the next Poll()
// or Close().
//
// Thread-safety: one thread (the pipeline's), like every Source.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/delivered_msg.h"
#include "ferry/source/jetstream/filter_cursor.h"
#include "ferry/source/jetstream/jetstream_options.h"
#include "ferry/source/jetstream/lease_follower.h"
#include "ferry/source/jetstream/nats_handles.h"
#include "ferry/source/jetstream/partition_leases.h"
#include "ferry/source/jetstream/stream_info_client.h"
#include "ferry/source/source.h"

namespace ferry::source::jetstream {

struct JetStreamSourceStats {
  uint64_t messages = 0;            // handed out by Poll()
  uint64_t duplicates_dropped = 0;  // at or below the last delivered sequence
  uint64_t consumer_restarts = 0;   // restarts by the source itself (step 4)
  uint64_t stream_checks = 0;       // stream-info reads that resolved sequence jumps (step 5)
  uint64_t gaps = 0;                // lost ranges skipped under OnGap::kContinue
  uint64_t lost_sequences = 0;      // stream sequences in those ranges
  uint64_t deleted_sequences = 0;   // individually deleted messages skipped (not an error)
  uint64_t acknowledge_calls = 0;
};

class JetStreamSource final : public Source, private LeaseFollower::Partitions {
 public:
  // Validates the options; connects only in Start().
  // `leases` (elastic mode) must cover options.filters.size() partitions; it may be shared by
  // the sources a pipeline makes one after the other.
  static Result<std::unique_ptr<JetStreamSource>> Create(
      JetStreamOptions options, std::shared_ptr<PartitionLeases> leases = nullptr);
  ~JetStreamSource() override;

  JetStreamSource(const JetStreamSource&) = delete;
  JetStreamSource& operator=(const JetStreamSource&) = delete;

  // Errors: Unavailable (no server; retry), NotFound (no such stream), InvalidArgument
  // (retention not Limits, filter outside the stream, auth), DataLoss (step 2). After an error
  // Start() may be called again.
  Status Start(PartitionListener* listener) override;
  Status Poll(size_t max_messages, std::chrono::milliseconds timeout,
              std::vector<Message>* out) override;
  void Acknowledge(std::span<const CommittedPosition> positions) override;
  // last_position: the last sequence of a message matching the filter (nullopt if none);
  // first_position: the stream's first sequence (a lower bound for the filter).
  Result<std::vector<PartitionHead>> Heads() override;
  std::vector<Gap> TakeGaps() override;
  Status Close() override;

  const JetStreamSourceStats& stats() const { return stats_; }

 private:
  struct Filter {
    PartitionInfo info;
    FilterCursor cursor;
    // The cursor as it was when the current Poll() began (restored if the Poll is abandoned).
    FilterCursor poll_start;
    // Restart the consumer at the next opportunity (subscription error, abandoned Poll).
    bool needs_restart = false;
    // After a reconnect: deliver what the old subscription still buffers, then restart (the
    // buffered messages may no longer be in the stream).
    bool restart_when_drained = false;
    bool delivered_this_poll = false;
    // Assigned to this process (always, except in elastic mode).
    bool active = false;
    NatsSubscriptionPtr subscription;
  };

  JetStreamSource(JetStreamOptions options, std::shared_ptr<PartitionLeases> leases);
  // LeaseFollower::Partitions (elastic mode): the filters by index.
  size_t partition_count() const override { return filters_.size(); }
  const PartitionInfo& partition_info(size_t index) const override { return filters_[index].info; }
  bool reading(size_t index) const override { return filters_[index].active; }
  void StopReading(size_t index) override;
  Status PrepareReading(size_t index, std::optional<int64_t> position) override;
  Status StartReading(const std::vector<size_t>& indexes) override;

  // Elastic mode: tells the leases which filters it reads.
  void ConfirmReading();
  bool AnyActive() const;

  Status Connect();
  Status StartFilter(Filter* filter, const jsStreamState& state);
  Status Subscribe(Filter* filter, uint64_t next);
  Status ReportLost(const Filter& filter, const SequenceRange& range, std::string_view why);
  void Unsubscribe(Filter* filter);
  Status RestartFlaggedFilters();
  Status CheckConnection();
  // Moves up to `limit` buffered messages into *out without waiting.
  Status Sweep(size_t limit, std::vector<Message>* out);
  // Waits up to `timeout` for one message of any filter.
  Status WaitForOne(std::chrono::milliseconds timeout, std::vector<Message>* out);
  // Handles what NextMsg returned: NATS_OK takes the message, NATS_TIMEOUT means none.
  // Returns true when a message was taken.
  Result<bool> Take(Filter* filter, natsStatus status, natsMsg* raw, std::vector<Message>* out);
  Status AddHeaders(natsMsg* msg, Message* message, int64_t sequence);
  Status ResolveJumps();
  void AbandonPoll(std::vector<Message>* out);

  enum class State { kCreated, kStarted, kClosed };

  const JetStreamOptions options_;
  // The control connection: stream info and last-message requests (Heads, restarts, jumps).
  StreamInfoClient info_client_;
  // Null unless elastic; moves filters in and out through the Partitions methods above.
  const std::unique_ptr<LeaseFollower> follower_;
  State state_ = State::kCreated;
  PartitionListener* listener_ = nullptr;
  Status sticky_error_;  // a DataLoss that stopped the source; every later Poll() returns it
  std::vector<Gap> gaps_;
  JetStreamSourceStats stats_;
  uint64_t reconnects_seen_ = 0;
  size_t next_filter_ = 0;  // where the next sweep starts (round robin between filters)

  // nats.c handles. Destruction runs in reverse order of declaration, which is the order nats.c
  // needs: the held messages, then the subscriptions (inside filters_), then the JetStream
  // contexts, then the connections they belong to.
  NatsStatisticsPtr nats_stats_;  // reused to read the connection's reconnect count
  // The data connection: the ordered consumers' subscriptions and their creation requests.
  NatsConnectionPtr connection_;
  JsCtxPtr js_;
  std::vector<Filter> filters_;
  std::vector<DeliveredMsgPtr> held_;  // the messages the last Poll() returned views into
  std::vector<Header> headers_;        // their headers; Message::headers are spans into this
  // (first index into headers_, count) per message of the Poll being filled; spans are set once
  // headers_ stops growing.
  std::vector<std::pair<size_t, size_t>> header_slots_;
};

}  // namespace ferry::source::jetstream
