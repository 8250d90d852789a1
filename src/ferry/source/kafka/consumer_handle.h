// ConsumerHandle: the librdkafka consumer handle of a KafkaSource, and the two steps that end it
// (kafka_source.h, step 7): leaving the group through rd_kafka_consumer_close_queue(), serving the
// events that arrive meanwhile (the final revocation, commit results) until the consumer is closed
// or a timeout passes, then destroying the handle on a thread of its own, waited for at most the
// same timeout (DestroyWithin, kafka_conf.h: librdkafka 2.0.x can hang there for ever).
//
// Thread-safety: used from the source's thread only.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "ferry/base/status.h"
#include "ferry/source/kafka/kafka_handles.h"

namespace ferry::source::kafka {

class ConsumerHandle {
 public:
  // `group_id` names the consumer in errors and log lines.
  ConsumerHandle(std::string group_id, std::chrono::milliseconds close_timeout)
      : group_id_(std::move(group_id)), close_timeout_(close_timeout) {}
  // Destroys a handle never given to Destroy() with a plain rd_kafka_destroy().
  ~ConsumerHandle() = default;

  ConsumerHandle(const ConsumerHandle&) = delete;
  ConsumerHandle& operator=(const ConsumerHandle&) = delete;

  void Reset(KafkaPtr rk) { rk_ = std::move(rk); }
  rd_kafka_t* get() const { return rk_.get(); }

  // Leaves the group; `serve` gets each event of the close queue (REBALANCE, OFFSET_COMMIT, ...)
  // until the consumer is closed or close_timeout passes. REQUIRES: get() != nullptr.
  // Errors: Internal if librdkafka refuses to close, Unavailable after close_timeout.
  Status Close(const std::function<void(rd_kafka_event_t*)>& serve);

  // Destroys the handle within close_timeout, or logs that its threads are left behind. The
  // handle is gone either way: get() is null after. No-op without a handle.
  void Destroy();

 private:
  std::string group_id_;
  std::chrono::milliseconds close_timeout_;
  KafkaPtr rk_;
};

}  // namespace ferry::source::kafka
