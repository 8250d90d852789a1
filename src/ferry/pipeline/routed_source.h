// RoutedSource: the source::Source an inner pipeline of a routed pipeline reads (router.h). The
// router polls the real source, copies each message (its views die at the real source's next
// Poll) into the bounded RouteQueue of the message's table (a chunk per table and poll), and
// tells every queue of the real source's assignments and revocations in line with the messages.
// The RoutedSource replays that to its pipeline as a source would: OnAssigned / OnRevoked inside
// Poll, then the messages.
//
//   - A message at or below the position the inner pipeline's table holds for its partition
//     (what OnAssigned returned) is in that table already: it is not delivered, and the router's
//     RoutingPositions hears that it is durable (Skipped).
//   - Acknowledge (after the inner pipeline's commit is durable) goes to RoutingPositions
//     (Committed); the router acknowledges the real source itself.
//   - An inert RoutedSource (the inner pipeline fenced and asked for a new source: the router
//     restarts the routed pipeline) delivers nothing.
//
// Thread-safety: RouteQueue is thread-safe (the router pushes, the inner pipeline pops); a
// RoutedSource is used from its inner pipeline's thread only. A RouteQueue wakes the other side
// after releasing its lock: woken under it, the other thread (often scheduled at once, on the
// other core or in place of the waker) blocked on the lock still held, and the waker's unlock
// woke it a second time: three switches per wake-up instead of one (perf saw about a thousand in
// a routed run of 1 M messages).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/pipeline/routing_positions.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

// A message copied out of the real source's poll. Its bytes (payload, key, topic, subject,
// msg_id, headers, bad reason) and its headers live in the MessageChunk that holds it.
struct OwnedMessage {
  int32_t partition = -1;
  int64_t position = 0;
  std::string_view payload;
  std::string_view key;
  std::string_view topic;
  int32_t kafka_partition = -1;
  std::string_view subject;
  std::string_view msg_id;
  int64_t timestamp_us = 0;
  std::span<const source::Header> headers;
  std::string_view bad_reason;

  source::Message View() const;
};

// The messages of one poll for one table, in order, and their bytes in one block: no allocation
// per message. A chunk is filled on the router's thread and read on the table's; a spent chunk
// goes back to its queue, whose next push hands it to the router to fill again (RouteQueue), so
// in a steady flow chunks allocate nothing and no memory is freed on a thread that did not
// allocate it. Moving a chunk keeps its views valid.
struct MessageChunk {
  std::vector<OwnedMessage> messages;
  std::vector<source::Header> headers;  // every message's, in order
  std::unique_ptr<char[]> bytes;
  size_t bytes_capacity = 0;  // of `bytes`

  // Replaces the contents with a copy of polled[rows[i]] for each i, with the bad reason chosen
  // for it (bad_reasons[rows[i]]), in the storage the chunk has when it is large enough.
  void Fill(std::span<const source::Message> polled, std::span<const uint32_t> rows,
            std::span<const std::string> bad_reasons);
  // The memory the chunk holds.
  size_t footprint() const {
    return bytes_capacity + messages.capacity() * sizeof(OwnedMessage) +
           headers.capacity() * sizeof(source::Header);
  }
};

struct RouteItem {
  enum class Kind { kMessages, kAssign, kRevoke };
  Kind kind = Kind::kMessages;
  MessageChunk chunk;               // kMessages
  source::PartitionInfo partition;  // kAssign, kRevoke
};

class RouteQueue {
 public:
  explicit RouteQueue(size_t capacity) : capacity_(capacity) { spares_.reserve(kSpares); }

