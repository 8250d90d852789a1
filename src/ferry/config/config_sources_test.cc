// The sources and decoding sections of the configuration: JetStream (filters, elastic
// partitions), Kafka (assignment, start policies, fetch wake-up), upsert mode, Debezium JSON,
// schema evolution, Avro and Protobuf with a registry or a schema file. The other sections are
// in config_test.cc, routing in config_routing_test.cc.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include "config_test_support.h"

#include "ferry/config/config.h"

namespace ferry::config {
namespace {

using test_support::FakeEnv;
using test_support::kIssueExample;
using test_support::kMinimalKafka;
using test_support::Parse;

// The issue's example with its `format = "json"` line replaced by `decode` (lines of
// [pipeline.decode]).
Result<Config> WithDecode(std::string_view decode) {
  std::string text(kIssueExample);
  text.replace(text.find("format = \"json\""), 15, decode);
  return Parse(text);
}

TEST(ConfigTest, JetStreamPipeline) {
  Result<Config> c = Parse(R"(
[metrics]
listen = "127.0.0.1:9464"
[[pipeline]]
id = "nats"
table = "/t"
schema = "payload STRING"
metadata_columns = { sequence = "_seq", msg_id = "_msg_id" }
[pipeline.jetstream]
servers = "nats://127.0.0.1:4222,nats://127.0.0.1:4223"
stream = "newstream"
subjects = ["newsub"]
start = "sequence"
start_sequence = 42
user = "ferry"
password = "${NATS_PASSWORD}"
[pipeline.decode]
format = "raw"
column = "payload"
)",
                           {{"NATS_PASSWORD", "hunter2"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const JetStreamConfig& j = *c->pipelines[0].jetstream;
  EXPECT_EQ(j.servers,
            (std::vector<std::string>{"nats://127.0.0.1:4222", "nats://127.0.0.1:4223"}));
  EXPECT_EQ(j.stream, "newstream");
  EXPECT_EQ(j.start, JetStreamConfig::Start::kSequence);
  EXPECT_EQ(j.start_sequence, 42);
  EXPECT_EQ(j.password, "hunter2");
  EXPECT_EQ(c->secrets, std::vector<std::string>{"hunter2"});
  EXPECT_EQ(c->metrics.listen, "127.0.0.1:9464");
  EXPECT_EQ(c->pipelines[0].decode.format, DecodeConfig::Format::kRaw);
}

// Elastic mode: the pattern expands into one filter per partition; mistakes name file and line.
TEST(ConfigTest, JetStreamPartitions) {
  auto parse = [](std::string_view jetstream_keys) {
    return Parse(fmt::format(R"([[pipeline]]
id = "nats"
table = "/t"
schema = "payload STRING"
[pipeline.jetstream]
servers = "nats://127.0.0.1:4222"
stream = "orders"
{}
[pipeline.decode]
format = "raw"
column = "payload"
)",
                             jetstream_keys));
  };
  Result<Config> c = parse(R"(partitions = { subject = "orders.{partition}.>", count = 3 }
lease_ttl = "2s")");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const JetStreamConfig& j = *c->pipelines[0].jetstream;
  EXPECT_EQ(j.subjects, (std::vector<std::string>{"orders.0.>", "orders.1.>", "orders.2.>"}));
  EXPECT_EQ(j.partition_count, 3);
  EXPECT_EQ(j.lease_ttl.count(), 2000);
  EXPECT_EQ(j.lease_bucket, "ferry_leases");

  struct Case {
    const char* keys;
    const char* error;
  };
  for (const Case& bad : {
           Case{R"(partitions = { subject = "orders.>", count = 3 })",
                "ferry.toml:8:26: pipeline[0].jetstream.partitions.subject: \"orders.>\" must hold "
                "the token {partition} exactly once"},
           Case{R"(partitions = { subject = "orders.p{partition}", count = 3 })",
                "must hold the token {partition} exactly once, as a whole subject token"},
           Case{R"(partitions = { subject = "orders.{partition}", count = 0 })",
                "ferry.toml:8:56: pipeline[0].jetstream.partitions.count: must be between 1 and "
                "4096"},
           Case{R"(partitions = { subject = "orders.{partition}" })", "missing key 'count'"},
           Case{"partitions = { subject = \"o.{partition}\", count = 2 }\nsubjects = [\"o.1\"]",
                "give either 'subjects' (fixed filters) or 'partitions' (elastic mode)"},
           Case{"subjects = [\"o\"]\nlease_ttl = \"5s\"",
                "ferry.toml:9:13: pipeline[0].jetstream.lease_ttl: leases are for elastic mode"},
           Case{"partitions = { subject = \"o.{partition}\", count = 2 }\nlease_ttl = \"500ms\"",
                "lease_ttl: must be at least 1s"},
           Case{"partitions = { subject = \"o.{partition}\", count = 2 }\nlease_bucket = \"a.b\"",
                "lease_bucket: \"a.b\" is not a key-value bucket name"},
       }) {
    Result<Config> r = parse(bad.keys);
    ASSERT_FALSE(r.ok()) << bad.keys;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(bad.error), std::string::npos) << r.status().message();
  }
}

TEST(ConfigTest, UpsertModeKeyAndSequence) {
  auto with = [](std::string_view lines) {
    std::string text(kIssueExample);
    text.insert(text.find("\n[pipeline.kafka]"), std::string("\n") + std::string(lines));
    return Parse(text);
  };
  Result<Config> c = Parse(kIssueExample);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->pipelines[0].mode, "append");
  EXPECT_TRUE(c->pipelines[0].key.empty());

