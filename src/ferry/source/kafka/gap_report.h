// DescribeGap: turns librdkafka's refusal to reset an out-of-range offset (the consumer runs with
// auto.offset.reset=error) into the DataLoss status the pipeline stops on, naming the partition
// and the offsets that are gone, after asking the broker for the partition's current log range.
//
// Thread-safety: a free function; call it on the consumer's thread.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>

#include "ferry/base/status.h"

namespace ferry::source::kafka {

// REQUIRES: error.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET. Always DataLoss:
//   "kafka/T/P: offsets A..B are no longer on the broker (log start is now B+1): ..." when the
//   wanted offset fell below the log start (retention),
//   "kafka/T/P: the next offset to read, N, lies past the broker's log end H ..." when the table
//   is ahead of the topic, or a generic message with librdkafka's reason otherwise.
Status DescribeGap(rd_kafka_t* rk, const rd_kafka_message_t& error,
                   std::chrono::milliseconds timeout);

}  // namespace ferry::source::kafka
