// `ferry run` with `[pipeline.decode] format = "avro"` end to end (issue 20): messages framed and
// encoded by @kafkajs/confluent-schema-registry with avsc (tests/serializers, code no one here
// wrote), their schemas in the registry stand-in that script serves, produced to the mock
// cluster, written by the real binary and read back by DuckDB. Label: integration.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "kafka_child_process.h"
#include "kafka_test_support.h"
#include "pipeline_e2e_support.h"
#include "serializer_test_support.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;

constexpr int kPerPartition = 100;

class KafkaAvroTest : public e2e::SerializerKafkaTest {
 protected:
  KafkaAvroTest() : SerializerKafkaTest("ferry-kafka-avro") {}

  // Starts avro_messages.mjs (its registry's URL in registry_); the framed messages, in order.
  std::vector<std::string> Serialize(int count) {
    StartSerializer("avro_messages.mjs", {std::to_string(count)});
    return ReadMessages();
  }

  // `extra`: more keys of the pipeline.
  std::string WriteConfig(const std::string& extra = "") {
    e2e::PipelineToml pipeline = OrdersPipeline("ferry-avro-test", AvroDecode());
    pipeline.keys = extra;
    return e2e::WriteConfig(dir_ / "ferry.toml", {pipeline});
  }
  std::string AvroDecode() const {
    return "[pipeline.decode]\nformat = \"avro\"\n\n" + RegistrySection();
  }
};

