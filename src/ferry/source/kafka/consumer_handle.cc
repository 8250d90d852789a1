#include "ferry/source/kafka/consumer_handle.h"

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/source/kafka/kafka_conf.h"

namespace ferry::source::kafka {

Status ConsumerHandle::Close(const std::function<void(rd_kafka_event_t*)>& serve) {
  QueuePtr queue(rd_kafka_queue_new(rk_.get()));
  ErrorPtr error(rd_kafka_consumer_close_queue(rk_.get(), queue.get()));
  const int64_t deadline_us = MonotonicMicros() + close_timeout_.count() * 1000;
  while (error == nullptr && !rd_kafka_consumer_closed(rk_.get()) &&
         MonotonicMicros() < deadline_us) {
    EventPtr event(rd_kafka_queue_poll(queue.get(), 100));
    if (event != nullptr) {
      serve(event.get());
    }
  }
  if (error != nullptr) {
    return Internal("kafka: closing the consumer: {}", rd_kafka_error_string(error.get()));
  }
  if (!rd_kafka_consumer_closed(rk_.get())) {
    return Unavailable("kafka: leaving group '{}' took longer than {} ms", group_id_,
                       close_timeout_.count());
  }
  return Status::OK();
}

void ConsumerHandle::Destroy() {
  if (rk_ != nullptr && !DestroyWithin(rk_.release(), close_timeout_)) {
    FERRY_LOG_WARN(
        "kafka: destroying the consumer of group '{}' did not finish within {} ms (a librdkafka "
        "2.0.x broker thread that never ends, as after a topic was deleted under a group "
        "consumer); its threads are left behind",
        group_id_, close_timeout_.count());
  }
}

}  // namespace ferry::source::kafka
