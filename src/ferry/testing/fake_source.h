// FakeSource: an in-memory Source for pipeline tests, with controls a test uses to play broker:
// produce messages, assign and revoke partitions, redeliver old messages, fail a poll.
//
// Partition i has key "<prefix>/<i>"; its messages have positions first_position, +1, ... in the
// order produced. On assignment the source asks the listener for the committed position p and
// delivers from p + 1 (from first_position when the table has none), like a real source.
//
// Thread-safety: the test controls are thread-safe and may run while the pipeline polls from
// another thread; the Source methods are called from one thread.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ferry/source/source.h"

namespace ferry::testing {

class FakeSource final : public source::Source {
 public:
  struct Options {
    std::string prefix = "fake/t";
    int partitions = 1;
    int64_t first_position = 0;
    // Partitions assigned at Start (all when true); otherwise call Assign().
    bool assign_all_at_start = true;
  };
  explicit FakeSource(Options options);

  // --- test controls ---
  void Produce(int partition, std::string payload, std::string key = "");
  // Takes effect in the next Poll: OnRevoked, then nothing more from the partition.
  void Revoke(int partition);
  // Takes effect in the next Poll: OnAssigned, then delivery from the table's position + 1.
  void Assign(int partition);
  // The next Poll delivers the partition again from `position` (a broker redelivery).
  void Redeliver(int partition, int64_t position);
  // The next Poll returns `status` (once).
  void FailNextPoll(Status status);
  // Every Acknowledge() call's positions, in order.
  std::vector<source::CommittedPosition> acknowledged() const;
  int64_t produced(int partition) const;
  // True while a Revoke, Assign or Redeliver waits for the next Poll; false once a Poll has
  // applied them (the listener's calls included).
  bool events_pending() const;
  bool closed() const;

  // --- Source ---
  Status Start(source::PartitionListener* listener) override;
  Status Poll(size_t max_messages, std::chrono::milliseconds timeout,
              std::vector<source::Message>* out) override;
  void Acknowledge(std::span<const source::CommittedPosition> positions) override;
  Result<std::vector<source::PartitionHead>> Heads() override;
  Status Close() override;

 private:
  struct StoredMessage {
    std::string payload;
    std::string key;
    int64_t timestamp_us;
  };
  struct Partition {
    source::PartitionInfo info;
    std::deque<StoredMessage> messages;  // index i has position first_position + i
    bool assigned = false;
    int64_t next = 0;  // next position to deliver
  };
  enum class EventKind { kAssign, kRevoke, kRedeliver };
  struct Event {
    EventKind kind;
    int partition;
    int64_t position;
  };

  Status ApplyEventsLocked();

  const Options options_;
  mutable std::mutex mu_;
  std::vector<Partition> partitions_;
  std::vector<Event> events_;
  std::optional<Status> fail_next_;
  std::vector<source::CommittedPosition> acknowledged_;
  source::PartitionListener* listener_ = nullptr;
  bool closed_ = false;
  size_t round_robin_ = 0;
  // Copies of the delivered messages, alive until the next Poll (views point into them).
  std::vector<StoredMessage> delivered_;
  std::string topic_;
};

// Forwards to a FakeSource the test keeps, so the test can still look at it (acks) after the
// pipeline has closed and dropped its source.
class SharedSource final : public source::Source {
 public:
  explicit SharedSource(std::shared_ptr<FakeSource> fake) : fake_(std::move(fake)) {}
  Status Start(source::PartitionListener* l) override { return fake_->Start(l); }
  Status Poll(size_t max, std::chrono::milliseconds timeout,
              std::vector<source::Message>* out) override {
    return fake_->Poll(max, timeout, out);
  }
  void Acknowledge(std::span<const source::CommittedPosition> p) override { fake_->Acknowledge(p); }
  Result<std::vector<source::PartitionHead>> Heads() override { return fake_->Heads(); }
  Status Close() override { return fake_->Close(); }

 private:
  std::shared_ptr<FakeSource> fake_;
};

}  // namespace ferry::testing