// Every Avro type the schema holds (avro_messages.mjs), from the subject's latest version to the
// table's columns, each value as message i's formula says, read by DuckDB.
TEST_F(KafkaAvroTest, EveryTypeFromTheRegistryThroughParquetToDuckDb) {
  std::vector<std::string> messages = Serialize(2 * kPerPartition);
  ASSERT_EQ(messages.size(), size_t{2 * kPerPartition});
  for (int32_t p = 0; p < 2; ++p) {
    Status st = source::kafka::testing::Produce(brokers_, "orders", p, kPerPartition, [&](int i) {
      return messages[static_cast<size_t>(p * kPerPartition + i)];
    });
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  CommandResult r = RunUntilCaughtUp(WriteConfig());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  e2e::TableContents t = e2e::ReadTable(table());
  ASSERT_EQ(t.rows.size(), size_t{2 * kPerPartition});
  EXPECT_EQ(t.txns.size(), 2u);

  // The columns, as the registry's schema maps (docs/formats.md).
  const std::string described = e2e::DescribeColumns(t.files);
  EXPECT_EQ(described,
            "id BIGINT; name VARCHAR; amount DOUBLE; ratio FLOAT; qty INTEGER; ok BOOLEAN; "
            "tags VARCHAR[]; attrs MAP(VARCHAR, INTEGER); status VARCHAR; note VARCHAR; "
            "price DECIMAL(10,2); day DATE; ts TIMESTAMP WITH TIME ZONE; "
            "tsu TIMESTAMP WITH TIME ZONE; local TIMESTAMP; uid VARCHAR; fx BLOB; raw BLOB; "
            "inner STRUCT(a INTEGER, b BIGINT); choice STRUCT(member0 INTEGER, member1 VARCHAR); "
            "_offset BIGINT; _partition INTEGER; ");

  e2e::ForEachRow(
      t,
      "SELECT id, name, amount, ratio, qty, ok, tags::VARCHAR AS tags, "
      "attrs['k'] AS k, status, note, price::VARCHAR AS price, day - DATE '1970-01-01' AS day, "
      "epoch_ms(ts) AS ts, epoch_us(tsu) AS tsu, epoch_us(local) AS local, uid, hex(fx) AS fx, "
      "raw::VARCHAR AS raw, \"inner\".a AS a, \"inner\".b AS b, choice.member0 AS m0, "
      "choice.member1 AS m1 FROM read_parquet({files}) ORDER BY id",
      2 * kPerPartition, [&](int i, const nlohmann::json& row) {
        e2e::ExpectSharedAllTypesFields(row, i);
        EXPECT_EQ(row["price"], fmt::format("{}.25", i));
        EXPECT_EQ(row["day"], std::to_string(19000 + i));  // days since 1970-01-01
        EXPECT_EQ(row["ts"], std::to_string(1700000000000LL + i * 1000LL));
        EXPECT_EQ(row["tsu"], std::to_string(1700000000000000LL + i));
        EXPECT_EQ(row["local"], std::to_string(1600000000000000LL + i));
        EXPECT_EQ(row["uid"], fmt::format("00000000-0000-4000-8000-{:012}", i));
        EXPECT_EQ(row["fx"], fmt::format("{:02X}{:02X}{:02X}{:02X}", i & 255, (i + 1) & 255,
                                         (i + 2) & 255, (i + 3) & 255));
        e2e::ExpectIntOrStringMember(row, "m0", "m1", i);
      });
}

// Schema evolution over the registry (issue 20): v1, then v2 (a new field with a default), then
// v3 (a field removed), each version rolled out while ferry runs, with a SIGKILL after each of
// the first two: every row once, the table gains `coupon` in the commit that first holds it, and
// each row's columns are as its writer schema had them.
TEST_F(KafkaAvroTest, EvolutionAcrossThreeVersionsWithKillsBetweenThem) {
  constexpr int kPerVersion = 60;
  ASSERT_NO_FATAL_FAILURE(StartSerializer("avro_evolution.mjs", {std::to_string(kPerVersion)}));
  ExpectEvolutionAcrossThreeVersions(WriteConfig(R"(schema_evolution = "add_columns")"),
                                     kPerVersion);
}

// A v2 writer schema adds a field inside a nested record (loc.alt) and inside an array's element
// records (items[].qty): with schema_evolution on, the table's STRUCT columns gain them, and
// DuckDB reads them as null in v1's rows and as written in v2's.
TEST_F(KafkaAvroTest, FieldsNewInsideNestedRecordsEvolveTheTable) {
  constexpr int kPerVersion = 40;
  ASSERT_NO_FATAL_FAILURE(
      StartSerializer("avro_evolution.mjs", {std::to_string(kPerVersion), "nested"}));
  const std::string config = WriteConfig(R"(schema_evolution = "add_columns")");
  ASSERT_NO_FATAL_FAILURE(IngestFirstVersionThenProduceSecond(config, kPerVersion));
  ExpectNestedFieldsEvolve(config, kPerVersion);
}

// The same v2 with schema_evolution = "none": the new nested fields are dropped, counted per
// message in ferry_dropped_fields_total (scraped from the metrics endpoint) and logged once.
TEST_F(KafkaAvroTest, FieldsNewInsideNestedRecordsAreDroppedAndCountedWithoutEvolution) {
  constexpr int kPerVersion = 40;
  ASSERT_NO_FATAL_FAILURE(
      StartSerializer("avro_evolution.mjs", {std::to_string(kPerVersion), "nested"}));
  const std::string config = WriteConfig(R"(schema_evolution = "none")");
  ASSERT_NO_FATAL_FAILURE(IngestFirstVersionThenProduceSecond(config, kPerVersion));
  ExpectNestedFieldsDroppedAndCounted(config, kPerVersion);
}

// The bad-input matrix of the Avro decoder through `on_bad_record = "dead_letter"`: each bad
// message is in the dead-letter table once with its reason, every good one in the table.
TEST_F(KafkaAvroTest, BadMessagesGoToTheDeadLetterTableWithTheirReason) {
  std::vector<std::string> good = Serialize(20);
  ASSERT_EQ(good.size(), 20u);
  std::string unknown_id = good[3];
  unknown_id[4] = '\x63';  // schema id 99: the registry answers 404
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"\x01" + good[1].substr(1), "not the magic byte 0x00"},
      {std::string("\x00\x00", 2), "shorter than the 5-byte header"},
      {unknown_id, "unknown to the schema registry"},
      {good[5].substr(0, good[5].size() / 2), "Avro datum"},
      {good[6] + std::string("\x02\x04", 2), "left over after the record"},
  };
  // Partition 0: the good messages with a bad one after every fourth; partition 1: nothing.
  ASSERT_NO_FATAL_FAILURE(ProduceWithBadOnes(good, bad));
  const std::string dead = (dir_ / "dead").string();
  CommandResult r = RunUntilCaughtUp(WriteConfig(
      fmt::format("on_bad_record = \"dead_letter\"\ndead_letter_table = \"{}\"", dead)));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  e2e::TableContents t = e2e::ReadTable(table());
  EXPECT_EQ(e2e::SortedIds(t), e2e::IdRange(20));

  e2e::TableContents d = e2e::ReadTable(dead);
  ASSERT_NO_FATAL_FAILURE(ExpectDeadLetters(d, bad));
  std::vector<int64_t> positions;
  for (const std::string& row : d.rows) {
    positions.push_back(e2e::IntField(row, "position"));
  }
  std::sort(positions.begin(), positions.end());
  EXPECT_EQ(positions, (std::vector<int64_t>{4, 9, 14, 19, 24}));
}

