// What the tests of the formats with writer schemas share (kafka_avro_test, kafka_protobuf_test):
// a mock cluster with topic "orders" (2 partitions) fed with messages a Node script of
// tests/serializers wrote with serializers no one here wrote. The script serves the registry
// stand-in and prints `REGISTRY <url>` first, then per message `MSG <value hex> [<key hex>|none]`
// and `END` after each group.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"

namespace ferry::e2e {

// "0aff" -> "\x0a\xff".
std::string Unhex(std::string_view hex);

// The rows' "id" field, sorted.
std::vector<int64_t> SortedIds(const TableContents& t);

// A TCP port on 127.0.0.1 nothing listens on right now (the kernel's choice for port 0).
int FreePort();

// The value of `series` (as /metrics prints it: `name{label="value",...}`) scraped from ferry's
// metrics endpoint at 127.0.0.1:`port`; nullopt when the endpoint does not answer or has no such
// series.
std::optional<double> ScrapeMetric(int port, const std::string& series);

class SerializerKafkaTest : public ::testing::Test {
 protected:
  // `dir_prefix`: the test directory's (FreshTestDir).
  explicit SerializerKafkaTest(std::string dir_prefix) : dir_prefix_(std::move(dir_prefix)) {}
  void SetUp() override;
  void TearDown() override;

  // Starts tests/serializers/<script> "orders" `args`... and reads its REGISTRY line (registry_).
  void StartSerializer(std::string_view script, const std::vector<std::string>& args);
  // The next line of the serializer, which must start with `prefix`; the rest of it.
  std::string ReadLineAfter(std::string_view prefix);
  // The messages up to the serializer's next "END"; their keys are appended to keys_ ("" for
  // none).
  std::vector<std::string> ReadMessages();
  // The first half of `messages` to partition 0, the rest to partition 1.
  void ProduceHalves(const std::vector<std::string>& messages);
  // All of `messages` to partition 0 with keys_ as their keys.
  void ProduceWithKeys(const std::vector<std::string>& messages);

  // Adds `key = "key"` to the metadata_columns of the configuration at `config`.
  static void AddKeyColumn(const std::string& config);
  // Runs `ferry run --until-caught-up` on `config`, then checks that the `n` rows' key column is
  // STRUCT(id BIGINT, region VARCHAR) as DuckDB reads it, with the serializer's keys: every
  // tenth message (i % 10 == 9) has none (null), the others {id: i, region: eu|us}.
  void ExpectKeysInAStructColumn(const std::string& config, int n);

  // The nested-evolution scenario (avro_evolution.mjs "nested", protobuf_messages.mjs n1 n2;
  // rows {id, name, loc {lat}, items [{sku}]}, and in the second version loc.alt = 10 id and
  // items' qty = id besides): the serializer's first version of `per` messages ingested by
  // `ferry run --until-caught-up` on `config` (creating the table from the registry's latest
  // version, the first), then the second version registered ("next") and its messages produced.
  void IngestFirstVersionThenProduceSecond(const std::string& config, int per);
  // With schema_evolution on: another `ferry run --until-caught-up`, then DuckDB reads loc.alt
  // and items' qty as null in the first version's rows and as written in the second's.
  void ExpectNestedFieldsEvolve(const std::string& config, int per);
  // With schema_evolution = "none": `ferry run` with its metrics endpoint until the rows are in;
  // ferry_dropped_fields_total is `per` for loc.alt and for items.element.qty, the log names each
  // field once with its writer schema's id and the table, and the table has neither field.
  void ExpectNestedFieldsDroppedAndCounted(const std::string& config, int per);

  std::string table() const { return (dir_ / "table").string(); }

  std::filesystem::path dir_;
  std::unique_ptr<source::kafka::testing::ChildProcess> mock_;
  std::unique_ptr<source::kafka::testing::ChildProcess> serializer_;
  std::string brokers_;
  std::string registry_;
  std::vector<std::string> keys_;

 private:
  std::string dir_prefix_;
};

}  // namespace ferry::e2e