  c = with("mode = \"upsert\"\nkey = [\"id\"]\nsequence = \"dateTime\"");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].mode, "upsert");
  EXPECT_EQ(c->pipelines[0].key, std::vector<std::string>{"id"});
  EXPECT_EQ(c->pipelines[0].sequence, "dateTime");
  EXPECT_EQ(c->pipelines[0].key_location.line, 10);
  EXPECT_EQ(c->pipelines[0].key_index_persist_every, 100);
  EXPECT_FALSE(c->pipelines[0].tombstone_retention.has_value());
  EXPECT_EQ(c->pipelines[0].max_tombstones, 1'000'000);

  c = with(
      "mode = \"upsert\"\nkey = [\"id\"]\nsequence = \"dateTime\"\nkey_index_persist_every = 20\n"
      "tombstone_retention = 86400000\nmax_tombstones = 5000");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].key_index_persist_every, 20);
  EXPECT_EQ(c->pipelines[0].tombstone_retention, 86400000);
  EXPECT_EQ(c->pipelines[0].max_tombstones, 5000);

  struct Bad {
    const char* lines;
    const char* message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"mode = \"merge\"", "ferry.toml:9:8: pipeline[0].mode: expected append or upsert"},
           {"mode = \"upsert\"", "ferry.toml:9:8: pipeline[0].mode: mode = \"upsert\" needs key"},
           {"mode = \"upsert\"\nkey = []",
            "ferry.toml:10:7: pipeline[0].key: mode = \"upsert\" needs key"},
           {"mode = \"upsert\"\nkey = [\"id\", \"id\"]", "pipeline[0].key: key: 'id' is empty"},
           {"key = [\"id\"]", "ferry.toml:9:7: pipeline[0].key: key names the table's key"},
           {"sequence = \"x\"", "ferry.toml:9:12: pipeline[0].sequence: sequence orders"},
           {"max_tombstones = 5", "pipeline[0].max_tombstones: tunes the key index"},
           {"mode = \"upsert\"\nkey = [\"id\"]\nkey_index_persist_every = 0",
            "pipeline[0].key_index_persist_every: must be at least 1"},
           {"mode = \"upsert\"\nkey = [\"id\"]\ntombstone_retention = 10",
            "pipeline[0].tombstone_retention: deleted keys are kept only with a `sequence`"},
       }) {
    Result<Config> r = with(bad.lines);
    ASSERT_FALSE(r.ok()) << bad.lines;
    EXPECT_NE(r.status().message().find(bad.message), std::string::npos)
        << bad.lines << " -> " << r.status().message();
  }
}

// Upsert mode with a format that carries no key: a raw message is only its bytes, so the key
// must be a metadata column (the message key); the line of `key` says so.
TEST(ConfigTest, UpsertModeWithARawFormatKeysOnMetadataOnly) {
  auto with = [](std::string_view key, std::string_view metadata) {
    std::string text(kIssueExample);
    text.replace(text.find("format = \"json\""), 15, "format = \"raw\"");
    text.replace(text.find("metadata_columns = {"), std::string_view("metadata_columns = {").size(),
                 std::string("metadata_columns = {") + std::string(metadata));
    text.insert(text.find("\n[pipeline.kafka]"),
                std::string("\nmode = \"upsert\"\nkey = ") + std::string(key));
    return Parse(text);
  };
  Result<Config> c = with("[\"id\"]", "");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(
                "ferry.toml:10:7: pipeline[0].key: key: column 'id' cannot come from "
                "[pipeline.decode] format = \"raw\", which carries no key"),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("metadata_columns = { key = \"id\" }"), std::string::npos)
      << c.status().message();
  c = with("[\"k\"]", " key = \"k\",");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].key, std::vector<std::string>{"k"});
}

