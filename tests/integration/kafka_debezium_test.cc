// Debezium change streams through `ferry run` in upsert mode on a real Apache Kafka broker
// (issue 42, "a Debezium-shaped stream in JSON and in registry-framed Avro, with schema
// changes"): inserts, snapshot reads, updates, deletes followed by tombstones and re-inserts of
// deleted keys, with a column added to the source table half-way (JSON: `after` gains the
// field; Avro: a second Envelope version registered mid-stream, encoded by
// @kafkajs/confluent-schema-registry with avsc, tests/serializers/debezium_avro_messages.mjs,
// served by the registry stand-in; Protobuf: the same with protobufjs and the .proto
// ProtobufConverter registers, tests/serializers/debezium_protobuf_messages.mjs, where id 0 is
// written as nothing). ferry is SIGKILLed once while it applies the first half,
// the second half is produced, and a run to the end follows. The table (deletion
// vectors applied by ferry's file scan, delta/file_scan.h) must equal the state an independent
// replay of the generated events computes, row for row. JSON runs once more into a table without
// deletion vectors (copy-on-write across the batch that adds the column).
//
// One broker serves the whole binary (WHOLE_BINARY). Label: integration. Needs `make
// setup-kafka` and the serializers' npm packages (tests/serializers).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kafka_broker_e2e_fixture.h"
#include "kafka_child_process.h"
#include "kafka_test_support.h"
#include "pipeline_e2e_support.h"
#include "serializer_test_support.h"

#include "ferry/testing/kafka_broker.h"

namespace ferry {
namespace {

using e2e::kFerry;
using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;

constexpr int kPartitions = 2;
constexpr int kKeys = 150;
constexpr int kEvents = 1200;

struct Row {
  int id = 0;
  std::optional<std::string> name;
  std::optional<int> joined;  // days since the epoch (io.debezium.time.Date)
  std::optional<std::string> email;
};

struct Event {
  std::string op;  // c, r, u, d, or "tombstone"
  int id = 0;
  std::optional<Row> before, after;
  int64_t lsn = 0;
  bool email = false;  // the source table has the email column (the second half)
};

// The change stream of a table of kKeys rows, deterministic: snapshot reads first, then
// inserts, updates and deletes (each followed by its tombstone) of random keys, a deleted key
// inserted again when it comes up; the email column exists from event kEvents / 2 on.
std::vector<Event> Generate() {
  std::vector<Event> out;
  std::map<int, Row> live;
  uint64_t state = 42;
  auto next = [&state]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % 1000003);
  };
  for (int e = 0; e < kEvents; ++e) {
    const bool email = e >= kEvents / 2;
    const int id = e < kKeys / 3 ? e : next() % kKeys;
    Event ev{.id = id, .lsn = e + 1, .email = email};
    Row row{.id = id, .name = fmt::format("n{}-{}", id, e)};
    if (e % 3 != 0) {
      row.joined = 19000 + e;
    }
    if (email && e % 2 == 0) {
      row.email = fmt::format("u{}@{}", id, e);
    }
    auto it = live.find(id);
    if (it == live.end()) {
      ev.op = e < kKeys / 3 ? "r" : "c";
      ev.after = row;
      live[id] = row;
      out.push_back(ev);
    } else if (next() % 10 < 6) {
      ev.op = "u";
      ev.before = it->second;
      ev.after = row;
      it->second = row;
      out.push_back(ev);
    } else {
      ev.op = "d";
      ev.before = Row{.id = id};  // PostgreSQL's default replica identity: the key only
      live.erase(it);
      out.push_back(ev);
      out.push_back({.op = "tombstone", .id = id, .lsn = ev.lsn, .email = email});
    }
  }
  return out;
}

// A DATE as the table renders it: "2024-08-24".
std::string DateText(int days) {
  const std::chrono::year_month_day d{std::chrono::sys_days{std::chrono::days{days}}};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(d.year()),
                     static_cast<unsigned>(d.month()), static_cast<unsigned>(d.day()));
}

// The state the stream leaves, as the table renders it: id -> "id|name|joined|email|_op|_lsn".
std::map<int, std::string> Replay(const std::vector<Event>& events) {
  std::map<int, std::string> state;
  for (const Event& e : events) {
    if (e.op == "d" || e.op == "tombstone") {
      state.erase(e.id);
      continue;
    }
    const Row& r = *e.after;
    state[e.id] =
        fmt::format("{}|{}|{}|{}|{}|{}", r.id, r.name.value_or("null"),
                    r.joined ? DateText(*r.joined) : "null", r.email.value_or("null"), e.op, e.lsn);
  }
  return state;
}