// A registry that does not answer is not bad input: ferry waits, takes nothing, skips nothing,
// and once a registry answers on the same address every message is written once.
TEST_F(KafkaAvroTest, ARegistryOutageWaitsAndLosesNothing) {
  std::vector<std::string> messages = Serialize(2 * kPerPartition);
  ASSERT_NO_FATAL_FAILURE(ProduceHalves(messages));
  serializer_.reset();  // the registry goes away
  const std::string registry = registry_;
  const std::string port = registry.substr(registry.rfind(':') + 1);
  const std::string config =
      WriteConfig("schema = \"id BIGINT NOT NULL, name STRING, status STRING, note STRING\"");
  auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(ferry.ok()) << ferry.status().ToString();
  // It waits: alive, and the table (created from `schema`) holds nothing.
  EXPECT_EQ(e2e::WaitForRows(table(), 1, std::chrono::seconds(4)), 0u) << (*ferry)->Log();
  EXPECT_FALSE((*ferry)->ExitReport().has_value()) << *(*ferry)->ExitReport();

  // The registry is back on the same address, with the same schema ids.
  auto back =
      ChildProcess::Start({"/usr/bin/env", "REGISTRY_PORT=" + port, "/usr/bin/node",
                           FERRY_SOURCE_DIR "/tests/serializers/avro_messages.mjs", "orders", "1"});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  serializer_ = std::move(*back);
  auto line = serializer_->ReadLine(milliseconds(30000));
  ASSERT_TRUE(line.ok() && *line == "REGISTRY " + registry)
      << (line.ok() ? *line : line.status().ToString()) << serializer_->Log();
  EXPECT_EQ(e2e::WaitForRows(table(), 2 * kPerPartition, std::chrono::seconds(60)),
            size_t{2 * kPerPartition})
      << (*ferry)->Log();
  ASSERT_EQ(kill((*ferry)->pid(), SIGTERM), 0);
  EXPECT_EQ((*ferry)->Wait(), 0) << (*ferry)->Log();
  std::string log = (*ferry)->Log(1 << 20);
  EXPECT_NE(log.find("tried again in"), std::string::npos) << log;
  EXPECT_NE(log.find("nothing is skipped"), std::string::npos);

  EXPECT_EQ(e2e::SortedIds(e2e::ReadTable(table())), e2e::IdRange(2 * kPerPartition));
}

// `key_format = "avro"`: the Kafka key, framed by the same registry, decoded whole into the key
// column, a STRUCT typed by the `<topic>-key` subject when the table is created; no key is null.
TEST_F(KafkaAvroTest, AvroKeysDecodeIntoAStructColumn) {
  std::vector<std::string> messages = Serialize(40);
  ASSERT_NO_FATAL_FAILURE(ProduceWithKeys(messages));
  std::string config = WriteConfig();
  {
    std::string text;
    std::ifstream in(config);
    text.assign(std::istreambuf_iterator<char>(in), {});
    text.replace(text.find("format = \"avro\""), 15, "format = \"avro\"\nkey_format = \"avro\"");
    std::ofstream(config) << text;
  }
  ASSERT_NO_FATAL_FAILURE(AddKeyColumn(config));
  ExpectKeysInAStructColumn(config, 40);
}

