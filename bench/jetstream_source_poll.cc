// JetStreamSource::Poll throughput, on its own (no decode, no Parquet, no Delta): the source's
// share of the JetStream → Delta benchmark, run beside bench/nats_bare_consumer.cc with the same
// stream and batch size (docs/BENCHMARKS.md).
//
//   jetstream_source_poll --server nats://127.0.0.1:4222 --stream bench --subject bench
//       --count 1000000 [--batch 1000] [--position 0] [--headers 1]
//
// --position is the table position the listener reports (0: none, start policy "all");
// --headers 0 turns off header reading (JetStreamOptions::read_headers).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ferry/source/jetstream/jetstream_source.h"

namespace {

namespace js = ferry::source::jetstream;

class FixedListener : public ferry::source::PartitionListener {
 public:
  explicit FixedListener(int64_t position) : position_(position) {}
  ferry::Result<std::optional<int64_t>> OnAssigned(const ferry::source::PartitionInfo&) override {
    return position_ > 0 ? std::optional<int64_t>(position_) : std::nullopt;
  }
  void OnRevoked(const ferry::source::PartitionInfo&) override {}

 private:
  int64_t position_;
};

}  // namespace

int main(int argc, char** argv) {
  js::JetStreamOptions options;
  int64_t count = 0;
  int64_t position = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    std::string value = argv[i + 1];
    if (key == "--server") {
      options.connection.servers.push_back(value);
    } else if (key == "--stream") {
      options.stream = value;
    } else if (key == "--subject") {
      options.filters.push_back(value);
    } else if (key == "--count") {
      count = std::atoll(value.c_str());
    } else if (key == "--batch") {
      options.batch_size = static_cast<size_t>(std::atoll(value.c_str()));
    } else if (key == "--headers") {
      options.read_headers = value != "0";
    } else if (key == "--position") {
      position = std::atoll(value.c_str());
    } else {
      std::fprintf(stderr, "jetstream_source_poll: unknown option %s\n", key.c_str());
      return 2;
    }
  }
  if (count <= 0) {
    std::fprintf(stderr,
                 "usage: jetstream_source_poll --server URL --stream S --subject X --count N "
                 "[--batch B] [--position P]\n");
    return 2;
  }
  auto source = js::JetStreamSource::Create(options);
  if (!source.ok()) {
    std::fprintf(stderr, "%s\n", source.status().ToString().c_str());
    return 1;
  }
  FixedListener listener(position);
  auto start = std::chrono::steady_clock::now();
  ferry::Status status = (*source)->Start(&listener);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::vector<ferry::source::Message> batch;
  int64_t received = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
  int64_t last = 0;
  while (received < count) {
    status =
        (*source)->Poll(static_cast<size_t>(count - received), std::chrono::seconds(30), &batch);
    if (!status.ok() || batch.empty()) {
      std::fprintf(stderr, "jetstream_source_poll: stopped after %lld messages: %s\n",
                   static_cast<long long>(received), status.ToString().c_str());
      return 1;
    }
    for (const ferry::source::Message& m : batch) {
      bytes += m.payload.size();
      checksum += m.payload.empty() ? 0 : static_cast<unsigned char>(m.payload[0]);
      last = m.position;
    }
    received += static_cast<int64_t>(batch.size());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "ferry JetStreamSource::Poll: %lld msgs, %llu bytes, %.3f s, %.0f msg/s (batch %zu, "
      "headers %s, last sequence %lld, checksum %llu)\n",
      static_cast<long long>(received), static_cast<unsigned long long>(bytes), seconds,
      static_cast<double>(received) / seconds, options.batch_size,
      options.read_headers ? "on" : "off", static_cast<long long>(last),
      static_cast<unsigned long long>(checksum));
  return (*source)->Close().ok() ? 0 : 1;
}
