#include "ferry/config/config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ferry/config/time_parse.h"

namespace ferry::config {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

Result<Config> Parse(std::string_view text, std::map<std::string, std::string> env = {}) {
  return ParseConfig(text, "ferry.toml", FakeEnv(std::move(env)));
}

// The example of issue 4, verbatim.
constexpr std::string_view kIssueExample = R"(
[[pipeline]]
id = "events"
table = "/data/delta/events"
schema = "id BIGINT NOT NULL, dateTime STRING, payload STRING"
partition_by = []
metadata_columns = { offset = "_offset", partition = "_partition" }

[pipeline.kafka]
brokers = "localhost:9092"
topics = ["events"]
group_id = "ferry-events"
start = "earliest"
properties = { "security.protocol" = "PLAINTEXT" }

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = 100000
max_bytes = "64MB"
max_latency = "1s"
)";

TEST(ConfigTest, IssueExampleParses) {
  Result<Config> c = Parse(kIssueExample);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->pipelines.size(), 1u);
  const PipelineConfig& p = c->pipelines[0];
  EXPECT_EQ(p.id, "events");
  EXPECT_EQ(p.table, "/data/delta/events");
  EXPECT_EQ(p.schema, "id BIGINT NOT NULL, dateTime STRING, payload STRING");
  EXPECT_TRUE(p.partition_by.empty());
  EXPECT_EQ(p.metadata_columns.at("offset"), "_offset");
  EXPECT_EQ(p.metadata_columns.at("partition"), "_partition");
  ASSERT_TRUE(p.kafka.has_value());
  EXPECT_FALSE(p.jetstream.has_value());
  EXPECT_EQ(p.kafka->brokers, "localhost:9092");
  EXPECT_EQ(p.kafka->topics, std::vector<std::string>{"events"});
  EXPECT_EQ(p.kafka->group_id, "ferry-events");
  EXPECT_EQ(p.kafka->start, KafkaConfig::Start::kEarliest);
  ASSERT_EQ(p.kafka->properties.size(), 1u);
  EXPECT_EQ(p.kafka->properties[0].first, "security.protocol");
  EXPECT_EQ(p.decode.format, DecodeConfig::Format::kJson);
  EXPECT_EQ(p.batch.max_rows, 100000);
  EXPECT_EQ(p.batch.max_bytes, 64'000'000);
  EXPECT_EQ(p.batch.max_latency, Duration(1000));
  EXPECT_TRUE(p.create_table);
  // Bad records go to a dead-letter table beside the table unless the file says otherwise.
  EXPECT_EQ(p.on_bad_record, "dead_letter");
  EXPECT_EQ(p.dead_letter_table, "/data/delta/events_dead_letter");
}

TEST(ConfigTest, BadRecordPolicies) {
  auto with = [](std::string_view lines) {
    std::string text(kIssueExample);
    text.insert(text.find("\n[pipeline.kafka]"), "\n" + std::string(lines) + "\n");
    return Parse(text);
  };
  Result<Config> c = with(R"(on_bad_record = "fail")");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].on_bad_record, "fail");
  c = with(R"(dead_letter_table = "/data/delta/bad")");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].dead_letter_table, "/data/delta/bad");
  c = with(R"(on_bad_record = "drop")");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("on_bad_record"), std::string::npos) << c.status().ToString();
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

TEST(ConfigTest, UnknownKeyNamesLineAndSuggests) {
  std::string text(kIssueExample);
  text.replace(text.find("max_rows"), 8, "max_rowz");
  Result<Config> c = Parse(text);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "ferry.toml:20:1: pipeline[0].batch.max_rowz: unknown key (did you mean 'max_rows'?)");
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
       }) {
    Result<Config> r = with(bad.lines);
    ASSERT_FALSE(r.ok()) << bad.lines;
    EXPECT_NE(r.status().message().find(bad.message), std::string::npos)
        << bad.lines << " -> " << r.status().message();
  }
}

TEST(ConfigTest, BadValuesNameTheKey) {
  std::string text(kIssueExample);
  text.replace(text.find("\"64MB\""), 6, "\"64XB\"");
  Result<Config> c = Parse(text);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("ferry.toml:21:13: pipeline[0].batch.max_bytes"),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("unknown unit 'xb'"), std::string::npos);
}

