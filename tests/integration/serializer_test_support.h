// What the tests of the formats with writer schemas share (kafka_avro_test, kafka_protobuf_test):
// a mock cluster with topic "orders" (2 partitions) fed with messages a Node script of
// tests/serializers wrote with serializers no one here wrote. The script serves the registry
// stand-in and prints `REGISTRY <url>` first, then per message `MSG <value hex> [<key hex>|none]`
// and `END` after each group. Besides: their pipeline's configuration, and the scenarios both
// formats run the same way (three schema versions through kills, the dead-letter matrix, nested
// fields, keys).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"

namespace ferry::e2e {

// "0aff" -> "\x0a\xff".
std::string Unhex(std::string_view hex);

// The rows' "id" field, sorted.
std::vector<int64_t> SortedIds(const TableContents& t);
// 0, 1, ..., n - 1.
std::vector<int64_t> IdRange(int n);

// "name TYPE; " for each column, as DuckDB describes the files.
std::string DescribeColumns(const std::vector<std::string>& files);
// DuckDB's rows for `sql` over the table's files: ASSERTs there are `n`, then check(i, row) for
// each, row i in the trace.
void ForEachRow(const TableContents& t, const std::string& sql, int n,
                const std::function<void(int i, const nlohmann::json& row)>& check);
// EXPECTs the fields the Avro and the Protobuf all-types messages share as message i wrote them
// (id, name, amount, ratio, qty, ok, tags, attrs['k'] AS k, status, note, raw, inner.a AS a,
// inner.b AS b).
void ExpectSharedAllTypesFields(const nlohmann::json& row, int i);
// The union (Avro) or oneof (Protobuf) of an int and a string both all-types messages hold, as
// the columns `int_member` and `string_member`: i in the first for even i, "s<i>" in the second
// for odd i, the other one null.
void ExpectIntOrStringMember(const nlohmann::json& row, const char* int_member,
                             const char* string_member, int i);

// A TCP port on 127.0.0.1 nothing listens on right now (the kernel's choice for port 0).
int FreePort();

// The value of `series` (as /metrics prints it: `name{label="value",...}`) scraped from ferry's
// metrics endpoint at 127.0.0.1:`port`; nullopt when the endpoint does not answer or has no such
// series.
std::optional<double> ScrapeMetric(int port, const std::string& series);

class SerializerKafkaTest : public ::testing::Test {
 protected:
  static constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";

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

  // The pipeline "orders" from topic "orders" into table(): consumer group `group`, `decode` the
  // decode sections (verbatim), batches of 70 rows or 200 ms.
  PipelineToml OrdersPipeline(const std::string& group, const std::string& decode) const;
  // [pipeline.decode.schema_registry] of registry_.
  std::string RegistrySection() const;
  // `ferry run --config CONFIG --until-caught-up --max-wait MAX_WAIT`.
  static source::kafka::testing::CommandResult RunUntilCaughtUp(
      const std::string& config, const std::string& max_wait = "60s");
  // Starts `ferry run` on `config`, waits (60 s at most, polling every `poll`) until `rows()`
  // reaches `goal`, ASSERTs it did (with ferry's log), and SIGKILLs it.
  static void KillOnceRowsReach(const std::string& config, const std::function<size_t()>& rows,
                                size_t goal, std::chrono::milliseconds poll);

  // The serializer (started with three versions of `per` messages: v2 adds `coupon`, v3 drops
  // `note`) rolled out one version at a time while `ferry run` on `config` (with schema
  // evolution) runs, SIGKILLed once a third of v1's and of v2's rows are in; v3 by a run to the
  // end. Then: every row once, and DuckDB reads each row's note and coupon as its writer had them.
  void ExpectEvolutionAcrossThreeVersions(const std::string& config, int per);

  // Bad messages and the reason the dead-letter table must give for each.
  using BadMessages = std::vector<std::pair<std::string, std::string>>;
  // `good` to partition 0 with bad[k] after good[4k + 3]: the bad ones at offsets 5k + 4.
  void ProduceWithBadOnes(const std::vector<std::string>& good, const BadMessages& bad);
  // The dead-letter table holds each bad message once, at its offset, with its reason.
  static void ExpectDeadLetters(const TableContents& dead, const BadMessages& bad);

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
