// `ferry run` with `[pipeline.decode] format = "protobuf"` end to end (issue 20): messages
// encoded by protobufjs through @kafkajs/confluent-schema-registry (tests/serializers, code no
// one here wrote), their schemas in the registry stand-in that script serves, produced to the
// mock cluster, written by the real binary and read back by DuckDB; and unframed messages with a
// descriptor set protoc writes from the same .proto text. Label: integration.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kafka_child_process.h"
#include "kafka_test_support.h"
#include "pipeline_e2e_support.h"
#include "serializer_test_support.h"

namespace ferry {
namespace {

using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;

constexpr int kPerPartition = 50;

class KafkaProtobufTest : public e2e::SerializerKafkaTest {
 protected:
  KafkaProtobufTest() : SerializerKafkaTest("ferry-kafka-protobuf") {}

  // Starts protobuf_messages.mjs with `args` after the topic; reads its REGISTRY and SCHEMA
  // (the .proto text, into proto_text_).
  void StartSerializer(const std::vector<std::string>& args) {
    ASSERT_NO_FATAL_FAILURE(SerializerKafkaTest::StartSerializer("protobuf_messages.mjs", args));
    proto_text_ = e2e::Unhex(ReadLineAfter("SCHEMA "));
  }

  // `decode`: the [pipeline.decode] keys after `format = "protobuf"`; `extra`: more keys of the
  // pipeline.
  std::string WriteConfig(const std::string& decode, const std::string& extra = "") {
    e2e::PipelineToml pipeline = OrdersPipeline("ferry-protobuf-test", ProtobufDecode(decode));
    pipeline.keys = extra;
    return e2e::WriteConfig(dir_ / "ferry.toml", {pipeline});
  }
  static std::string ProtobufDecode(const std::string& keys) {
    return "[pipeline.decode]\nformat = \"protobuf\"\n" + keys;
  }

  // Every column of the all-types message as DuckDB reads it, for rows with ids [0, n).
  void ExpectEveryType(const e2e::TableContents& t, int n, bool with_metadata) {
    const std::string described = e2e::DescribeColumns(t.files);
    EXPECT_EQ(described,
              "id BIGINT; name VARCHAR; amount DOUBLE; ratio FLOAT; qty INTEGER; ok BOOLEAN; "
              "tags VARCHAR[]; attrs MAP(VARCHAR, INTEGER); status VARCHAR; note VARCHAR; "
              "u32 BIGINT; u64 DECIMAL(20,0); s32 INTEGER; s64 BIGINT; f32 BIGINT; "
              "f64 DECIMAL(20,0); sf32 INTEGER; sf64 BIGINT; raw BLOB; "
              "inner STRUCT(a INTEGER, b BIGINT); inners STRUCT(a INTEGER, b BIGINT)[]; "
              "nums INTEGER[]; n INTEGER; s VARCHAR; ts TIMESTAMP WITH TIME ZONE; wl BIGINT; "
              "ws VARCHAR; st VARCHAR; " +
                  std::string(with_metadata ? "_offset BIGINT; _partition INTEGER; " : ""));

    e2e::ForEachRow(
        t,
        "SELECT id, name, amount, ratio, qty, ok, tags::VARCHAR AS tags, attrs['k'] AS k, "
        "status, note, u32, u64::VARCHAR AS u64, s32, s64, f32, f64::VARCHAR AS f64, sf32, sf64, "
        "raw::VARCHAR AS raw, \"inner\".a AS a, \"inner\".b AS b, inners::VARCHAR AS inners, "
        "nums::VARCHAR AS nums, n, s, epoch_us(ts) AS ts, wl, ws, st "
        "FROM read_parquet({files}) ORDER BY id",
        n, [&](int i, const nlohmann::json& row) {
          e2e::ExpectSharedAllTypesFields(row, i);
          EXPECT_EQ(row["u32"], std::to_string(4000000000LL + i));
          EXPECT_EQ(row["u64"],
                    fmt::format("{}", 18446744073709551615ULL - static_cast<uint64_t>(i)));
          EXPECT_EQ(row["s32"], -i);
          EXPECT_EQ(row["s64"], std::to_string(-9000000000000000000LL - i));
          EXPECT_EQ(row["f32"], std::to_string(i));
          EXPECT_EQ(row["f64"], std::to_string(i * 7));
          EXPECT_EQ(row["sf32"], -i * 2);
          EXPECT_EQ(row["sf64"], std::to_string(-i * 3));
          EXPECT_EQ(row["inners"],
                    fmt::format("[{{'a': 1, 'b': NULL}}, {{'a': {}, 'b': NULL}}]", i));
          EXPECT_EQ(row["nums"], fmt::format("[{}, -1, 300]", i));
          e2e::ExpectIntOrStringMember(row, "n", "s", i);
          EXPECT_EQ(row["ts"], std::to_string((1700000000LL + i) * 1000000 + 123));
          EXPECT_EQ(row["wl"], std::to_string(i));
          if (i % 5 == 0) {
            EXPECT_TRUE(row["ws"].is_null());
          } else {
            EXPECT_EQ(row["ws"], fmt::format("w{}", i));
          }
          EXPECT_EQ(row["st"], fmt::format(R"({{"k":"v{}","n":{}}})", i, i));
        });
  }

