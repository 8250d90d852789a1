#include "serializer_test_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "kafka_test_support.h"

namespace ferry::e2e {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;

namespace {

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr milliseconds kLineTimeout(30000);

}  // namespace

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
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
  CommandResult r =
      RunCommand({kFerry, "run", "--config", config, "--until-caught-up", "--max-wait", "60s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  TableContents t = ReadTable(table());
  ASSERT_EQ(t.rows.size(), static_cast<size_t>(n));
  std::vector<nlohmann::json> types = DuckDbRows(
      t.files, "SELECT column_type AS t FROM (DESCRIBE SELECT key FROM read_parquet({files}))");
  ASSERT_EQ(types.size(), 1u);
  EXPECT_EQ(types[0]["t"], "STRUCT(id BIGINT, region VARCHAR)");
  std::vector<nlohmann::json> rows =
      DuckDbRows(t.files,
                 "SELECT id, key.id AS kid, key.region AS region, key IS NULL AS no_key FROM "
                 "read_parquet({files}) ORDER BY id");
  ASSERT_EQ(rows.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const nlohmann::json& row = rows[static_cast<size_t>(i)];
    SCOPED_TRACE(row.dump());
    EXPECT_EQ(row["id"], std::to_string(i));
    if (i % 10 == 9) {
      EXPECT_EQ(row["no_key"], true);
    } else {
      EXPECT_EQ(row["kid"], std::to_string(i));
      EXPECT_EQ(row["region"], i % 2 == 0 ? "eu" : "us");
    }
  }
}

}  // namespace ferry::e2e
