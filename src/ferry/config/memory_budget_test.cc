#include "ferry/config/memory_budget.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "ferry/config/config.h"

namespace ferry::config {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

Result<Config> ParseBudgetConfig(const std::string& text) {
  return ParseConfig(text, "ferry.toml",
                     [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
}

// One Kafka pipeline per id, with `extra` appended to the file.
std::string KafkaConfigText(int pipelines, const std::string& top, const std::string& extra) {
  std::string text = top + "\n";
  for (int i = 0; i < pipelines; ++i) {
    text += fmt::format(R"(
[[pipeline]]
id = "p{0}"
table = "/tmp/t{0}"
schema = "id BIGINT"
[pipeline.kafka]
brokers = "localhost:9092"
topics = ["events"]
group_id = "g{0}"
{1}
)",
                        i, extra);
  }
  return text;
}

TEST(DivideMemoryTest, DefaultBudgetOnePipeline) {
  MemoryShare m = DivideMemory(kDefaultMaxMemory, 1, 1);
  EXPECT_EQ(ProcessReserve(kDefaultMaxMemory), 64 * kMiB);
  EXPECT_EQ(m.pipeline, 192 * kMiB);
  EXPECT_EQ(m.source, 64 * kMiB);
  EXPECT_EQ(m.queue_max_kbytes, 16 * 1024);               // a quarter of the source's share
  EXPECT_EQ(m.queue_min_messages, (16 * kMiB) / 256);     // bytes cap binds from 256 B up
  EXPECT_EQ(m.fetch_max_bytes, 2 * kMiB);                 // 1/32, per broker
  EXPECT_EQ(m.batch, (192 - 64) * kMiB / (2 * (3 + 1)));  // 16 MiB
}

TEST(DivideMemoryTest, EverythingFitsInTheShare) {
  for (int64_t budget : {16 * kMiB, 256 * kMiB, 4096 * kMiB}) {
    for (int pipelines : {1, 2, 7}) {
      for (int64_t in_flight : {0, 1, 4}) {
        MemoryShare m = DivideMemory(budget, pipelines, in_flight);
        SCOPED_TRACE(fmt::format("{} {} {}", budget, pipelines, in_flight));
        EXPECT_EQ(m.pipeline, (budget - ProcessReserve(budget)) / pipelines);
        EXPECT_LE(ProcessReserve(budget), budget / 4);
        // The source's queue and three brokers' fetches, and twice every batch copy.
        EXPECT_LE(m.queue_max_kbytes * 1024 + 3 * m.fetch_max_bytes, m.source + 3 * kMiB);
        EXPECT_LE(m.source + 2 * (3 + in_flight) * m.batch, m.pipeline);
        EXPECT_GE(m.batch, 1024);
      }
    }
  }
}

TEST(DivideMemoryTest, SplitEvenlyAmongPipelines) {
  MemoryShare one = DivideMemory(512 * kMiB, 1, 1);
  MemoryShare two = DivideMemory(512 * kMiB, 2, 1);
  EXPECT_EQ(two.pipeline * 2, one.pipeline);
  EXPECT_NEAR(static_cast<double>(two.batch * 2), static_cast<double>(one.batch), 8.0);
  // More sealed batches in flight: each gets less.
  EXPECT_LT(DivideMemory(512 * kMiB, 1, 3).batch, one.batch);
}

TEST(MemoryConfigTest, DefaultAndExplicitMaxMemory) {
  Result<Config> c = ParseBudgetConfig(KafkaConfigText(2, "", ""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->max_memory, kDefaultMaxMemory);
  EXPECT_EQ(c->pipelines[0].memory.pipeline, 96 * kMiB);

  c = ParseBudgetConfig(KafkaConfigText(2, R"(max_memory = "1GiB")", ""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->max_memory, 1024 * kMiB);
  EXPECT_EQ(c->pipelines[1].memory.pipeline, 480 * kMiB);
  EXPECT_NE(DescribeShare(*c, 1).find("pipeline p1: 480 MiB of max_memory 1 GiB"),
            std::string::npos)
      << DescribeShare(*c, 1);
}

TEST(MemoryConfigTest, TooSmallABudgetIsRefusedNamingTheKey) {
  Result<Config> c = ParseBudgetConfig(KafkaConfigText(4, R"(max_memory = "32MiB")", ""));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("max_memory 32 MiB leaves 6 MiB to each of 4"),
            std::string::npos)
      << c.status().message();
  c = ParseBudgetConfig(KafkaConfigText(1, R"(max_memory = "100KiB")", ""));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("max_memory"), std::string::npos);
}

TEST(MemoryConfigTest, FindingsNameTheKeys) {
  // The default max_bytes (64 MiB) is more than the default budget's unit (16 MiB): it is cut
  // without a word, as a value the user never wrote.
  Result<Config> c = ParseBudgetConfig(KafkaConfigText(1, "", ""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(MemoryFindings(*c).empty());
  c = ParseBudgetConfig(KafkaConfigText(1, "", "[pipeline.batch]\nmax_bytes = \"16MiB\""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(MemoryFindings(*c).empty());

  c = ParseBudgetConfig(KafkaConfigText(1, R"(max_memory = "64MiB")", R"(
properties = { "queued.max.messages.kbytes" = "131072", "fetch.max.bytes" = "52428800" }
[pipeline.batch]
max_bytes = "256MB"
)"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<std::string> findings = MemoryFindings(*c);
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_NE(findings[0].find("pipeline[0].batch.max_bytes 244.1 MiB is more than a batch may "
                             "hold under max_memory 64 MiB"),
            std::string::npos)
      << findings[0];
  EXPECT_NE(findings[0].find("batches are cut at 4 MiB"), std::string::npos) << findings[0];
  EXPECT_NE(findings[1].find("pipeline[0].kafka.properties queued.max.messages.kbytes 131072"),
            std::string::npos)
      << findings[1];
  EXPECT_NE(findings[2].find("pipeline[0].kafka.properties fetch.max.bytes 52428800"),
            std::string::npos)
      << findings[2];
}

TEST(FormatBytesTest, Units) {
  EXPECT_EQ(FormatBytes(256 * kMiB), "256 MiB");
  EXPECT_EQ(FormatBytes(1536 * kMiB), "1.5 GiB");
  EXPECT_EQ(FormatBytes(4096), "4 KiB");
  EXPECT_EQ(FormatBytes(100), "100 B");
}

}  // namespace
}  // namespace ferry::config