TEST(ConfigTest, DebeziumJsonFormat) {
  auto with_decode = [](std::string_view decode) {
    std::string text(kIssueExample);
    text.replace(text.find("format = \"json\""), 15, decode);
    return Parse(text);
  };
  Result<Config> c = with_decode(
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

  EXPECT_EQ(with_decode("format = \"debezium-json\"\nenvelope_columns = { after = \"a\" }")
                .status()
                .message(),
            "ferry.toml:18:20: pipeline[0].decode.envelope_columns: unknown envelope field "
            "'after' (op, ts_ms, ts_us, ts_ns, source.<field>, transaction.<field>)");
  EXPECT_EQ(
      with_decode("format = \"json\"\nenvelope_columns = { op = \"_op\" }").status().message(),
      "ferry.toml:18:20: pipeline[0].decode.envelope_columns: applies to format = "
      "\"debezium-json\"");
  Result<Config> nested =
      with_decode("format = \"debezium-json\"\nenvelope_columns = { source.lsn = \"_lsn\" }");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("quoted keys"), std::string::npos)
      << nested.status().message();
  EXPECT_NE(with_decode("format = \"debezium\"").status().message().find("debezium-json)"),
            std::string::npos);
}

TEST(ConfigTest, WriterCompression) {
  Result<Config> defaults = Parse(kIssueExample);
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->pipelines[0].writer.codec, "zstd");
  EXPECT_EQ(defaults->pipelines[0].writer.compression_level, 0);    // the codec's default
  EXPECT_EQ(defaults->pipelines[0].writer.compression_threads, 0);  // one per core

  std::string text(kIssueExample);
  text += "\n[pipeline.writer]\ncodec = \"zstd\"\ncompression_level = 3\ncompression_threads = 2\n";
  Result<Config> c = Parse(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].writer.compression_level, 3);
  EXPECT_EQ(c->pipelines[0].writer.compression_threads, 2);

  std::string bad = text;
  bad.replace(bad.find("compression_threads = 2"), 23, "compression_threads = 65");
  c = Parse(bad);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("pipeline[0].writer.compression_threads"), std::string::npos)
      << c.status().message();
}

TEST(ConfigTest, MaintenanceSchedule) {
  Result<Config> none = Parse(kIssueExample);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->pipelines[0].maintenance.optimize_every.count(), 0);
  EXPECT_EQ(none->pipelines[0].maintenance.vacuum_every.count(), 0);

  std::string text(kIssueExample);
  text +=
      "\n[pipeline.maintenance]\noptimize_every = \"1h\"\nvacuum_every = \"24h\"\n"
      "vacuum_retain = \"240h\"\n";
  Result<Config> c = Parse(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].maintenance.optimize_every, std::chrono::hours(1));
  EXPECT_EQ(c->pipelines[0].maintenance.vacuum_every, std::chrono::hours(24));
  EXPECT_EQ(c->pipelines[0].maintenance.vacuum_retain, std::chrono::hours(240));

  std::string short_retain(kIssueExample);
  short_retain += "\n[pipeline.maintenance]\nvacuum_retain = \"1h\"\n";
  Result<Config> bad = Parse(short_retain);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("maintenance.vacuum_retain"), std::string::npos)
      << bad.status().message();
}

