// The process memory budget (`max_memory`, docs/memory.md): how one number is divided among the
// pipelines and, inside a pipeline, among the source's prefetch and the batches, and what the
// configuration asks for that does not fit.
//
// 1. The process keeps kProcessReserve (at most a quarter of max_memory) for what no pipeline
//    owns: code, thread stacks, the libraries' own state, the allocator's slack (about 65 MiB
//    measured under the Kafka benchmark, docs/memory.md).
// 2. Each pipeline gets an equal share S of the rest. Its source's prefetch gets S / 3; for
//    Kafka, librdkafka's queue (queued.max.messages.kbytes) a quarter of that, because
//    librdkafka holds about four times the queued payload (each message's op, the fetch
//    responses its messages pin), and each broker's fetch response (fetch.max.bytes) 1/32.
// 3. The rest of S is cut into equal units, one per copy of a batch that can be alive at once:
//    the open batch, its recycled columns (open_batch.h), each of the max_in_flight sealed
//    batches, and the Parquet pages of the file being written; each counted twice, because a
//    growing column's capacity runs up to twice its size.
// 4. A batch's bytes (the `max_bytes` trigger) and a file's buffered row group are capped at one
//    unit: a batch that would pass it is committed smaller, never dropped.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/base/status.h"

namespace ferry::config {

struct Config;

inline constexpr int64_t kDefaultMaxMemory = int64_t{256} << 20;
// Kept out of the pipelines' shares (step 1), when max_memory is at least four times it.
inline constexpr int64_t kProcessReserve = int64_t{64} << 20;
// A pipeline's share below this cannot hold a useful batch: `run` and `config check` refuse.
inline constexpr int64_t kMinPipelineMemory = int64_t{16} << 20;

// One pipeline's part of the budget (bytes).
struct MemoryShare {
  int64_t pipeline = 0;  // (max_memory - the process's reserve) / pipelines
  int64_t source = 0;    // the source's prefetch, all of it
  // librdkafka settings derived from `source` (a property the user sets wins over them).
  int64_t queue_max_kbytes = 0;    // queued.max.messages.kbytes
  int64_t queue_min_messages = 0;  // queued.min.messages
  int64_t fetch_max_bytes = 0;     // fetch.max.bytes, per broker
  // The most one batch may hold (its byte trigger is the smaller of this and `max_bytes`), and
  // the most a file being written buffers before it flushes a row group.
  int64_t batch = 0;
};

// What max_memory keeps for the process outside the pipelines (step 1).
int64_t ProcessReserve(int64_t max_memory);

// The share of each of `pipelines` pipelines whose batches keep up to `max_in_flight` sealed
// batches in flight. REQUIRES: pipelines >= 1, 0 <= max_in_flight.
MemoryShare DivideMemory(int64_t max_memory, int pipelines, int64_t max_in_flight);

// Sets every pipeline's `memory` from config->max_memory and its number of pipelines (again
// after `run --pipeline` kept only some of them).
void AssignMemory(Config* config);

// What `config check` reports about the budget, one line per finding, each naming the keys
// involved: a max_bytes that will be cut to the budget's unit, a Kafka property that overrides
// a derived one with more. Empty when everything fits.
std::vector<std::string> MemoryFindings(const Config& config);

// "pipeline <id>: max_memory share ... (source ..., batch ...)": the division, for the log and
// `config check`.
std::string DescribeShare(const Config& config, size_t pipeline_index);

// InvalidArgument naming max_memory when a pipeline's share is below kMinPipelineMemory.
Status CheckMemoryBudget(const Config& config);

// "256 MiB", "1.5 GiB", "700 KiB": for messages.
std::string FormatBytes(int64_t bytes);

}  // namespace ferry::config