TEST(ConfigTest, DebeziumJsonFormat) {
  Result<Config> c = WithDecode(
      "format = \"debezium-json\"\n"
      "envelope_columns = { op = \"_op\", \"source.lsn\" = \"_lsn\" }\n"
      "decimal_handling = \"string\"");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const DecodeConfig& d = c->pipelines[0].decode;
  EXPECT_EQ(d.format, DecodeConfig::Format::kDebeziumJson);
  EXPECT_EQ(d.envelope_columns,
            (std::map<std::string, std::string>{{"op", "_op"}, {"source.lsn", "_lsn"}}));
  EXPECT_EQ(d.decimal_handling, "string");
  EXPECT_EQ(d.timestamp_epoch_unit, "millis");

  EXPECT_EQ(WithDecode("format = \"debezium-json\"\nenvelope_columns = { after = \"a\" }")
                .status()
                .message(),
            "ferry.toml:18:20: pipeline[0].decode.envelope_columns: unknown envelope field "
            "'after' (op, ts_ms, ts_us, ts_ns, source.<field>, transaction.<field>)");
  EXPECT_EQ(WithDecode("format = \"json\"\nenvelope_columns = { op = \"_op\" }").status().message(),
            "ferry.toml:18:20: pipeline[0].decode.envelope_columns: applies to format = "
            "\"debezium-json\", \"debezium-avro\" or \"debezium-protobuf\"");
  Result<Config> nested =
      WithDecode("format = \"debezium-json\"\nenvelope_columns = { source.lsn = \"_lsn\" }");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("quoted keys"), std::string::npos)
      << nested.status().message();
  EXPECT_NE(WithDecode("format = \"debezium\"").status().message().find("debezium-protobuf)"),
            std::string::npos);
}

// format = "debezium-avro": the registry keys of format = "avro", envelope_columns of
// debezium-json; a registry is required, decimal_handling refused.
TEST(ConfigTest, DebeziumAvroFormat) {
  Result<Config> c = WithDecode(
      "format = \"debezium-avro\"\n"
      "envelope_columns = { op = \"_op\", \"source.lsn\" = \"_lsn\" }\n"
      "[pipeline.decode.schema_registry]\nurl = \"http://localhost:8081\"");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const DecodeConfig& d = c->pipelines[0].decode;
  EXPECT_EQ(d.format, DecodeConfig::Format::kDebeziumAvro);
  EXPECT_EQ(d.envelope_columns,
            (std::map<std::string, std::string>{{"op", "_op"}, {"source.lsn", "_lsn"}}));
  ASSERT_TRUE(d.schema_registry.has_value());

  // Each refusal: the decode lines, and a part of the error that says what to do.
  const struct {
    std::string_view decode;
    std::string_view error;
  } kRefused[] = {
      {"format = \"debezium-avro\"",
       "format = \"debezium-avro\" reads what Debezium's AvroConverter writes"},
      {"format = \"debezium-avro\"", "needs a [pipeline.decode.schema_registry]"},
      {"format = \"debezium-avro\"\ndecimal_handling = \"string\"\n"
       "[pipeline.decode.schema_registry]\nurl = \"http://r:8081\"",
       "decimal_handling: applies to format = \"debezium-json\""},
  };
  for (const auto& refused : kRefused) {
    Result<Config> r = WithDecode(refused.decode);
    ASSERT_FALSE(r.ok()) << refused.decode;
    EXPECT_NE(r.status().message().find(refused.error), std::string::npos) << r.status().message();
  }
}