TEST(ConfigTest, MetricsStatusPageAuthAndTls) {
  Result<Config> plain =
      Parse(std::string("[metrics]\nlisten = \":9464\"\n") + std::string(kIssueExample));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->metrics.status_page);
  EXPECT_FALSE(plain->metrics.show_payloads);
  EXPECT_TRUE(plain->metrics.username.empty());
  EXPECT_EQ(plain->metrics.linger_after_failure.count(), 0);

  Result<Config> c = Parse(std::string(R"([metrics]
listen = "0.0.0.0:9464"
status_page = false
show_payloads = true
username = "ops"
password = "${PAGE_PASSWORD}"
tls_cert = "/etc/ferry/cert.pem"
tls_key = "/etc/ferry/key.pem"
linger_after_failure = "10m"
)") + std::string(kIssueExample),
                           {{"PAGE_PASSWORD", "p4ge-s3cret"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->metrics.status_page);
  EXPECT_TRUE(c->metrics.show_payloads);
  EXPECT_EQ(c->metrics.username, "ops");
  EXPECT_EQ(c->metrics.password, "p4ge-s3cret");
  EXPECT_EQ(c->metrics.tls_cert, "/etc/ferry/cert.pem");
  EXPECT_EQ(c->metrics.tls_key, "/etc/ferry/key.pem");
  EXPECT_EQ(c->metrics.linger_after_failure, std::chrono::minutes(10));
  // The password is redacted from logs like every other secret.
  EXPECT_EQ(c->secrets, std::vector<std::string>{"p4ge-s3cret"});

  for (const char* half : {"username = \"ops\"", "password = \"x\"", "tls_cert = \"/c.pem\"",
                           "tls_key = \"/k.pem\""}) {
    Result<Config> bad =
        Parse(fmt::format("[metrics]\nlisten = \":1\"\n{}\n{}", half, std::string(kIssueExample)));
    ASSERT_FALSE(bad.ok()) << half;
    EXPECT_NE(bad.status().message().find("ferry.toml:3:"), std::string::npos)
        << bad.status().message();
    EXPECT_NE(bad.status().message().find("metrics."), std::string::npos) << bad.status().message();
  }
}

TEST(ConfigTest, SyntaxErrorHasPosition) {
  Result<Config> c = Parse("[[pipeline]]\nid = \"x\nx");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("ferry.toml:2:", 0), 0u) << c.status().message();
}

TEST(ConfigTest, SourceRules) {
  EXPECT_NE(Parse("[[pipeline]]\nid = \"a\"\ntable = \"/t\"\n")
                .status()
                .message()
                .find("exactly one source"),
            std::string::npos);
  Result<Config> both = Parse(R"([[pipeline]]
id = "a"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
properties = { "enable.auto.commit" = true }
)");
  EXPECT_NE(both.status().message().find("'enable.auto.commit' is set by ferry"), std::string::npos)
      << both.status().message();
  Result<Config> regex = Parse(R"([[pipeline]]
id = "a"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["^events-.*"]
)");
  ASSERT_TRUE(regex.ok()) << regex.status().ToString();
  EXPECT_EQ(regex->pipelines[0].kafka->topic_pattern, "^events-.*");
  EXPECT_EQ(regex->pipelines[0].kafka->group_id, "ferry-a");
  EXPECT_FALSE(regex->pipelines[0].create_table);  // no schema: the table must exist
}

// A table (or dead-letter table) with a scheme ferry does not serve is refused at its line, with
// the scheme named, never taken for a relative local directory ("s3:/bucket/events").
TEST(ConfigTest, UnsupportedTableSchemesAreRefused) {
  for (const char* table :
       {"wasbs://c@a.blob.core.windows.net/t", "hdfs://nn/events", "ftp://h/t"}) {
    Result<Config> c = Parse(fmt::format(R"([[pipeline]]
id = "a"
table = "{}"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
)",
                                         table));
    ASSERT_FALSE(c.ok()) << table;
    EXPECT_EQ(c.status().message().rfind("ferry.toml:3:", 0), 0u) << c.status().message();
    EXPECT_NE(c.status().message().find("is not supported; supported: file://"), std::string::npos)
        << c.status().message();
  }
  Result<Config> dead = Parse(R"([[pipeline]]
id = "a"
table = "file:///data/t"
on_bad_record = "dead_letter"
dead_letter_table = "hdfs://b/bad"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
)");
  ASSERT_FALSE(dead.ok());
  EXPECT_NE(dead.status().message().find("dead_letter_table: \"hdfs://b/bad\": scheme 'hdfs'"),
            std::string::npos)
      << dead.status().message();
  Result<Config> file = Parse(R"([[pipeline]]
id = "a"
table = "file:///data/t"
on_bad_record = "dead_letter"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
)");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->pipelines[0].dead_letter_table, "file:///data/t_dead_letter");
}

