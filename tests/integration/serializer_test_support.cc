#include "serializer_test_support.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>
#include <set>
#include <sstream>

#include "kafka_test_support.h"

#include "ferry/testing/wait_until.h"

namespace ferry::e2e {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kLineTimeout(30000);

}  // namespace

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::optional<double> ScrapeMetric(int port, const std::string& series) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  httplib::Result r = client.Get("/metrics");
  if (!r || r->status != 200) {
    return std::nullopt;
  }
  std::istringstream lines(r->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

void ForEachRow(const TableContents& t, const std::string& sql, int n,
                const std::function<void(int i, const nlohmann::json& row)>& check) {
  std::vector<nlohmann::json> rows = DuckDbRows(t.files, sql);
  ASSERT_EQ(rows.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const nlohmann::json& row = rows[static_cast<size_t>(i)];
    SCOPED_TRACE(row.dump());
    check(i, row);
  }
}

void ExpectSharedAllTypesFields(const nlohmann::json& row, int i) {
  EXPECT_EQ(row["id"], std::to_string(i));
  EXPECT_EQ(row["name"], fmt::format("name-{}", i));
  EXPECT_DOUBLE_EQ(row["amount"].get<double>(), i * 1.5);
  EXPECT_DOUBLE_EQ(row["ratio"].get<double>(), i / 4.0);
  EXPECT_EQ(row["qty"], -i);
  EXPECT_EQ(row["ok"], i % 2 == 0);
  EXPECT_EQ(row["tags"], fmt::format("[t{}, x]", i));
  EXPECT_EQ(row["k"], i);
  EXPECT_EQ(row["status"],
            (std::vector<std::string>{"NEW", "PAID", "SHIPPED"}[static_cast<size_t>(i % 3)]));
  if (i % 4 == 0) {
    EXPECT_TRUE(row["note"].is_null());  // optional, not set: null
  } else {
    EXPECT_EQ(row["note"], fmt::format("note {}", i));
  }
  EXPECT_EQ(row["raw"], fmt::format("raw{}", i));
  EXPECT_EQ(row["a"], i * 2);
  if (i % 3 == 0) {
    EXPECT_TRUE(row["b"].is_null());
  } else {
    EXPECT_EQ(row["b"], std::to_string(i * 1000000000LL));
  }
}

void ExpectIntOrStringMember(const nlohmann::json& row, const char* int_member,
                             const char* string_member, int i) {
  if (i % 2 == 0) {
    EXPECT_EQ(row[int_member], i);
    EXPECT_TRUE(row[string_member].is_null());
  } else {
    EXPECT_TRUE(row[int_member].is_null());
    EXPECT_EQ(row[string_member], fmt::format("s{}", i));
  }
}

std::vector<int64_t> IdRange(int n) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

std::string DescribeColumns(const std::vector<std::string>& files) {
  std::string described;
  for (const nlohmann::json& row :
       DuckDbRows(files,
                  "SELECT column_name AS c, column_type AS t FROM (DESCRIBE SELECT * FROM "
                  "read_parquet({files}))")) {
    described += row.value("c", "") + " " + row.value("t", "") + "; ";
  }
  return described;
}

std::vector<int64_t> SortedIds(const TableContents& t) {
  std::vector<int64_t> ids;
  for (const std::string& row : t.rows) {
    ids.push_back(IntField(row, "id"));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void SerializerKafkaTest::SetUp() {
  dir_ = FreshTestDir(dir_prefix_);
  auto mock = source::kafka::testing::StartMockKafka(kFerry, 1, {"orders:2"});
  ASSERT_TRUE(mock.ok()) << mock.status().ToString();
  mock_ = std::move(mock->child);
  brokers_ = mock->bootstrap;
}

void SerializerKafkaTest::TearDown() {
  serializer_.reset();
  mock_.reset();
  std::filesystem::remove_all(dir_);
}

void SerializerKafkaTest::StartSerializer(std::string_view script,
                                          const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      "/usr/bin/node", fmt::format("{}/tests/serializers/{}", FERRY_SOURCE_DIR, script), "orders"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = ChildProcess::Start(argv);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  serializer_ = std::move(*child);
  registry_ = ReadLineAfter("REGISTRY ");
}

std::string SerializerKafkaTest::ReadLineAfter(std::string_view prefix) {
  auto line = serializer_->ReadLine(kLineTimeout);
  EXPECT_TRUE(line.ok() && line->starts_with(prefix))
      << (line.ok() ? *line : line.status().ToString()) << "\n"
      << serializer_->Log();
  return line.ok() && line->starts_with(prefix) ? line->substr(prefix.size()) : std::string();
}

std::vector<std::string> SerializerKafkaTest::ReadMessages() {
  std::vector<std::string> messages;
  while (true) {
    auto line = serializer_->ReadLine(kLineTimeout);
    EXPECT_TRUE(line.ok()) << line.status().ToString() << "\n" << serializer_->Log();
    if (!line.ok() || line->starts_with("END")) {
      return messages;
    }
    if (line->starts_with("MSG ")) {
      std::string_view rest = std::string_view(*line).substr(4);
      size_t space = rest.find(' ');
      messages.push_back(Unhex(rest.substr(0, space)));
      std::string_view key = space == std::string_view::npos ? "none" : rest.substr(space + 1);
      keys_.push_back(key == "none" ? std::string() : Unhex(key));
    }
  }
}

void SerializerKafkaTest::ProduceHalves(const std::vector<std::string>& messages) {
  const size_t half = messages.size() / 2;
  for (int32_t p = 0; p < 2; ++p) {
    Status st = source::kafka::testing::Produce(
        brokers_, "orders", p, static_cast<int>(half),
        [&](int i) { return messages[static_cast<size_t>(p) * half + static_cast<size_t>(i)]; });
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
}

void SerializerKafkaTest::ProduceWithKeys(const std::vector<std::string>& messages) {
  ASSERT_EQ(keys_.size(), messages.size());
  Status st = source::kafka::testing::Produce(
      brokers_, "orders", 0, static_cast<int>(messages.size()),
      [&](int i) { return messages[static_cast<size_t>(i)]; },
      [&](int i) { return keys_[static_cast<size_t>(i)]; });
  ASSERT_TRUE(st.ok()) << st.ToString();
}

PipelineToml SerializerKafkaTest::OrdersPipeline(const std::string& group,
                                                 const std::string& decode) const {
  return PipelineToml{.id = "orders",
                      .table = table(),
                      .source = KafkaSection({.brokers = brokers_,
                                              .topics = {"orders"},
                                              .group_id = group,
                                              .properties = R"("session.timeout.ms" = "6000", )"
                                                            R"("heartbeat.interval.ms" = "500")"}),
                      .sections = decode,
                      .max_rows = 70};
}

std::string SerializerKafkaTest::RegistrySection() const {
  return fmt::format("[pipeline.decode.schema_registry]\nurl = \"{}\"\ntimeout = \"5s\"\n",
                     registry_);
}

CommandResult SerializerKafkaTest::RunUntilCaughtUp(const std::string& config,
                                                    const std::string& max_wait) {
  return RunCommand(
      {kFerry, "run", "--config", config, "--until-caught-up", "--max-wait", max_wait});
}

void SerializerKafkaTest::KillOnceRowsReach(const std::string& config,
                                            const std::function<size_t()>& rows, size_t goal,
                                            milliseconds poll) {
  auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(ferry.ok()) << ferry.status().ToString();
  testing::WaitUntil([&] { return rows() >= goal; }, std::chrono::seconds(60), poll);
  ASSERT_GE(rows(), goal) << (*ferry)->Log();
  ASSERT_EQ(kill((*ferry)->pid(), SIGKILL), 0);
  (*ferry)->Wait();
}

void SerializerKafkaTest::ExpectEvolutionAcrossThreeVersions(const std::string& config, int per) {
  for (int version = 1; version <= 3; ++version) {
    SCOPED_TRACE(fmt::format("v{}", version));
    if (version > 1) {
      ASSERT_TRUE(serializer_->WriteLine("next").ok());
    }
    std::vector<std::string> messages = ReadMessages();
    ASSERT_EQ(messages.size(), static_cast<size_t>(per));
    ASSERT_NO_FATAL_FAILURE(ProduceHalves(messages));
    const size_t before = ReadTable(table()).rows.size();
    if (version == 3) {
      CommandResult r = RunUntilCaughtUp(config);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      break;
    }
    // A daemon, SIGKILLed once some of this version's rows are in the table.
    ASSERT_NO_FATAL_FAILURE(KillOnceRowsReach(
        config, [&] { return ReadTable(table()).rows.size(); },
        before + static_cast<size_t>(per / 3), milliseconds(100)));
  }

  TableContents t = ReadTable(table());
  EXPECT_EQ(SortedIds(t), IdRange(3 * per));  // every row once
  ForEachRow(
      t,
      "SELECT id, name, note, coupon FROM read_parquet({files}, union_by_name = true) ORDER BY "
      "id",
      3 * per, [&](int i, const nlohmann::json& row) {
        const int version = i / per + 1;
        EXPECT_EQ(row["name"], fmt::format("name-{}", i));
        if (version < 3) {
          EXPECT_EQ(row["note"], fmt::format("note {}", i));
        } else {
          EXPECT_TRUE(row["note"].is_null());  // v3 has no note: null, the column stays
        }
        if (version > 1) {
          EXPECT_EQ(row["coupon"], fmt::format("c{}", i));
        } else {
          EXPECT_TRUE(row["coupon"].is_null());  // written before the column existed
        }
      });
}

void SerializerKafkaTest::ProduceWithBadOnes(const std::vector<std::string>& good,
                                             const BadMessages& bad) {
  std::vector<std::string> messages;
  for (size_t i = 0; i < good.size(); ++i) {
    messages.push_back(good[i]);
    if (i % 4 == 3) {
      messages.push_back(bad[i / 4].first);
    }
  }
  Status st =
      source::kafka::testing::Produce(brokers_, "orders", 0, static_cast<int>(messages.size()),
                                      [&](int i) { return messages[static_cast<size_t>(i)]; });
  ASSERT_TRUE(st.ok()) << st.ToString();
}

void SerializerKafkaTest::ExpectDeadLetters(const TableContents& dead, const BadMessages& bad) {
  ASSERT_EQ(dead.rows.size(), bad.size());
  for (size_t k = 0; k < bad.size(); ++k) {
    bool found = false;
    for (const std::string& row : dead.rows) {
      found = found || (IntField(row, "position") == static_cast<int64_t>(5 * k + 4) &&
                        Field(row, "error").find(bad[k].second) != std::string::npos);
    }
    EXPECT_TRUE(found) << "position " << 5 * k + 4 << " with \"" << bad[k].second << "\" in\n"
                       << fmt::format("{}", fmt::join(dead.rows, "\n"));
  }
}

void SerializerKafkaTest::AddKeyColumn(const std::string& config) {
  std::string text;
  {
    std::ifstream in(config);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  constexpr std::string_view kOffset = "offset = \"_offset\"";
  size_t at = text.find(kOffset);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, kOffset.size(), "offset = \"_offset\", key = \"key\"");
  std::ofstream(config) << text;
}

void SerializerKafkaTest::ExpectKeysInAStructColumn(const std::string& config, int n) {
  CommandResult r = RunUntilCaughtUp(config);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  TableContents t = ReadTable(table());
  ASSERT_EQ(t.rows.size(), static_cast<size_t>(n));
  std::vector<nlohmann::json> types = DuckDbRows(
      t.files, "SELECT column_type AS t FROM (DESCRIBE SELECT key FROM read_parquet({files}))");
  ASSERT_EQ(types.size(), 1u);
  EXPECT_EQ(types[0]["t"], "STRUCT(id BIGINT, region VARCHAR)");
  ForEachRow(t,
             "SELECT id, key.id AS kid, key.region AS region, key IS NULL AS no_key FROM "
             "read_parquet({files}) ORDER BY id",
             n, [&](int i, const nlohmann::json& row) {
               EXPECT_EQ(row["id"], std::to_string(i));
               if (i % 10 == 9) {
                 EXPECT_EQ(row["no_key"], true);
               } else {
                 EXPECT_EQ(row["kid"], std::to_string(i));
                 EXPECT_EQ(row["region"], i % 2 == 0 ? "eu" : "us");
               }
             });
}

void SerializerKafkaTest::IngestFirstVersionThenProduceSecond(const std::string& config, int per) {
  std::vector<std::string> first = ReadMessages();
  ASSERT_EQ(first.size(), static_cast<size_t>(per));
  ASSERT_NO_FATAL_FAILURE(ProduceHalves(first));
  CommandResult r = RunUntilCaughtUp(config);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(ReadTable(table()).rows.size(), static_cast<size_t>(per));
  ASSERT_TRUE(serializer_->WriteLine("next").ok());
  std::vector<std::string> second = ReadMessages();
  ASSERT_EQ(second.size(), static_cast<size_t>(per));
  ASSERT_NO_FATAL_FAILURE(ProduceHalves(second));
}

void SerializerKafkaTest::ExpectNestedFieldsEvolve(const std::string& config, int per) {
  CommandResult r = RunUntilCaughtUp(config);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  TableContents t = ReadTable(table());
  EXPECT_EQ(SortedIds(t), IdRange(2 * per));  // every row once
  // The new fields are nested, not new columns.
  std::vector<nlohmann::json> types = DuckDbRows(
      t.files,
      "SELECT column_name AS c, column_type AS t FROM (DESCRIBE SELECT * EXCLUDE (_offset, "
      "_partition) FROM read_parquet({files}, union_by_name = true))");
  ASSERT_EQ(types.size(), 4u);  // id, name, loc, items
  EXPECT_EQ(types[2]["c"], "loc");
  EXPECT_EQ(types[2]["t"], "STRUCT(lat DOUBLE, alt BIGINT)");
  EXPECT_EQ(types[3]["t"], "STRUCT(sku VARCHAR, qty INTEGER)[]");
  ForEachRow(t,
             "SELECT id, loc.lat AS lat, loc.alt AS alt, items::VARCHAR AS items FROM "
             "read_parquet({files}, union_by_name = true) ORDER BY id",
             2 * per, [&](int i, const nlohmann::json& row) {
               EXPECT_EQ(row["id"], std::to_string(i));
               EXPECT_DOUBLE_EQ(row["lat"].get<double>(), i + 0.5);
               if (i < per) {  // written before the fields existed
                 EXPECT_TRUE(row["alt"].is_null());
                 EXPECT_EQ(row["items"], fmt::format("[{{'sku': s{}, 'qty': NULL}}]", i));
               } else {
                 EXPECT_EQ(row["alt"], std::to_string(i * 10));
                 EXPECT_EQ(row["items"], fmt::format("[{{'sku': s{}, 'qty': {}}}]", i, i));
               }
             });
}

void SerializerKafkaTest::ExpectNestedFieldsDroppedAndCounted(const std::string& config, int per) {
  const int port = FreePort();
  std::ofstream(config, std::ios::app)
      << fmt::format("\n[metrics]\nlisten = \"127.0.0.1:{}\"\n", port);
  auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(ferry.ok()) << ferry.status().ToString();
  ASSERT_EQ(WaitForRows(table(), static_cast<size_t>(2 * per), std::chrono::seconds(60)),
            static_cast<size_t>(2 * per))
      << (*ferry)->Log();
  // The counts are made when a message is taken, before its commit: final once the rows are in.
  const std::string alt = R"(ferry_dropped_fields_total{pipeline="orders",field="loc.alt"})";
  const std::string qty =
      R"(ferry_dropped_fields_total{pipeline="orders",field="items.element.qty"})";
  EXPECT_EQ(ScrapeMetric(port, alt), std::optional<double>(per)) << (*ferry)->Log();
  EXPECT_EQ(ScrapeMetric(port, qty), std::optional<double>(per));
  // The status page's API lists both, with their counts.
  httplib::Client client("127.0.0.1", port);
  httplib::Result status = client.Get("/api/status");
  ASSERT_TRUE(status && status->status == 200);
  nlohmann::json dropped = nlohmann::json::parse(status->body)["pipelines"][0]["dropped_fields"];
  ASSERT_EQ(dropped.size(), 2u) << dropped.dump();
  std::set<std::string> fields;
  for (const nlohmann::json& d : dropped) {
    fields.insert(d.value("field", ""));
    EXPECT_EQ(d["messages"], per) << d.dump();
    EXPECT_TRUE(d.value("writer", "").starts_with("schema id ")) << d.dump();
  }
  EXPECT_EQ(fields, (std::set<std::string>{"loc.alt", "items.element.qty"}));
  ASSERT_EQ(kill((*ferry)->pid(), SIGTERM), 0);
  EXPECT_EQ((*ferry)->Wait(), 0) << (*ferry)->Log();
  const std::string log = (*ferry)->Log(1 << 20);
  for (const char* field : {"loc.alt", "items.element.qty"}) {
    // "field 'loc.alt' of schema id 3 has no column in table ...", once.
    const std::string line = fmt::format("field '{}' of schema id ", field);
    const size_t at = log.find(line);
    ASSERT_NE(at, std::string::npos) << line << "\n" << log;
    EXPECT_NE(log.find(" has no column in table ", at), std::string::npos) << log;
    EXPECT_EQ(log.find(line, at + 1), std::string::npos) << "logged once: " << line;
  }

  TableContents t = ReadTable(table());
  EXPECT_EQ(SortedIds(t), IdRange(2 * per));
  ForEachRow(t,
             "SELECT id, loc::VARCHAR AS loc, items::VARCHAR AS items FROM read_parquet({files}, "
             "union_by_name = true) ORDER BY id",
             2 * per, [&](int i, const nlohmann::json& row) {
               EXPECT_EQ(row["loc"], fmt::format("{{'lat': {}.5}}", i));
               EXPECT_EQ(row["items"], fmt::format("[{{'sku': s{}}}]", i));
             });
}

}  // namespace ferry::e2e