  std::string proto_text_;
};

// Every Protobuf type the schema holds (protobuf_messages.mjs), from the subject's latest version
// (with its references: the well-known types' files) to the table's columns, read by DuckDB.
TEST_F(KafkaProtobufTest, EveryTypeFromTheRegistryThroughParquetToDuckDb) {
  ASSERT_NO_FATAL_FAILURE(StartSerializer({std::to_string(2 * kPerPartition)}));
  std::vector<std::string> messages = ReadMessages();
  ASSERT_EQ(messages.size(), size_t{2 * kPerPartition});
  ASSERT_NO_FATAL_FAILURE(ProduceHalves(messages));
  CommandResult r = RunUntilCaughtUp(WriteConfig(RegistrySection()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e2e::TableContents t = e2e::ReadTable(table());
  ASSERT_EQ(t.rows.size(), size_t{2 * kPerPartition});
  EXPECT_EQ(t.txns.size(), 2u);
  ExpectEveryType(t, 2 * kPerPartition, true);
}

// Unframed messages (the same payloads without their frame) with the descriptor set protoc
// writes from the same .proto text, the table created from protobuf_message.
TEST_F(KafkaProtobufTest, UnframedMessagesWithADescriptorSetFromProtoc) {
  ASSERT_NO_FATAL_FAILURE(StartSerializer({"20"}));
  std::vector<std::string> messages = ReadMessages();
  ASSERT_EQ(messages.size(), 20u);
  for (std::string& m : messages) {
    m = m.substr(6);  // magic byte, id, message index [0]
  }
  std::filesystem::create_directories(dir_ / "proto");
  std::ofstream(dir_ / "proto" / "order.proto") << proto_text_;
  const std::string desc = (dir_ / "order.desc").string();
  CommandResult protoc = RunCommand(
      {"/usr/bin/protoc", "--include_imports", "--descriptor_set_out=" + desc, "-I",
       (dir_ / "proto").string(), "-I", "/usr/include", (dir_ / "proto" / "order.proto").string()});
  ASSERT_EQ(protoc.exit_code, 0) << protoc.err;
  Status st = source::kafka::testing::Produce(
      brokers_, "orders", 0, 20, [&](int i) { return messages[static_cast<size_t>(i)]; });
  ASSERT_TRUE(st.ok()) << st.ToString();
  CommandResult r = RunUntilCaughtUp(WriteConfig(
      fmt::format("protobuf_descriptor_file = \"{}\"\nprotobuf_message = \"shop.Order\"\n", desc)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  e2e::TableContents t = e2e::ReadTable(table());
  ASSERT_EQ(t.rows.size(), 20u);
  ExpectEveryType(t, 20, true);

  // A message the descriptor set does not hold is a configuration error naming the key.
  CommandResult bad = RunUntilCaughtUp(
      WriteConfig(fmt::format(
          "protobuf_descriptor_file = \"{}\"\nprotobuf_message = \"shop.Nope\"\n", desc)),
      "10s");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("decode.protobuf_message"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("no message \"shop.Nope\""), std::string::npos) << bad.err;
}

// Schema evolution over the registry: v1, then v2 (a new field), then v3 (a field removed), each
// version registered while ferry runs, with a SIGKILL after each of the first two: every row
// once, `coupon` added to the table, each row's columns as its writer had them.
TEST_F(KafkaProtobufTest, EvolutionAcrossThreeVersionsWithKillsBetweenThem) {
  constexpr int kPerVersion = 60;
  ASSERT_NO_FATAL_FAILURE(StartSerializer({std::to_string(kPerVersion), "v1", "v2", "v3"}));
  ExpectEvolutionAcrossThreeVersions(
      WriteConfig(RegistrySection(), "schema_evolution = \"add_columns\"\n"), kPerVersion);
}

// n2 adds a field inside a nested message (loc.alt) and inside a repeated message (items[].qty):
// with schema_evolution on, the table's STRUCT columns gain them, and DuckDB reads them as null in
// n1's rows and as written in n2's.
TEST_F(KafkaProtobufTest, FieldsNewInsideNestedMessagesEvolveTheTable) {
  constexpr int kPerVersion = 40;
  ASSERT_NO_FATAL_FAILURE(StartSerializer({std::to_string(kPerVersion), "n1", "n2"}));
  const std::string config = WriteConfig(RegistrySection(), "schema_evolution = \"add_columns\"\n");
  ASSERT_NO_FATAL_FAILURE(IngestFirstVersionThenProduceSecond(config, kPerVersion));
  ExpectNestedFieldsEvolve(config, kPerVersion);
}

// The same n2 with schema_evolution = "none": the new nested fields are dropped, counted per
// message in ferry_dropped_fields_total (scraped from the metrics endpoint) and logged once.
TEST_F(KafkaProtobufTest, FieldsNewInsideNestedMessagesAreDroppedAndCountedWithoutEvolution) {
  constexpr int kPerVersion = 40;
  ASSERT_NO_FATAL_FAILURE(StartSerializer({std::to_string(kPerVersion), "n1", "n2"}));
  const std::string config = WriteConfig(RegistrySection(), "schema_evolution = \"none\"\n");
  ASSERT_NO_FATAL_FAILURE(IngestFirstVersionThenProduceSecond(config, kPerVersion));
  ExpectNestedFieldsDroppedAndCounted(config, kPerVersion);
}

// The bad-input matrix of the Protobuf decoder through `on_bad_record = "dead_letter"`: each bad
// message is in the dead-letter table once with its reason, every good one in the table.
TEST_F(KafkaProtobufTest, BadMessagesGoToTheDeadLetterTableWithTheirReason) {
  ASSERT_NO_FATAL_FAILURE(StartSerializer({"24"}));
  std::vector<std::string> good = ReadMessages();
  ASSERT_EQ(good.size(), 24u);
  std::string unknown_id = good[3];
  unknown_id[4] = '\x63';  // schema id 99: the registry answers 404
  // The message-index list [2] (count 1, index 2, zigzag): the file has two messages.
  std::string bad_index = good[7].substr(0, 5) + "\x02\x04" + good[7].substr(6);
  std::string bad_utf8 = good[9];
  size_t name = bad_utf8.find("name-9");
  bad_utf8[name] = '\xff';
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"\x01" + good[1].substr(1), "not the magic byte 0x00"},
      {std::string("\x00\x00", 2), "shorter than the 5-byte header"},
      {unknown_id, "unknown to the schema registry"},
      {good[5].substr(0, good[5].size() - 3), "Protobuf message"},
      {bad_index, "no message at index 2"},
      {bad_utf8, "not UTF-8"},
  };
  ASSERT_NO_FATAL_FAILURE(ProduceWithBadOnes(good, bad));
  const std::string dead = (dir_ / "dead").string();
  CommandResult r = RunUntilCaughtUp(WriteConfig(
      RegistrySection(),
      fmt::format("on_bad_record = \"dead_letter\"\ndead_letter_table = \"{}\"", dead)));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  e2e::TableContents t = e2e::ReadTable(table());
  EXPECT_EQ(e2e::SortedIds(t), e2e::IdRange(24));
  ExpectDeadLetters(e2e::ReadTable(dead), bad);
}

// `key_format = "protobuf"`: the Kafka key, framed by the same registry, decoded whole into the
// key column, a STRUCT typed by the `<topic>-key` subject when the table is created; no key is
// null.
TEST_F(KafkaProtobufTest, ProtobufKeysDecodeIntoAStructColumn) {
  ASSERT_NO_FATAL_FAILURE(StartSerializer({"30"}));
  std::vector<std::string> messages = ReadMessages();
  ASSERT_NO_FATAL_FAILURE(ProduceWithKeys(messages));
  std::string config = WriteConfig("key_format = \"protobuf\"\n" + RegistrySection());
  ASSERT_NO_FATAL_FAILURE(AddKeyColumn(config));
  // protobufjs writes id 0 and region "eu" as present fields: no nulls but the missing keys.
  ExpectKeysInAStructColumn(config, 30);
}

// Static routes over Protobuf (issue 21): `where` predicates over `routing.schema`'s fields
// (an enum and an int32) decoded by the router from registry-framed messages whose schema
// references the well-known types' files (the writer's other fields skipped); each route's table
// created from the registry's schema; a SIGKILL, then a run to the end: every id in exactly one
// table once, in the table its fields choose.
TEST_F(KafkaProtobufTest, WhereRoutesReadDecodedFieldsThroughAKill) {
  constexpr int kCount = 2000;
  ASSERT_NO_FATAL_FAILURE(StartSerializer({std::to_string(kCount)}));
  std::vector<std::string> messages = ReadMessages();
  ASSERT_EQ(messages.size(), size_t{kCount});
  ASSERT_NO_FATAL_FAILURE(ProduceHalves(messages));
  const std::string paid = (dir_ / "paid_small").string();
  const std::string rest = (dir_ / "rest").string();
  e2e::PipelineToml routed = OrdersPipeline(
      "ferry-protobuf-routing-test",
      fmt::format("[[pipeline.route]]\nname = \"paid\"\n"
                  "where = \"status = 'PAID' AND qty > -1000\"\ntable = \"{}\"\n\n"
                  "[[pipeline.route]]\nname = \"default\"\ntable = \"{}\"\n\n"
                  "[pipeline.routing]\nunmatched = \"default\"\n"
                  "schema = \"status STRING, qty INT\"\nposition_commit_interval = \"300ms\"\n\n{}",
                  paid, rest, ProtobufDecode(RegistrySection())));
  routed.table.clear();  // the routes name their tables
  routed.max_rows = 25;
  routed.max_latency = "100ms";
  const std::string config = e2e::WriteConfig(dir_ / "routed.toml", {routed});
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  ASSERT_NO_FATAL_FAILURE(KillOnceRowsReach(
      config, [&] { return e2e::ReadTable(paid).rows.size() + e2e::ReadTable(rest).rows.size(); },
      500, milliseconds(50)));
  CommandResult r = RunUntilCaughtUp(config);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::vector<int64_t> all;
  std::vector<std::string> files;
  for (const std::string& table : {paid, rest}) {
    e2e::TableContents t = e2e::ReadTable(table);
    for (const std::string& row : t.rows) {
      const int64_t id = e2e::IntField(row, "id");
      all.push_back(id);
      // qty = -id: the paid route takes the PAID messages with id < 1000.
      const bool paid_small = id % 3 == 1 && id < 1000;
      EXPECT_EQ(table == paid, paid_small) << "id " << id << " in " << table;
    }
    files.insert(files.end(), t.files.begin(), t.files.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, e2e::IdRange(kCount));  // every id once, in one of the two tables
  e2e::ExpectDuckDbCounts(files, "id", kCount);
}

}  // namespace
}  // namespace ferry
