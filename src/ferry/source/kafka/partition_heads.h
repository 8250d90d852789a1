// PartitionHeads: the broker's log range of each partition a KafkaSource consumes now, and how
// far the consumer has read it (Source::Heads(), source.h), as `ferry status`, the lag metrics
// and --until-caught-up need them.
//
// How the figures are found (one query of each kind for all partitions, never one per partition:
// asking each partition in turn took 0.1-0.7 s for 128 partitions):
//   1. Log start and high watermark: the values librdkafka caches from fetch responses
//      (rd_kafka_get_watermark_offsets), where there are any.
//   2. read_through: librdkafka's application position (rd_kafka_position) is the offset after the
//      last message or control record (commit/abort marker) the consumer returned, aborted records
//      being skipped below a marker; with nothing held back by the rate limit, everything below it
//      was delivered.
//   3. The end: the cached high watermark for a partition read through it; else asked of the
//      brokers (ListOffsets through rd_kafka_offsets_for_times with the special timestamps). Under
//      read_committed ListOffsets answers the last stable offset, the first offset of the oldest
//      open transaction, beyond which the consumer cannot read (the high watermark would hold
//      --until-caught-up forever behind an open transaction, tests/integration/kafka_txn_test.cc).
//      Partitions without a cached log start (before their first fetch) ask for it the same way.
//      All of it within request_timeout; when every partition has a cached high watermark, the
//      end is waited for at most 1 s (a pipeline thread must not wait request_timeout at each
//      heads refresh of an outage) and the cached value stands in.
//
// Thread-safety: used on the source's thread (it reads the PartitionTable).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <vector>

#include "ferry/source/kafka/partition_table.h"
#include "ferry/source/source.h"

namespace ferry::source::kafka {

class PartitionHeads {
 public:
  // `rk` and `table` are borrowed and must outlive this object.
  PartitionHeads(rd_kafka_t* rk, const PartitionTable* table,
                 std::chrono::milliseconds request_timeout)
      : rk_(rk), table_(table), request_timeout_(request_timeout) {}

  // The assigned partitions' heads: first_position = low, last_position = end - 1 (-1 for an
  // empty partition), read_through; unknown values stay nullopt.
  std::vector<PartitionHead> Query() const;

 private:
  struct Mark {
    const PartitionState* state;
    int64_t low = -1;
    int64_t high = -1;
    int64_t cached_high = -1;  // the high watermark of the last fetch: if ListOffsets fails
    int64_t read_through = -1;
  };

  // Steps 1 and 2: one mark per assigned partition; `no_low` gets those without a log start.
  std::vector<Mark> Cached(std::vector<size_t>* no_low) const;
  void ReadThrough(std::vector<Mark>* marks) const;
  // Step 3: asks the brokers for `which` (RD_KAFKA_OFFSET_END or _BEGINNING) of marks[ask[..]],
  // waiting at most `timeout_ms`; unanswered marks keep -1.
  void Ask(int64_t which, const std::vector<size_t>& ask, int64_t timeout_ms,
           std::vector<Mark>* marks) const;

  rd_kafka_t* rk_;
  const PartitionTable* table_;
  std::chrono::milliseconds request_timeout_;
};

}  // namespace ferry::source::kafka
