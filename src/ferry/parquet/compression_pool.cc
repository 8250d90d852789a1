#include "ferry/parquet/compression_pool.h"

#include <utility>

namespace ferry::parquet {

Result<std::unique_ptr<CompressionPool>> CompressionPool::Create(CompressionCodec codec, int level,
                                                                 int threads) {
  if (threads < 1 || threads > 64) {
    return InvalidArgument("compression threads must be between 1 and 64, got {}", threads);
  }
  std::unique_ptr<CompressionPool> pool(new CompressionPool());
  for (int i = 0; i < threads; ++i) {
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Codec> c, Codec::Create(codec, level));
    pool->codecs_.push_back(std::move(c));
  }
  pool->max_queued_ = static_cast<size_t>(threads) * 2;
  for (int i = 0; i < threads; ++i) {
    pool->threads_.emplace_back(&CompressionPool::Loop, pool.get(), pool->codecs_[i].get());
  }
  return pool;
}

CompressionPool::~CompressionPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) {
    t.join();
  }
}

std::future<Status> CompressionPool::Submit(Job job) {
  Queued queued{.job = std::move(job), .done = {}};
  std::future<Status> done = queued.done.get_future();
  {
    std::unique_lock lock(mu_);
    space_.wait(lock, [&] { return queue_.size() < max_queued_; });
    queue_.push_back(std::move(queued));
  }
  work_.notify_one();
  return done;
}

void CompressionPool::Loop(Codec* codec) {
  for (;;) {
    Queued task;
    {
      std::unique_lock lock(mu_);
      work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) {
        return;  // stopping, and every queued job has run
      }
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    space_.notify_one();
    Status status = task.job(codec);
    task.job = nullptr;  // what the job owns goes now, not when the caller drops the future
    task.done.set_value(std::move(status));
  }
}

}  // namespace ferry::parquet
