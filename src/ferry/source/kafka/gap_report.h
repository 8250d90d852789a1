// Offsets the broker refused: librdkafka's refusal to reset an out-of-range offset (the consumer
// runs with auto.offset.reset=error) turned into what ferry reports. InspectRefusal asks the
// broker for the partition's current log range; RefusalStatus words the DataLoss status the
// pipeline stops on, naming topic, partition, the offset wanted and the broker's log range:
//   - below the log start (retention or DeleteRecords removed offsets before ferry ingested
//     them): a gap, which on_gap = "continue" may skip (kafka_source.h, step 5);
//   - past the log end (the topic was deleted and recreated under ferry, or the table belongs to
//     another cluster): never skipped, whatever on_gap says.
//
// Thread-safety: free functions; call them on the consumer's thread.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "ferry/base/status.h"

namespace ferry::source::kafka {

struct RefusedOffset {
  std::string topic;  // empty when librdkafka named no partition
  int32_t partition = -1;
  std::string key;      // "kafka/<topic>/<partition>"
  int64_t wanted = -1;  // the offset librdkafka tried to fetch
  // The broker's log: offsets low..high-1; -1 when the watermark query failed.
  int64_t low = -1;
  int64_t high = -1;
  std::string reason;  // librdkafka's words
  // Set by the caller when `wanted` is where the start policy (named here, e.g. "offsets") put a
  // partition the table holds no position for, and nothing was read since; empty when `wanted`
  // follows the table's position or what was read.
  std::string started_by;

  bool BelowLogStart() const { return wanted >= 0 && low >= 0 && wanted < low; }
  bool PastLogEnd() const { return wanted >= 0 && high >= 0 && wanted > high; }
};

// A broker's log range for messages: "offsets L..H-1", "no records (log start and end H)", or "an
// unknown range (...)" when either is negative (the watermark query failed).
std::string DescribeLogRange(int64_t low, int64_t high);

// REQUIRES: error.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET.
RefusedOffset InspectRefusal(rd_kafka_t* rk, const rd_kafka_message_t& error,
                             std::chrono::milliseconds timeout);

// Always DataLoss:
//   "kafka/T/P: offsets A..B of topic 'T' partition P are no longer on the broker (log start is
//    now B+1): retention removed them before they were ingested. Set on_gap = ..." (below),
//   "kafka/T/P: the table's position for topic 'T' partition P is offset N-1, but the broker's
//    log now holds offsets L..H-1: was the topic deleted and recreated? ..." (past the end),
//   "kafka/T/P: topic 'T' partition P was to start at offset N (start = "offsets"; the table
//    holds no position for it), but the broker's log now holds ..." (past the end, started_by),
//   or a generic message with librdkafka's reason otherwise.
Status RefusalStatus(const RefusedOffset& refused);

}  // namespace ferry::source::kafka
