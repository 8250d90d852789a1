#include "ferry/pipeline/key_index_writer.h"

#include <xxhash.h>

#include <utility>

#include "ferry/base/check.h"
#include "ferry/base/endian.h"
#include "ferry/base/log.h"

namespace ferry::pipeline {
namespace {

Status WriteIndexFile(KeyIndexWriteJob& job) {
  FERRY_ASSIGN_OR_RETURN(std::string commit, job.store->Read(job.commit_key));
  AppendLE<uint64_t>(&job.bytes, XXH64(commit.data(), commit.size(), 0));
  AppendLE<uint64_t>(&job.bytes, XXH64(job.bytes.data(), job.bytes.size(), 0));
  return job.store->Put(job.key, job.bytes);
}

}  // namespace

void KeyIndexWriter::Start(KeyIndexWriteJob job) {
  FERRY_CHECK(!busy());
  Wait();  // the finished thread
  running_.store(true, std::memory_order_release);
  thread_ = std::thread([this, job = std::move(job)]() mutable {
    Status st = WriteIndexFile(job);
    if (st.ok()) {
      FERRY_LOG_DEBUG("upsert key index of {} at version {} written ({} bytes)", job.table,
                      job.version, job.bytes.size());
      if (job.written != nullptr) {
        job.written->Increment();
      }
    } else {
      FERRY_LOG_WARN(
          "upsert key index of {}: could not write it at version {} (a restart reads more of "
          "the log, or the table): {}",
          job.table, job.version, st.ToString());
      if (job.failed != nullptr) {
        job.failed->Increment();
      }
    }
    running_.store(false, std::memory_order_release);
  });
}

void KeyIndexWriter::Wait() {
  if (thread_.joinable()) {
    thread_.join();
  }
}

}  // namespace ferry::pipeline
