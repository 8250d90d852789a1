#include "ferry/config/memory_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "ferry/config/config.h"

namespace ferry::config {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = kKiB * 1024;
// librdkafka refuses a fetch.max.bytes below message.max.bytes (default 1,000,000).
constexpr int64_t kMinFetchBytes = kMiB;
// queued.min.messages: one message per this many bytes of the queue, so that the bytes cap
// binds first for messages of this size and up (librdkafka counts only payload bytes; its
// per-message overhead is a few hundred bytes more).
constexpr int64_t kQueueBytesPerMessage = 256;
constexpr int64_t kMinQueueMessages = 10000;

// The value of a librdkafka property the user set, or -1 (absent or not a number).
int64_t UserProperty(const KafkaConfig& k, std::string_view key) {
  int64_t value = -1;
  for (const auto& [name, text] : k.properties) {
    const char* end = text.data() + text.size();
    int64_t parsed = 0;
    if (name == key && std::from_chars(text.data(), end, parsed).ptr == end) {
      value = parsed;
    }
  }
  return value;
}

std::string PipelineKey(size_t index) {
  return fmt::format("pipeline[{}]", index);
}

}  // namespace

int64_t ProcessReserve(int64_t max_memory) {
  return std::min(kProcessReserve, max_memory / 4);
}

MemoryShare DivideMemory(int64_t max_memory, int pipelines, int64_t max_in_flight) {
  MemoryShare s;
  s.pipeline = (max_memory - ProcessReserve(max_memory)) / std::max(1, pipelines);
  s.source = s.pipeline / 3;
  // librdkafka holds about four times the queue's payload bytes: each message's op and the
  // fetch responses its messages pin (heaptrack, docs/memory.md).
  const int64_t queue_bytes = s.source / 4;
  s.queue_max_kbytes = std::max<int64_t>(1, queue_bytes / kKiB);
  s.queue_min_messages = std::max(kMinQueueMessages, queue_bytes / kQueueBytesPerMessage);
  s.fetch_max_bytes = std::max(kMinFetchBytes, s.source / 32);
  // Open batch, recycled columns, the Parquet pages of the file being written, and each sealed
  // batch in flight; twice over for the capacity of growing columns.
  const int64_t copies = 3 + std::max<int64_t>(0, max_in_flight);
  s.batch = std::max<int64_t>(kKiB, (s.pipeline - s.source) / (2 * copies));
  return s;
}

void AssignMemory(Config* config) {
  for (PipelineConfig& p : config->pipelines) {
    p.memory = DivideMemory(config->max_memory, static_cast<int>(config->pipelines.size()),
                            p.batch.max_in_flight);
  }
}

std::string DescribeShare(const Config& config, size_t pipeline_index) {
  const PipelineConfig& p = config.pipelines[pipeline_index];
  const MemoryShare& m = p.memory;
  std::string source;
  if (p.kafka) {
    source = fmt::format(
        " (queued.max.messages.kbytes {}, queued.min.messages {}, "
        "fetch.max.bytes {}, unless set in kafka.properties)",
        m.queue_max_kbytes, m.queue_min_messages, m.fetch_max_bytes);
  }
  return fmt::format(
      "pipeline {}: {} of max_memory {}: source prefetch {}{}; batches {} each (max_bytes {}, "
      "max_in_flight {})",
      p.id, FormatBytes(m.pipeline), FormatBytes(config.max_memory), FormatBytes(m.source), source,
      FormatBytes(m.batch), FormatBytes(std::min(p.batch.max_bytes, m.batch)),
      p.batch.max_in_flight);
}

std::vector<std::string> MemoryFindings(const Config& config) {
  std::vector<std::string> out;
  for (size_t i = 0; i < config.pipelines.size(); ++i) {
    const PipelineConfig& p = config.pipelines[i];
    const MemoryShare& m = p.memory;
    if (p.batch.max_bytes_set && p.batch.max_bytes > m.batch) {
      out.push_back(fmt::format(
          "{0}.batch.max_bytes {1} is more than a batch may hold under max_memory {2} "
          "({3} pipeline(s), {0}.batch.max_in_flight {4}): batches are cut at {5}; raise "
          "max_memory or lower max_bytes to silence this",
          PipelineKey(i), FormatBytes(p.batch.max_bytes), FormatBytes(config.max_memory),
          config.pipelines.size(), p.batch.max_in_flight, FormatBytes(m.batch)));
    }
    if (!p.kafka) {
      continue;
    }
    const int64_t kbytes = UserProperty(*p.kafka, "queued.max.messages.kbytes");
    if (kbytes > m.queue_max_kbytes) {
      out.push_back(fmt::format(
          "{}.kafka.properties queued.max.messages.kbytes {} is more than the {} KiB max_memory "
          "{} gives the prefetch queue: the property wins, and the process may use more than "
          "max_memory",
          PipelineKey(i), kbytes, m.queue_max_kbytes, FormatBytes(config.max_memory)));
    }
    const int64_t fetch = UserProperty(*p.kafka, "fetch.max.bytes");
    if (fetch > m.fetch_max_bytes) {
      out.push_back(fmt::format(
          "{}.kafka.properties fetch.max.bytes {} is more than the {} max_memory {} gives each "
          "fetch: the property wins, and the process may use more than max_memory",
          PipelineKey(i), fetch, FormatBytes(m.fetch_max_bytes), FormatBytes(config.max_memory)));
    }
  }
  return out;
}

Status CheckMemoryBudget(const Config& config) {
  if (config.pipelines.empty()) {
    return Status::OK();
  }
  const int64_t share = (config.max_memory - ProcessReserve(config.max_memory)) /
                        static_cast<int64_t>(config.pipelines.size());
  if (share < kMinPipelineMemory) {
    return InvalidArgument(
        "{}: max_memory {} leaves {} to each of {} pipeline(s) after the process's {}; each "
        "needs at least {}",
        config.path, FormatBytes(config.max_memory), FormatBytes(share), config.pipelines.size(),
        FormatBytes(ProcessReserve(config.max_memory)), FormatBytes(kMinPipelineMemory));
  }
  return Status::OK();
}

std::string FormatBytes(int64_t bytes) {
  if (bytes >= kMiB * 1024 && bytes % (kMiB * 1024) == 0) {
    return fmt::format("{} GiB", bytes / (kMiB * 1024));
  }
  if (bytes >= kMiB * 1024) {
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / static_cast<double>(kMiB * 1024));
  }
  if (bytes >= kMiB && bytes % kMiB == 0) {
    return fmt::format("{} MiB", bytes / kMiB);
  }
  if (bytes >= kMiB) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  }
  if (bytes >= kKiB) {
    return fmt::format("{} KiB", bytes / kKiB);
  }
  return fmt::format("{} B", bytes);
}

}  // namespace ferry::config
