// KafkaSourceStats: the Kafka source's counters for metrics and tests, shared by KafkaSource and
// the AssignmentController it owns (assignment_controller.h).
//
// Thread-safety: plain data, written on the source's thread.
#pragma once

#include <cstdint>

namespace ferry::source::kafka {

// Monotonic over the source's life.
struct KafkaSourceStats {
  int64_t messages = 0;              // delivered by Poll
  int64_t redeliveries_dropped = 0;  // below the start or at/below the last offset taken
  int64_t assignments = 0;           // rebalance callbacks that assigned partitions
  int64_t revocations = 0;           // rebalance callbacks that revoked partitions
  int64_t offset_commits = 0;        // group offset commits acknowledged by the broker
  int64_t offset_commit_failures = 0;
  int64_t broker_errors = 0;  // transient errors reported by librdkafka (it retries)
  int64_t rate_limit_pauses = 0;
  int64_t rate_limited_us = 0;  // time partitions spent paused by the rate limit (ended pauses)
  int64_t gaps = 0;             // ranges skipped with on_gap = kContinue
  int64_t lost_offsets = 0;     // offsets in those ranges
  // Partitions the start policy began at the log start or end, started again at the new one
  // because the log moved under that offset before anything was read (no gap).
  int64_t policy_restarts = 0;
};

}  // namespace ferry::source::kafka