std::string Json(const std::optional<std::string>& s) {
  return s ? fmt::format("\"{}\"", *s) : "null";
}

std::string RowJson(const std::optional<Row>& r, bool email) {
  if (!r) {
    return "null";
  }
  std::string out = fmt::format(R"({{"id":{},"name":{},"joined":{})", r->id, Json(r->name),
                                r->joined ? std::to_string(*r->joined) : "null");
  if (email) {
    out += fmt::format(R"(,"email":{})", Json(r->email));
  }
  return out + "}";
}

// The event as Kafka Connect's JsonConverter writes it (schemas.enable=false).
std::string JsonValue(const Event& e) {
  return fmt::format(
      R"({{"before":{},"after":{},"source":{{"version":"2.5.0.Final","connector":"postgresql",)"
      R"("name":"shop","ts_ms":{},"snapshot":"{}","db":"shop","schema":"public",)"
      R"("table":"customers","txId":{},"lsn":{}}},"op":"{}","ts_ms":{},"transaction":null}})",
      RowJson(e.before, e.email), RowJson(e.after, e.email), 1700000000000 + e.lsn,
      e.op == "r" ? "true" : "false", 700 + e.lsn, e.lsn, e.op, 1700000000500 + e.lsn);
}

// One line per event for debezium_avro_messages.mjs.
std::string EventLine(const Event& e) {
  std::string op = e.op == "tombstone" ? "tombstone" : e.op;
  return fmt::format(R"({{"op":"{}","id":{},"before":{},"after":{},"lsn":{},"email":{}}})", op,
                     e.id, RowJson(e.before, e.email), RowJson(e.after, e.email), e.lsn,
                     e.email ? "true" : "false");
}

// The table as a reader that applies deletion vectors sees it (pipeline_e2e_support.h).
using LiveTable = e2e::TableContents;
LiveTable ReadLive(const std::string& dir) {
  return e2e::ReadLiveTable(dir);
}

struct Message {
  std::string value;  // empty: a tombstone
  std::string key;
  int32_t partition = 0;
};

class KafkaDebeziumTest : public e2e::KafkaBrokerE2eTest,
                          public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    UseSharedBroker("ferry-kafka-debezium", "customers_" + GetParam(), kPartitions);
  }
  void TearDown() override {
    serializer_.reset();  // closes its stdin: the registry stops
    KafkaBrokerE2eTest::TearDown();
  }

  bool avro() const { return GetParam() == "avro"; }
  bool protobuf() const { return GetParam() == "protobuf"; }
  // json_cow: debezium-json into a table without deletion vectors (copy-on-write rewrites the
  // files written before the column was added, in the batch that adds it).
  bool deletion_vectors() const { return GetParam() != "json_cow"; }

  // Each event as a Kafka message (keys spread over the partitions: id % kPartitions).
  std::vector<Message> Encode(const std::vector<Event>& events) {
    std::vector<Message> out;
    if (!avro() && !protobuf()) {
      for (const Event& e : events) {
        out.push_back({.value = e.op == "tombstone" ? "" : JsonValue(e),
                       .key = fmt::format(R"({{"id":{}}})", e.id),
                       .partition = e.id % kPartitions});
      }
      return out;
    }
    const std::filesystem::path file = dir_ / "events.jsonl";
    {
      std::ofstream lines(file);
      for (const Event& e : events) {
        lines << EventLine(e) << "\n";
      }
    }
    auto child = ChildProcess::Start(
        {"/usr/bin/node",
         std::string(FERRY_SOURCE_DIR "/tests/serializers/") +
             (avro() ? "debezium_avro_messages.mjs" : "debezium_protobuf_messages.mjs"),
         topic_, file.string()});
    EXPECT_TRUE(child.ok()) << child.status().ToString();
    if (!child.ok()) {
      return out;
    }
    serializer_ = std::move(*child);
    for (size_t i = 0;; ++i) {
      auto line = serializer_->ReadLine(milliseconds(60000));
      if (!line.ok()) {
        ADD_FAILURE() << line.status().ToString() << "\n" << serializer_->Log();
        return out;
      }
      if (line->starts_with("REGISTRY ")) {
        registry_ = line->substr(9);
        --i;
        continue;
      }
      if (*line == "END") {
        break;
      }
      std::string_view rest = std::string_view(*line).substr(4);  // "MSG "
      size_t space = rest.find(' ');
      out.push_back({.value = e2e::Unhex(rest.substr(0, space)),
                     .key = e2e::Unhex(rest.substr(space + 1)),
                     .partition = events[i].id % kPartitions});
    }
    EXPECT_EQ(out.size(), events.size());
    return out;
  }

  void ProduceRange(const std::vector<Message>& messages, size_t from, size_t to) {
    for (int32_t p = 0; p < kPartitions; ++p) {
      std::vector<const Message*> mine;
      for (size_t i = from; i < to; ++i) {
        if (messages[i].partition == p) {
          mine.push_back(&messages[i]);
        }
      }
      Status st = source::kafka::testing::Produce(
          brokers_, topic_, p, static_cast<int>(mine.size()),
          [&](int i) { return mine[static_cast<size_t>(i)]->value; },
          [&](int i) { return mine[static_cast<size_t>(i)]->key; });
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  }

  std::string Config() {
    std::string decode = avro() || protobuf()
                             ? fmt::format(
                                   "[pipeline.decode]\nformat = \"debezium-{}\"\n"
                                   "envelope_columns = {{ op = \"_op\", "
                                   "\"source.lsn\" = \"_lsn\" }}\n\n"
                                   "[pipeline.decode.schema_registry]\nurl = \"{}\"\n",
                                   GetParam(), registry_)
                             : "[pipeline.decode]\nformat = \"debezium-json\"\n"
                               "envelope_columns = { op = \"_op\", \"source.lsn\" = \"_lsn\" }\n";
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.table = table(),
          .schema = "id BIGINT NOT NULL, name STRING, joined DATE, _op STRING, _lsn BIGINT",
          .metadata_columns = "",
          .keys = std::string("mode = \"upsert\"\nkey = [\"id\"]\n"
                              "schema_evolution = \"add_columns\"\non_bad_record = \"fail\"\n") +
                  (deletion_vectors()
                       ? "table_properties = { \"delta.enableDeletionVectors\" = \"true\" }"
                       : ""),
          .source = e2e::KafkaSection({.brokers = brokers_,
                                       .topics = {topic_},
                                       .group_id = "ferry-" + topic_,
                                       .assignment = "manual"}),
          .sections = decode,
          .max_rows = 97}});
  }

  std::string registry_;
  std::unique_ptr<ChildProcess> serializer_;
};

