// CompressionPool: compresses Parquet pages on a few threads while the caller goes on encoding.
//
// The FileWriter owns one when WriterOptions::compression_threads > 1 and hands it to its
// ColumnWriters: a finished page is submitted as a job and the column writer moves on to the
// next page; FlushChunk waits for the chunk's jobs, in page order, before writing the chunk. The
// file's bytes are the same as with inline compression (each page is compressed on its own
// either way), only the time they take changes.
//
// Each thread has its own Codec (codec contexts are not thread-safe). Submit() blocks while
// max_queued jobs wait, so the uncompressed pages held by the pool are bounded (about
// threads + max_queued pages of page_max_bytes). The destructor runs the jobs still queued and
// joins: the objects a job writes into must outlive the pool or be waited for.
//
// Thread-safety: Submit() from one thread at a time (the file's writer); the futures may be
// waited on from any thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/parquet/compression.h"

namespace ferry::parquet {

class CompressionPool {
 public:
  // A job runs on a pool thread with that thread's codec.
  using Job = std::function<Status(Codec* codec)>;

  // InvalidArgument unless 1 <= threads <= 64; errors of Codec::Create.
  static Result<std::unique_ptr<CompressionPool>> Create(CompressionCodec codec, int level,
                                                         int threads);
  ~CompressionPool();
  CompressionPool(const CompressionPool&) = delete;
  CompressionPool& operator=(const CompressionPool&) = delete;

  // Queues `job`; its Status arrives through the future.
  std::future<Status> Submit(Job job);

  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  CompressionPool() = default;
  void Loop(Codec* codec);

  std::vector<std::unique_ptr<Codec>> codecs_;  // one per thread
  std::vector<std::thread> threads_;
  size_t max_queued_ = 0;

  // A job and its result. Not a std::packaged_task: its shared state, which the caller's future
  // keeps until the chunk is flushed, holds the job and so everything the job owns (the
  // uncompressed page: a whole row group's worth stayed in memory). The job is destroyed as soon
  // as it has run.
  struct Queued {
    Job job;
    std::promise<Status> done;
  };

  std::mutex mu_;
  std::condition_variable work_;   // a job was queued, or stopping
  std::condition_variable space_;  // a job was taken off the queue
  std::deque<Queued> queue_;       // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
};

}  // namespace ferry::parquet