// [storage] for the file, [pipeline.storage] over it; delta-rs names in any case; secrets
// recorded for redaction; an unknown option is refused at its table's line with a suggestion.
TEST(ConfigTest, StorageOptionsGlobalAndPerPipeline) {
  Result<Config> c = Parse(R"([storage]
AWS_REGION = "eu-west-1"
aws_endpoint_url = "http://127.0.0.1:7480"
aws_secret_access_key = "${SECRET}"

[[pipeline]]
id = "a"
table = "/t/a"
[pipeline.storage]
region = "us-east-2"
aws_allow_http = true
[pipeline.kafka]
brokers = "b"
topics = ["t"]

[[pipeline]]
id = "b"
table = "/t/b"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
)",
                           {{"SECRET", "s3cr3t"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->storage.at("aws_region"), "eu-west-1");
  EXPECT_EQ(c->pipelines[0].storage,
            (storage::StorageOptions{{"aws_region", "us-east-2"},
                                     {"aws_allow_http", "true"},
                                     {"aws_endpoint_url", "http://127.0.0.1:7480"},
                                     {"aws_secret_access_key", "s3cr3t"}}));
  EXPECT_EQ(c->pipelines[1].storage.at("aws_region"), "eu-west-1");
  EXPECT_NE(std::find(c->secrets.begin(), c->secrets.end(), "s3cr3t"), c->secrets.end());

  Result<Config> typo = Parse(R"([[pipeline]]
id = "a"
table = "/t/a"
[pipeline.storage]
aws_regoin = "x"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
)");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message().rfind("ferry.toml:4:", 0), 0u) << typo.status().message();
  EXPECT_NE(typo.status().message().find("did you mean 'aws_region'?"), std::string::npos)
      << typo.status().message();
}

// The smallest Kafka pipeline: no schema, the table must exist.
constexpr std::string_view kMinimalKafka = R"([[pipeline]]
id = "a"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
)";

TEST(ConfigTest, KafkaAssignment) {
  std::string text(kMinimalKafka);
  Result<Config> c = Parse(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->pipelines[0].kafka->manual_assignment);
  c = Parse(text + "assignment = \"manual\"\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->pipelines[0].kafka->manual_assignment);
  c = Parse(text + "assignment = \"static\"\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("ferry.toml:7:14: pipeline[0].kafka.assignment"),
            std::string::npos)
      << c.status().message();
}

TEST(ConfigTest, TableTransactionRetentionIsRefused) {
  std::string text(kMinimalKafka);
  text.insert(text.find("[pipeline.kafka]"),
              "table_properties = { \"delta.setTransactionRetentionDuration\" = \"interval 1 "
              "day\" }\n");
  Result<Config> c = Parse(text);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("pipeline[0].table_properties: "
                                      "delta.setTransactionRetentionDuration would expire"),
            std::string::npos)
      << c.status().message();
}

