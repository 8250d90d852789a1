// KeyIndexWriter: writes the upsert key index's file (key_index.h) on a thread of its own, so
// that an upsert pipeline's writer thread only encodes the index and never waits for the store.
//
//   KeyIndexWriter writer;
//   if (!writer.busy()) writer.Start({.store = ..., .key = ..., .commit_key = ..., ...});
//   writer.Wait();  // before reading the file back; the destructor waits too
//
// A job finishes the file: it reads the commit file the index is at (`commit_key`), appends its
// XXH64 and then the XXH64 of everything before, and replaces `key` whole (ObjectStore::Put).
// A commit file that cannot be read (a log cleaned up past it) leaves the old file in place.
// One job at a time: Start() while one runs is the caller's to avoid (busy()). The outcome is
// logged and counted; it never reaches the pipeline (the file is a cache).
//
// Thread-safety: Start(), busy() and Wait() from one thread; the job runs on the writer's own
// thread and touches only what the job holds (the store is shared, and thread-safe).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "ferry/metrics/metrics.h"
#include "ferry/storage/object_store.h"

namespace ferry::pipeline {

struct KeyIndexWriteJob {
  std::shared_ptr<storage::ObjectStore> store;
  std::string key;         // the index file
  std::string commit_key;  // the commit file of the index's version
  std::string bytes;       // the file but its last 16 bytes
  int64_t version = -1;
  std::string table;  // for messages
  metrics::Counter* written = nullptr;
  metrics::Counter* failed = nullptr;
};

class KeyIndexWriter {
 public:
  KeyIndexWriter() = default;
  ~KeyIndexWriter() { Wait(); }
  KeyIndexWriter(const KeyIndexWriter&) = delete;
  KeyIndexWriter& operator=(const KeyIndexWriter&) = delete;

  bool busy() const { return running_.load(std::memory_order_acquire); }
  // REQUIRES: !busy().
  void Start(KeyIndexWriteJob job);
  void Wait();

 private:
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace ferry::pipeline
