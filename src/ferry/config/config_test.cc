#include "ferry/config/config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "config_test_support.h"

#include "ferry/config/time_parse.h"

namespace ferry::config {
namespace {

using test_support::FakeEnv;
using test_support::kIssueExample;
using test_support::kMinimalKafka;
using test_support::Parse;

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

TEST(ConfigTest, UnknownKeyNamesLineAndSuggests) {
  std::string text(kIssueExample);
  text.replace(text.find("max_rows"), 8, "max_rowz");
  Result<Config> c = Parse(text);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "ferry.toml:20:1: pipeline[0].batch.max_rowz: unknown key (did you mean 'max_rows'?)");
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
