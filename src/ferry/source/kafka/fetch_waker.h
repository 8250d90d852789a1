// FetchWaker: restarts librdkafka 2.0.2's fetching as soon as the application has drained the
// consumer queue, instead of up to a second later.
//
// Why. A broker thread of librdkafka 2.0.2 takes every partition off its fetch list once the
// consumer queue holds queued.min.messages messages or queued.max.messages.kbytes of payload
// (rd_kafka_toppar_fetch_decide: "queued.max.messages.kbytes exceeded"), with no deadline, and
// decides again only when the thread next wakes: on a request or response of its own, or after
// its one-second serve timeout. Draining the queue does not wake it. With the queue sized from
// max_memory (16 MiB by default) the application drains a full queue in tens of milliseconds and
// then waited: a 300,000-message run showed 0.4-2.0 s gaps between a broker's fetches, about
// three quarters of the run (docs/BENCHMARKS-history.md, "Memory"). librdkafka 2.2 added
// fetch.queue.backoff.ms for this; Debian 12 ships 2.0.2.
//
// How. Wake() (the pipeline thread, non-blocking) asks a thread of this class to send a
// ListOffsets request for the latest offset of every assigned partition
// (rd_kafka_offsets_for_times with timestamp -1). The request is queued on each leader's broker
// thread, which wakes, decides its partitions again and fetches the ones below the caps. The
// answer is not used. Requests coalesce: one at a time, and a Wake() during one asks for one
// more after it.
//
// When. KafkaSource calls Wake() when a poll finds the consumer queue empty after at least half
// of a queue's worth (either cap) was taken since the last wake: only then can fetching have
// stopped on the caps. A consumer that keeps up with a slow topic never gets there, so a
// caught-up or trickling pipeline sends no requests.
//
// Thread-safety: Wake() and wakes() from any thread; the destructor joins the thread and must
// run before the rd_kafka_t is destroyed.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ferry::source::kafka {

class FetchWaker {
 public:
  // `rk` must outlive this object. `request_timeout_ms` bounds one request (and the destructor's
  // wait for it).
  FetchWaker(rd_kafka_t* rk, int request_timeout_ms);
  ~FetchWaker();

  FetchWaker(const FetchWaker&) = delete;
  FetchWaker& operator=(const FetchWaker&) = delete;

  void Wake();
  // Requests sent so far.
  int64_t wakes() const { return wakes_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void SendRequest();

  rd_kafka_t* rk_;
  const int request_timeout_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false;  // guarded by mu_
  bool stopping_ = false;   // guarded by mu_
  std::atomic<int64_t> wakes_{0};
  std::thread thread_;
};

// Decides when a poll that found the queue empty should wake the fetchers (see "When" above).
// Used on the pipeline thread only.
class FetchWakePolicy {
 public:
  // The consumer's caps; a cap <= 0 is ignored.
  FetchWakePolicy(int64_t queue_max_bytes, int64_t queue_min_messages)
      : byte_threshold_(queue_max_bytes > 0 ? queue_max_bytes / 2 : 0),
        message_threshold_(queue_min_messages > 0 ? queue_min_messages / 2 : 0) {}

  void Took(int64_t bytes) {
    bytes_since_wake_ += bytes;
    ++messages_since_wake_;
  }
  // The consumer queue was found empty: true when the caller should wake the fetchers now
  // (and the counts start again).
  bool QueueEmpty() {
    bool due = (byte_threshold_ > 0 && bytes_since_wake_ >= byte_threshold_) ||
               (message_threshold_ > 0 && messages_since_wake_ >= message_threshold_);
    if (due) {
      bytes_since_wake_ = 0;
      messages_since_wake_ = 0;
    }
    return due;
  }

 private:
  int64_t byte_threshold_;
  int64_t message_threshold_;
  int64_t bytes_since_wake_ = 0;
  int64_t messages_since_wake_ = 0;
};

}  // namespace ferry::source::kafka