// format = "debezium-protobuf": the registry keys of format = "protobuf", timestamp_epoch_unit
// (default millis), envelope_columns of debezium-json; a registry is required, a descriptor
// file, decimal_handling and an Avro key refused.
TEST(ConfigTest, DebeziumProtobufFormat) {
  Result<Config> c = WithDecode(
      "format = \"debezium-protobuf\"\n"
      "envelope_columns = { op = \"_op\", \"source.lsn\" = \"_lsn\" }\n"
      "[pipeline.decode.schema_registry]\nurl = \"http://localhost:8081\"");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const DecodeConfig& d = c->pipelines[0].decode;
  EXPECT_EQ(d.format, DecodeConfig::Format::kDebeziumProtobuf);
  EXPECT_EQ(d.envelope_columns,
            (std::map<std::string, std::string>{{"op", "_op"}, {"source.lsn", "_lsn"}}));
  ASSERT_TRUE(d.schema_registry.has_value());
  EXPECT_EQ(d.timestamp_epoch_unit, "millis");  // io.debezium.time.Timestamp
  c = WithDecode(
      "format = \"debezium-protobuf\"\ntimestamp_epoch_unit = \"micros\"\n"
      "[pipeline.decode.schema_registry]\nurl = \"http://localhost:8081\"");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].decode.timestamp_epoch_unit, "micros");

  const struct {
    std::string_view decode;
    std::string_view error;
  } kRefused[] = {
      {"format = \"debezium-protobuf\"",
       "format: format = \"debezium-protobuf\" reads what Confluent's ProtobufConverter writes"},
      {"format = \"debezium-protobuf\"", "needs a [pipeline.decode.schema_registry]"},
      {"format = \"debezium-protobuf\"\nprotobuf_descriptor_file = \"x.desc\"\n"
       "protobuf_message = \"shop.Envelope\"",
       "protobuf_descriptor_file: format = \"debezium-protobuf\" reads what"},
      {"format = \"debezium-protobuf\"\ndecimal_handling = \"string\"\n"
       "[pipeline.decode.schema_registry]\nurl = \"http://r:8081\"",
       "decimal_handling: applies to format = \"debezium-json\""},
      {"format = \"debezium-protobuf\"\nkey_format = \"avro\"\n"
       "[pipeline.decode.schema_registry]\nurl = \"http://r:8081\"",
       "key_format = \"avro\" reads framed keys"},
  };
  for (const auto& refused : kRefused) {
    Result<Config> r = WithDecode(refused.decode);
    ASSERT_FALSE(r.ok()) << refused.decode;
    EXPECT_NE(r.status().message().find(refused.error), std::string::npos) << r.status().message();
  }
}

// Kafka keys that choose between two ways: the default, the other value, and a value of the
// wrong kind refused with its position.
TEST(ConfigTest, KafkaAssignmentAndFetchWakeup) {
  const struct {
    std::string_view other;  // a line that picks the other way
    std::string_view bad;    // a line refused
    std::string_view error;  // where, and which key
    bool KafkaConfig::*flag;
    bool by_default;
  } kKeys[] = {
      {"assignment = \"manual\"\n", "assignment = \"static\"\n",
       "ferry.toml:7:14: pipeline[0].kafka.assignment", &KafkaConfig::manual_assignment, false},
      {"fetch_wakeup = false\n", "fetch_wakeup = \"no\"\n",
       "ferry.toml:7:16: pipeline[0].kafka.fetch_wakeup", &KafkaConfig::fetch_wakeup, true},
  };
  std::string text(kMinimalKafka);
  for (const auto& key : kKeys) {
    SCOPED_TRACE(key.other);
    Result<Config> c = Parse(text);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ((*c->pipelines[0].kafka).*key.flag, key.by_default);
    c = Parse(text + std::string(key.other));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ((*c->pipelines[0].kafka).*key.flag, !key.by_default);
    c = Parse(text + std::string(key.bad));
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find(key.error), std::string::npos) << c.status().message();
  }
}

TEST(ConfigTest, KafkaStartPolicies) {
  Result<Config> c = Parse(R"([[pipeline]]
id = "a"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
start_offsets = { "t/0" = 5, "t/1" = 7 }
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].kafka->start, KafkaConfig::Start::kOffsets);
  EXPECT_EQ(c->pipelines[0].kafka->start_offsets.at("t/1"), 7);
  Result<Config> ts = Parse(R"([[pipeline]]
id = "a"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
start = "timestamp"
start_timestamp = "2026-11-30T07:10:00Z"
)");
  ASSERT_TRUE(ts.ok()) << ts.status().ToString();
  EXPECT_EQ(ts->pipelines[0].kafka->start_timestamp_ms, 1796022600000);
}