// A routed pipeline on Avro (issue 21): `table = ".../t_{field:status}"` sends the registry's
// messages to a table per value of their enum field `status` (decoded by the router, the rest of
// each message skipped), creating each table from the registry's schema, through two SIGKILLs
// and a last run to the end: every id in exactly one table once, in its status's table, by
// ferry's reader and by DuckDB.
TEST_F(KafkaAvroTest, RoutedByADecodedFieldIntoThreeTablesThroughKills) {
  constexpr int kCount = 6000;
  std::vector<std::string> messages = Serialize(kCount);
  ASSERT_EQ(messages.size(), size_t{kCount});
  ASSERT_NO_FATAL_FAILURE(ProduceHalves(messages));
  e2e::PipelineToml routed =
      OrdersPipeline("ferry-avro-routing-test",
                     fmt::format("[pipeline.table_name_rules]\nfallback = \"{}/t_unknown\"\n\n"
                                 "[pipeline.routing]\nposition_commit_interval = \"300ms\"\n\n{}",
                                 dir_.string(), AvroDecode()));
  routed.table = dir_.string() + "/t_{field:status}";
  routed.max_rows = 25;
  routed.max_latency = "100ms";
  const std::string config = e2e::WriteConfig(dir_ / "routed.toml", {routed});
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  const std::vector<std::string> statuses = {"new", "paid", "shipped"};
  auto table_of = [&](const std::string& status) { return (dir_ / ("t_" + status)).string(); };
  auto total_rows = [&] {
    size_t n = 0;
    for (const std::string& s : statuses) {
      n += e2e::ReadTable(table_of(s)).rows.size();
    }
    return n;
  };
  for (size_t goal : {size_t{600}, size_t{2400}}) {
    ASSERT_NO_FATAL_FAILURE(KillOnceRowsReach(config, total_rows, goal, milliseconds(50)));
  }
  EXPECT_LT(total_rows(), size_t{kCount}) << "killed after the end: the test proves less";
  CommandResult r = RunUntilCaughtUp(config);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch counted;
  ASSERT_TRUE(std::regex_search(
      r.err, counted, std::regex(R"(pipeline orders: stopped; (\d+) messages were read again)")))
      << r.err;
  std::printf("[ routing ] Avro, after 2 SIGKILLs: the last run re-read %s messages (of %d)\n",
              counted[1].str().c_str(), kCount);

  std::map<int64_t, int> seen;
  std::vector<std::string> files;
  for (size_t s = 0; s < statuses.size(); ++s) {
    e2e::TableContents t = e2e::ReadTable(table_of(statuses[s]));
    for (const std::string& row : t.rows) {
      const int64_t id = e2e::IntField(row, "id");
      ++seen[id];
      EXPECT_EQ(static_cast<size_t>(id % 3), s) << "id " << id << " in t_" << statuses[s];
      EXPECT_EQ(e2e::Field(row, "name"), fmt::format("name-{}", id));
    }
    files.insert(files.end(), t.files.begin(), t.files.end());
  }
  EXPECT_FALSE(std::filesystem::exists(table_of("unknown"))) << "every message has a status";
  ASSERT_EQ(seen.size(), size_t{kCount});
  for (int64_t id = 0; id < kCount; ++id) {
    EXPECT_EQ(seen[id], 1) << "id " << id;
  }
  e2e::ExpectDuckDbCounts(files, "id", kCount);
  std::vector<nlohmann::json> per_status =
      e2e::DuckDbRows(files,
                      "SELECT status, count(*) AS n, min(id % 3) AS lo, max(id % 3) AS hi FROM "
                      "read_parquet({files}) GROUP BY status ORDER BY status");
  ASSERT_EQ(per_status.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    SCOPED_TRACE(per_status[s].dump());
    EXPECT_EQ(per_status[s]["status"], (std::vector<std::string>{"NEW", "PAID", "SHIPPED"}[s]));
    EXPECT_EQ(per_status[s]["n"], std::to_string(kCount / 3));
    EXPECT_EQ(per_status[s]["lo"], per_status[s]["hi"]);
  }
}

}  // namespace
}  // namespace ferry
