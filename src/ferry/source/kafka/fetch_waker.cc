#include "ferry/source/kafka/fetch_waker.h"

#include "ferry/base/log.h"
#include "ferry/source/kafka/kafka_handles.h"

namespace ferry::source::kafka {

FetchWaker::FetchWaker(rd_kafka_t* rk, int request_timeout_ms)
    : rk_(rk), request_timeout_ms_(request_timeout_ms), thread_([this] { Run(); }) {}

FetchWaker::~FetchWaker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void FetchWaker::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    requested_ = true;
  }
  cv_.notify_one();
}

void FetchWaker::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_) {
      return;
    }
    requested_ = false;
    lock.unlock();
    SendRequest();
    lock.lock();
  }
}

void FetchWaker::SendRequest() {
  rd_kafka_topic_partition_list_t* raw = nullptr;
  if (rd_kafka_assignment(rk_, &raw) != RD_KAFKA_RESP_ERR_NO_ERROR || raw == nullptr) {
    return;
  }
  PartitionListPtr assigned(raw);
  if (assigned->cnt == 0) {
    return;
  }
  for (int i = 0; i < assigned->cnt; ++i) {
    assigned->elems[i].offset = -1;  // the latest offset: the cheapest ListOffsets answer
  }
  wakes_.fetch_add(1, std::memory_order_relaxed);
  rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk_, assigned.get(), request_timeout_ms_);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Only a wake-up: fetching goes on at librdkafka's own pace.
    FERRY_LOG_DEBUG("kafka: fetch wake-up request: {}", rd_kafka_err2str(err));
  }
}

}  // namespace ferry::source::kafka