TEST(ConfigTest, SchemaEvolutionKeys) {
  Result<Config> c = Parse(kIssueExample);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->pipelines[0].schema_evolution, "none");
  EXPECT_EQ(c->pipelines[0].max_new_columns_per_batch, 100);
  EXPECT_EQ(c->pipelines[0].max_columns, 1000);
  std::string text(kIssueExample);
  text.insert(text.find("partition_by"),
              "schema_evolution = \"add_columns_and_widen\"\nmax_new_columns_per_batch = 5\n"
              "max_columns = 50\n");
  c = Parse(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].schema_evolution, "add_columns_and_widen");
  EXPECT_EQ(c->pipelines[0].max_new_columns_per_batch, 5);
  EXPECT_EQ(c->pipelines[0].max_columns, 50);
  std::string typo(kIssueExample);
  typo.insert(typo.find("partition_by"), "schema_evolution = \"widen\"\n");
  c = Parse(typo);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("schema_evolution"), std::string::npos)
      << c.status().ToString();
  std::string raw(kIssueExample);
  raw.insert(raw.find("partition_by"), "schema_evolution = \"add_columns\"\n");
  raw.replace(raw.find("format = \"json\""), 15, "format = \"raw\"");
  c = Parse(raw);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("needs [pipeline.decode] format = \"json\""),
            std::string::npos)
      << c.status().ToString();
}