TEST_P(KafkaDebeziumTest, UpsertsDeletesTombstonesAndANewColumnThroughAKill) {
  const std::vector<Event> events = Generate();
  const std::vector<Message> messages = Encode(events);
  ASSERT_EQ(messages.size(), events.size());
  // The first half: everything before the column was added.
  size_t half = 0;
  while (half < events.size() && !events[half].email) {
    ++half;
  }
  ASSERT_NO_FATAL_FAILURE(ProduceRange(messages, 0, half));
  const std::string config = Config();
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(check.exit_code, 0) << check.err << check.out;

  // A daemon, SIGKILLed once it has committed a few batches.
  auto ferry = StartFerry(config);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (ReadLive(table()).version < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_GE(ReadLive(table()).version, 3) << ferry->Log();
  kill(ferry->pid(), SIGKILL);
  EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);

  ASSERT_NO_FATAL_FAILURE(ProduceRange(messages, half, messages.size()));
  CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const std::map<int, std::string> expected = Replay(events);
  LiveTable t = ReadLive(table());
  if (deletion_vectors()) {
    EXPECT_GT(t.deletion_vectors, 0) << "no row was replaced or deleted through a vector";
  } else {
    EXPECT_EQ(t.deletion_vectors, 0);
  }
  std::map<int, std::string> got;
  for (const std::string& row : t.rows) {
    const int id = static_cast<int>(e2e::IntField(row, "id"));
    EXPECT_TRUE(got.count(id) == 0) << "two rows for id " << id;
    got[id] =
        fmt::format("{}|{}|{}|{}|{}|{}", id, e2e::Field(row, "name"), e2e::Field(row, "joined"),
                    e2e::Field(row, "email"), e2e::Field(row, "_op"), e2e::Field(row, "_lsn"));
  }
  EXPECT_EQ(got.size(), expected.size());
  size_t differ = 0;
  for (const auto& [id, row] : expected) {
    auto it = got.find(id);
    if (it == got.end() || it->second != row) {
      if (++differ <= 10) {
        ADD_FAILURE() << "id " << id << ": expected " << row << ", got "
                      << (it == got.end() ? "nothing" : it->second);
      }
    }
  }
  EXPECT_EQ(differ, 0u);
  // Each partition's position is its last offset.
  for (int32_t p = 0; p < kPartitions; ++p) {
    int64_t last = -1;
    for (const Message& m : messages) {
      last += m.partition == p ? 1 : 0;
    }
    EXPECT_EQ(t.txns[fmt::format("events/kafka/{}/{}", topic_, p)], last);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, KafkaDebeziumTest,
                         ::testing::Values("json", "avro", "protobuf", "json_cow"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace ferry