TEST(ConfigTest, KafkaFetchWakeup) {
  std::string text(kMinimalKafka);
  Result<Config> c = Parse(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->pipelines[0].kafka->fetch_wakeup);
  c = Parse(text + "fetch_wakeup = false\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->pipelines[0].kafka->fetch_wakeup);
  c = Parse(text + "fetch_wakeup = \"no\"\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("ferry.toml:7:16: pipeline[0].kafka.fetch_wakeup"),
            std::string::npos)
      << c.status().message();
}

TEST(ConfigTest, DuplicatePipelinesAndBadIds) {
  std::string one(kMinimalKafka);
  EXPECT_NE(Parse(one + one).status().message().find("used twice"), std::string::npos);
  std::string slash = one;
  slash.replace(slash.find("\"a\""), 3, "\"a/b\"");
  EXPECT_NE(Parse(slash).status().message().find("pipeline[0].id"), std::string::npos);
  // "." and ".." are refused too (they pass the character check); an empty id counts as missing.
  std::string empty = one;
  empty.replace(empty.find("\"a\""), 3, "\"\"");
  EXPECT_NE(Parse(empty).status().message().find("missing key 'id'"), std::string::npos);
  for (const char* bad : {"\".\"", "\"..\""}) {
    std::string text = one;
    text.replace(text.find("\"a\""), 3, bad);
    Status status = Parse(text).status();
    EXPECT_NE(status.message().find("is not a pipeline id"), std::string::npos)
        << bad << ": " << status.ToString();
    EXPECT_NE(status.message().find("pipeline[0].id"), std::string::npos) << status.ToString();
  }
  std::string dots = one;
  dots.replace(dots.find("\"a\""), 3, "\"a.b\"");
  EXPECT_TRUE(Parse(dots).ok()) << Parse(dots).status().ToString();
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

TEST(ConfigTest, SecretsFromPropertiesAndMissingEnv) {
  std::string text = R"([[pipeline]]
id = "a"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
properties = { "sasl.password" = "${KAFKA_PW}", "sasl.username" = "u" }
)";
  Result<Config> missing = Parse(text);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("KAFKA_PW is not set"), std::string::npos);
  EXPECT_NE(missing.status().message().find("ferry.toml:7:"), std::string::npos)
      << missing.status().message();
  Result<Config> ok = Parse(text, {{"KAFKA_PW", "s3cret"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->secrets, std::vector<std::string>{"s3cret"});
}

// A password or token inside a server URL is a secret too: `ferry run` logs the servers.
TEST(ConfigTest, CredentialsInServerUrlsAreSecrets) {
  Result<Config> c = Parse(R"([[pipeline]]
id = "a"
table = "/t"
schema = "payload STRING"
[pipeline.jetstream]
servers = ["nats://ferry:${NATS_PW}@127.0.0.1:4222,tls://t0k3n@h:4223", "nats://h:4224/x@y"]
stream = "s"
subjects = ["x"]
[pipeline.decode]
format = "raw"
)",
                           {{"NATS_PW", "pa:ss@word"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->pipelines[0].jetstream->servers.size(), 3u);
  EXPECT_EQ(c->secrets, (std::vector<std::string>{"pa:ss@word", "t0k3n"}));
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
      {"format = \"xml\"\n", "unknown format \"xml\" (json, raw, avro, protobuf, debezium-json)"},
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

TEST(UnitsTest, SizesDurationsInterpolation) {
  EXPECT_EQ(*ParseSize("64MB"), 64'000'000);
  EXPECT_EQ(*ParseSize("64MiB"), 64 << 20);
  EXPECT_EQ(*ParseSize("1 GB"), 1'000'000'000);
  EXPECT_EQ(*ParseSize("512"), 512);
  EXPECT_FALSE(ParseSize("MB").ok());
  EXPECT_FALSE(ParseSize("-1MB").ok());
  EXPECT_EQ(*ParseDuration("1s"), Duration(1000));
  EXPECT_EQ(*ParseDuration("1m30s"), Duration(90000));
  EXPECT_EQ(*ParseDuration("24h"), Duration(86400000));
  EXPECT_EQ(*ParseDuration("250"), Duration(250));
  EXPECT_FALSE(ParseDuration("1 fortnight").ok());
  auto env = FakeEnv({{"A", "x"}});
  EXPECT_EQ(*Interpolate("a${A}b", env), "axb");
  EXPECT_EQ(*Interpolate("${B:-dflt}", env), "dflt");
  EXPECT_EQ(*Interpolate("$${A}", env), "${A}");
  EXPECT_FALSE(Interpolate("${A", env).ok());
  EXPECT_FALSE(Interpolate("${B}", env).ok());
}

TEST(TimeParseTest, IsoTimestamps) {
  EXPECT_EQ(*ParseTimestampMillis("1970-01-01"), 0);
  EXPECT_EQ(*ParseTimestampMillis("2000-03-01T00:00:00Z"), 951868800000);
  EXPECT_EQ(*ParseTimestampMillis("2000-03-01 01:00:00.5+01:00"), 951868800500);
  EXPECT_EQ(*ParseTimestampMillis("1969-12-31T23:59:59Z"), -1000);
  EXPECT_FALSE(ParseTimestampMillis("2000-13-01").ok());
  EXPECT_FALSE(ParseTimestampMillis("yesterday").ok());
}

}  // namespace
}  // namespace ferry::config