  // Queues the chunk, waiting while `capacity` messages or more wait (backpressure: the queue
  // may hold up to capacity - 1 + one chunk) and checking `give_up` every few milliseconds; false
  // when it gave up (the chunk is left in place). One lock and at most one wake-up of the reader
  // per chunk. Once queued, *chunk is a spent chunk the reader gave back (empty, its storage
  // kept for the next Fill), or an empty one.
  bool PushMessages(MessageChunk* chunk, const std::function<bool()>& give_up);
  // Assignments and revocations never wait.
  void PushEvent(RouteItem item);
  // Replaces *out with whole items holding up to `max_messages` messages (at least one item
  // when any waits, however large its chunk), waiting up to `timeout` for the first item.
  // Taking everything swaps the buffers (no item is moved). The chunks *out held are spent: up
  // to kSpares of them, each of at most kSpareBytes, are kept for PushMessages to hand back.
  void Pop(size_t max_messages, std::chrono::milliseconds timeout, std::vector<RouteItem>* out);
  // Drops the partition's waiting messages (a revocation); returns how many.
  size_t DropPartition(int32_t partition);
  // A reader waiting in Pop returns now, with nothing if nothing came (a stop, so that the
  // table's pipeline sees it without waiting out its poll timeout).
  void Wake();
  // Nothing more comes for a while (everything was polled, until_caught_up): a waiting reader
  // returns now, and from here on a Pop that finds the queue empty right after one that took
  // messages returns at once, so the reader's pipeline sees the end of its messages (and seals
  // its batch, PipelineOptions::seal_now) without waiting out its poll timeout.
  void SetSealHint();
  size_t messages() const;

  static constexpr size_t kSpares = 2;
  static constexpr size_t kSpareBytes = 256 * 1024;

 private:
  // Releases `lock`, then wakes one waiter of `cv` if `wake` (after: the class comment says why).
  static void UnlockThenNotify(std::unique_lock<std::mutex>* lock, std::condition_variable* cv,
                               bool wake);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable not_empty_;  // the reader waits on it
  std::condition_variable not_full_;   // the router waits on it
  bool reader_waiting_ = false;        // guarded by mu_
  bool writer_waiting_ = false;        // guarded by mu_
  bool wake_ = false;                  // guarded by mu_: the next Pop returns without waiting
  bool seal_hint_ = false;             // guarded by mu_
  bool took_ = false;                  // guarded by mu_: the last Pop took messages
  // The items waiting are items_[head_..].
  std::vector<RouteItem> items_;
  size_t head_ = 0;
  size_t messages_ = 0;
  std::vector<MessageChunk> spares_;  // guarded by mu_: spent chunks, empty, at most kSpares
};

class RoutedSource final : public source::Source {
 public:
  // `positions` outlives the source; `route` is the table's number in it.
  RoutedSource(std::shared_ptr<RouteQueue> queue, RoutingPositions* positions, int route,
               bool inert)
      : queue_(std::move(queue)), positions_(positions), route_(route), inert_(inert) {}

  Status Start(source::PartitionListener* listener) override;
  Status Poll(size_t max_messages, std::chrono::milliseconds timeout,
              std::vector<source::Message>* out) override;
  void Acknowledge(std::span<const source::CommittedPosition> positions) override;
  // The router follows the broker; the inner pipelines have no heads of their own.
  Result<std::vector<source::PartitionHead>> Heads() override {
    return std::vector<source::PartitionHead>();
  }
  Status Close() override;

 private:
  std::shared_ptr<RouteQueue> queue_;
  RoutingPositions* positions_;
  const int route_;
  const bool inert_;
  source::PartitionListener* listener_ = nullptr;
  bool closed_ = false;
  // Assigned partitions -> the table's position (nullopt: none).
  std::map<int32_t, std::optional<int64_t>> table_positions_;
  // From the queue: taken_[taken_next_..] not yet handled, the first of them from message
  // chunk_next_ of its chunk on. The messages delivered are views into these items, alive until
  // the next Poll replaces them.
  std::vector<RouteItem> taken_;
  size_t taken_next_ = 0;
  size_t chunk_next_ = 0;
};

}  // namespace ferry::pipeline
