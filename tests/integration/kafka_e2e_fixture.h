// The fixture of the `ferry run` end-to-end Kafka tests, whatever serves the topic: librdkafka's
// mock cluster (kafka_pipeline_test.cc) or a real Apache Kafka broker
// (kafka_real_broker_test.cc). A subclass's SetUp sets the bootstrap servers, the topic and the
// test's directory; the fixture writes configurations like the one in docs/kafka.md, starts
// `ferry produce kafka` and `ferry run` as child processes, and checks the table: each id once,
// by ferry's reader and by DuckDB, with every partition's txn position at its largest offset.
//
// Header-only: FERRY_BINARY_DIR (the ferry binary) is defined for each test target.
//
// Thread-safety: a gtest fixture, one thread.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"

namespace ferry::e2e {

inline constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
// What `ferry produce kafka` sends: ids 1, 2, ... in "id".
inline constexpr char kProduceTemplate[] =
    R"({"id": {{seq}}, "dateTime": "{{now:MM/dd/yyyy - HH:mm:ss Z}}", "payload": "test #{{seq}}"})";

// Ids (sorted), the largest _offset per _partition, txns and files of a table written with the
// fixture's configuration.
struct KafkaTable {
  std::vector<int64_t> ids;
  std::map<int64_t, int64_t> max_offset;
  std::map<std::string, int64_t> txns;
  std::vector<std::string> files;
};

// Ids first..last, in order.
inline std::vector<int64_t> Ids(int64_t first, int64_t last) {
  std::vector<int64_t> ids;
  for (int64_t i = first; i <= last; ++i) {
    ids.push_back(i);
  }
  return ids;
}

inline KafkaTable ReadKafkaTable(const std::string& dir) {
  TableContents t = ReadTable(dir);
  KafkaTable out{.txns = t.txns, .files = t.files};
  for (const std::string& row : t.rows) {
    out.ids.push_back(IntField(row, "id"));
    int64_t& m = out.max_offset[IntField(row, "_partition")];
    m = std::max(m, IntField(row, "_offset"));
  }
  std::sort(out.ids.begin(), out.ids.end());
  return out;
}

class KafkaE2eTest : public ::testing::Test {
 protected:
  using ChildProcess = source::kafka::testing::ChildProcess;

  std::string table() const { return (dir_ / "table").string(); }

  // A configuration like the one in docs/kafka.md, with small batches, reading `topics` (default:
  // topic_) from start_. `extra_properties`: more Kafka properties after a comma; `kafka_keys`:
  // more lines of [pipeline.kafka]; `pipeline_keys`: more of [[pipeline]].
  std::string WriteConfig(std::vector<std::string> topics = {},
                          const std::string& extra_properties = "",
                          const std::string& kafka_keys = "",
                          const std::string& pipeline_keys = "") {
    if (topics.empty()) {
      topics = {topic_};
    }
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.table = table(),
          .schema = "id BIGINT NOT NULL, dateTime STRING, payload STRING",
          .keys = pipeline_keys,
          .source = KafkaSection(
              {.brokers = brokers_,
               .topics = topics,
               .group_id = group_,
               .start = start_,
               .properties = R"("session.timeout.ms" = "6000", "heartbeat.interval.ms" = "500", )"
                             R"("topic.metadata.refresh.interval.ms" = "1000")" +
                             extra_properties,
               .extra = kafka_keys}),
          .max_rows = 700}});
  }

  // `ferry produce kafka` of ids start, start + 1, ... (`count` of them, key "k<id>") at `rate`
  // messages per second (0: as fast as it can).
  std::unique_ptr<ChildProcess> StartProducer(const std::string& topic, int64_t count,
                                              int64_t start, int rate) {
    auto p = ChildProcess::Start({kFerry, "produce", "kafka", "--brokers", brokers_, "--topic",
                                  topic, "--count", std::to_string(count), "--start",
                                  std::to_string(start), "--rate", std::to_string(rate), "--key",
                                  "k{{seq}}", "--template", kProduceTemplate});
    EXPECT_TRUE(p.ok());
    return std::move(*p);
  }
  std::unique_ptr<ChildProcess> StartFerry(const std::string& config) {
    auto p = ChildProcess::Start({kFerry, "run", "--config", config});
    EXPECT_TRUE(p.ok());
    return std::move(*p);
  }
  // Waits until the table holds at least `rows` rows (or the deadline passes).
  size_t WaitForRows(size_t rows, std::chrono::seconds deadline = std::chrono::seconds(120)) {
    return e2e::WaitForRows(table(), rows, deadline);
  }

  // The table's ids are exactly `expected` (sorted: a range with holes where records were
  // lost to retention or never committed), each once, by ferry's reader and DuckDB; every
  // partition's txn position is the largest offset the table holds for it.
  void ExpectIds(const std::vector<int64_t>& expected) {
    KafkaTable t = ReadKafkaTable(table());
    EXPECT_TRUE(t.ids == expected)
        << "ids differ: " << t.ids.size() << " rows, " << expected.size() << " expected";
    for (const auto& [partition, offset] : t.max_offset) {
      EXPECT_EQ(t.txns[fmt::format("events/kafka/{}/{}", topic_, partition)], offset)
          << "partition " << partition;
    }
    ExpectDuckDbCounts(t.files, "id", expected.size());
  }

  // Each of ids first..last exactly once, by ferry's reader and DuckDB, and every partition's
  // txn position equal to the largest offset the table holds for it.
  void ExpectExactlyOnce(int64_t first, int64_t last) {
    KafkaTable t = ReadKafkaTable(table());
    std::vector<int64_t> expected;
    for (int64_t id = first; id <= last; ++id) {
      expected.push_back(id);
    }
    if (t.ids != expected) {
      // Which ids, and where the positions stand, so that a rare failure says what happened.
      std::vector<int64_t> missing;
      std::vector<int64_t> extra;
      std::set_difference(expected.begin(), expected.end(), t.ids.begin(), t.ids.end(),
                          std::back_inserter(missing));
      std::set_difference(t.ids.begin(), t.ids.end(), expected.begin(), expected.end(),
                          std::back_inserter(extra));
      std::string positions;
      for (const auto& [partition, offset] : t.max_offset) {
        positions += fmt::format(" {}: max offset {}, txn {};", partition, offset,
                                 t.txns[fmt::format("events/kafka/{}/{}", topic_, partition)]);
      }
      ADD_FAILURE()
          << t.ids.size() << " ids, " << expected.size() << " expected; missing " << missing.size()
          << " (first: "
          << fmt::format("{}",
                         fmt::join(missing.begin(),
                                   missing.begin() + std::min<size_t>(missing.size(), 20), ", "))
          << "), duplicated or unexpected " << extra.size() << " (first: "
          << fmt::format("{}", fmt::join(extra.begin(),
                                         extra.begin() + std::min<size_t>(extra.size(), 20), ", "))
          << "); partitions:" << positions;
      return;
    }
    for (const auto& [partition, offset] : t.max_offset) {
      EXPECT_EQ(t.txns[fmt::format("events/kafka/{}/{}", topic_, partition)], offset)
          << "partition " << partition;
    }
    ExpectDuckDbCounts(t.files, "id", expected.size());
  }

  std::filesystem::path dir_;
  std::string brokers_;
  std::string topic_ = "events";
  std::string group_ = "ferry-test";
  std::string start_ = "earliest";  // [pipeline.kafka] start of WriteConfig
};

}  // namespace ferry::e2e