// `[pipeline.decode] format = "avro"` (issue 20): a registry or a schema file, one of them.
TEST(ConfigTest, AvroDecodeWithARegistryOrASchemaFile) {
  auto with_decode = [](std::string_view decode) {
    return fmt::format(R"([[pipeline]]
id = "orders"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["orders"]
[pipeline.decode]
{})",
                       decode);
  };
  Result<Config> c = Parse(with_decode(R"(format = "avro"
subject_name_strategy = "topic_record"
record_name = "com.example.Order"
[pipeline.decode.schema_registry]
url = "https://r1:8081, http://r2:8081/apis/ccompat/v7"
username = "key"
password = "${REGISTRY_SECRET}"
tls_ca = "/etc/ca.pem"
timeout = "3s"
)"),
                           {{"REGISTRY_SECRET", "hunter2"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const PipelineConfig& p = c->pipelines[0];
  EXPECT_EQ(p.decode.format, DecodeConfig::Format::kAvro);
  ASSERT_TRUE(p.decode.schema_registry.has_value());
  EXPECT_EQ(p.decode.schema_registry->urls,
            (std::vector<std::string>{"https://r1:8081", "http://r2:8081/apis/ccompat/v7"}));
  EXPECT_EQ(p.decode.schema_registry->password, "hunter2");
  EXPECT_EQ(p.decode.schema_registry->timeout, Duration(3000));
  EXPECT_EQ(p.decode.subject_name_strategy, "topic_record");
  EXPECT_EQ(p.decode.record_name, "com.example.Order");
  EXPECT_TRUE(p.create_table);  // the writer schema is the table's, no `schema` needed
  EXPECT_EQ(c->secrets, std::vector<std::string>{"hunter2"});

  c = Parse(with_decode("format = \"avro\"\navro_schema_file = \"/etc/order.avsc\"\n"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].decode.avro_schema_file, "/etc/order.avsc");

  // Each refusal names the key.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"format = \"avro\"\n", "needs either a [pipeline.decode.schema_registry]"},
      {"format = \"avro\"\navro_schema_file = \"a.avsc\"\n[pipeline.decode.schema_registry]\n"
       "url = \"http://r\"\n",
       "not both"},
      {"format = \"json\"\navro_schema_file = \"a.avsc\"\n", "avro_schema_file: applies to"},
      {"format = \"avro\"\navro_schema_file = \"a.avsc\"\nsubject = \"s\"\n",
       "applies to a [pipeline.decode.schema_registry]"},
      {"format = \"avro\"\n[pipeline.decode.schema_registry]\nurl = \"r:8081\"\n",
       "is not an http:// or https:// URL"},
      {"format = \"avro\"\n[pipeline.decode.schema_registry]\nurl = \"http://r\"\nusername = "
       "\"u\"\n",
       "username and password go together"},
      {"format = \"avro\"\nsubject_name_strategy = \"record\"\n"
       "[pipeline.decode.schema_registry]\nurl = \"http://r\"\n",
       "needs record_name"},
      {"format = \"avro\"\n[pipeline.decode.schema_registry]\nurl = \"http://r\"\nuser = \"u\"\n",
       "user"},
      {"format = \"xml\"\n",
       "unknown format \"xml\" (json, raw, avro, protobuf, debezium-json, "
       "debezium-avro, debezium-protobuf)"},
  };
  for (const auto& [decode, expected] : bad) {
    c = Parse(with_decode(decode));
    ASSERT_FALSE(c.ok()) << decode;
    EXPECT_NE(c.status().message().find(expected), std::string::npos)
        << decode << " -> " << c.status().message();
    EXPECT_NE(c.status().message().find("ferry.toml:"), std::string::npos) << c.status().message();
  }
}

// `[pipeline.decode] format = "protobuf"` (issue 20): a registry, or a descriptor set and the
// message's name.
TEST(ConfigTest, ProtobufDecodeWithARegistryOrADescriptorFile) {
  auto with_decode = [](std::string_view decode, std::string_view extra = "") {
    return fmt::format(R"([[pipeline]]
id = "orders"
table = "/t"
{}
[pipeline.kafka]
brokers = "b"
topics = ["orders"]
[pipeline.decode]
{})",
                       extra, decode);
  };
  Result<Config> c = Parse(with_decode(R"(format = "protobuf"
key_format = "protobuf"
subject_name_strategy = "record"
record_name = "shop.Order"
[pipeline.decode.schema_registry]
url = "http://r1:8081"
)",
                                       "metadata_columns = { key = \"key\" }"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const PipelineConfig& p = c->pipelines[0];
  EXPECT_EQ(p.decode.format, DecodeConfig::Format::kProtobuf);
  ASSERT_TRUE(p.decode.schema_registry.has_value());
  EXPECT_EQ(p.decode.key_format, "protobuf");
  EXPECT_EQ(p.decode.record_name, "shop.Order");
  EXPECT_TRUE(p.create_table);

  c =
      Parse(with_decode("format = \"protobuf\"\nprotobuf_descriptor_file = \"/etc/o.desc\"\n"
                        "protobuf_message = \"shop.Order\"\n"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].decode.protobuf_descriptor_file, "/etc/o.desc");
  EXPECT_EQ(c->pipelines[0].decode.protobuf_message, "shop.Order");

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"format = \"protobuf\"\n", "format = \"protobuf\" needs either"},
      {"format = \"protobuf\"\nprotobuf_descriptor_file = \"o.desc\"\n",
       "protobuf_descriptor_file: protobuf_descriptor_file and protobuf_message go together"},
      {"format = \"protobuf\"\nprotobuf_message = \"a.B\"\n"
       "[pipeline.decode.schema_registry]\nurl = \"http://r\"\n",
       "protobuf_message: protobuf_descriptor_file and protobuf_message go together"},
      {"format = \"protobuf\"\nprotobuf_descriptor_file = \"o.desc\"\nprotobuf_message = "
       "\"a.B\"\n[pipeline.decode.schema_registry]\nurl = \"http://r\"\n",
       "not both"},
      {"format = \"avro\"\nprotobuf_descriptor_file = \"o.desc\"\n",
       "protobuf_descriptor_file: applies to format = \"protobuf\""},
      {"format = \"protobuf\"\navro_schema_file = \"a.avsc\"\n",
       "avro_schema_file: applies to format = \"avro\""},
      {"format = \"protobuf\"\nkey_format = \"avro\"\n[pipeline.decode.schema_registry]\n"
       "url = \"http://r\"\n",
       "key_format = \"avro\" reads framed keys"},
      {"format = \"protobuf\"\nkey_format = \"protobuf\"\nprotobuf_descriptor_file = "
       "\"o.desc\"\nprotobuf_message = \"a.B\"\n",
       "key_format = \"protobuf\" reads framed keys"},
      {"format = \"protobuf\"\nkey_format = \"protobuf\"\n[pipeline.decode.schema_registry]\n"
       "url = \"http://r\"\n",
       "name it in metadata_columns"},
  };
  for (const auto& [decode, expected] : bad) {
    c = Parse(with_decode(decode));
    ASSERT_FALSE(c.ok()) << decode;
    EXPECT_NE(c.status().message().find(expected), std::string::npos)
        << decode << " -> " << c.status().message();
    EXPECT_NE(c.status().message().find("ferry.toml:"), std::string::npos) << c.status().message();
  }
}

}  // namespace
}  // namespace ferry::config
