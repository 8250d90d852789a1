// The real Apache Kafka broker of the tests (ferry/testing/kafka_broker.h) checked with clients
// no one here wrote: it starts in KRaft mode, creates topics with several partitions, kcat
// produces into them and reads back exactly what it wrote, and a SIGKILL and restart on the same
// ports keeps the data. The newest 4.x serves the binary (one shared broker: the binary is one
// CTest test); the last 3.x line is started once for the same round trip.
// Label: integration. Needs `make setup-kafka` (the tests fail saying so otherwise).
#include "ferry/testing/kafka_broker.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/testing/subprocess.h"

namespace ferry::testing {
namespace {

using std::chrono::milliseconds;

constexpr int kPerPartition = 100;

KafkaBroker* SharedBroker() {
  Result<KafkaBroker*> broker = KafkaBroker::Shared();
  EXPECT_TRUE(broker.ok()) << broker.status().ToString();
  return broker.ok() ? *broker : nullptr;
}

std::string Kcat() {
  Result<std::string> kcat = FindProgram("kcat", {"/usr/bin/kcat"}, "Debian package kcat");
  EXPECT_TRUE(kcat.ok()) << kcat.status().ToString();
  return kcat.ok() ? *kcat : "kcat";
}

// `kcat -P` of "k<p>-<i>:v<p>-<i>" for i in [first, first + count) into each partition.
void ProduceWithKcat(const KafkaBroker& broker, const std::string& topic, int partitions, int first,
                     int count) {
  const std::string file = broker.dir() + "/kcat-input.txt";
  for (int p = 0; p < partitions; ++p) {
    std::ofstream out(file, std::ios::trunc);
    for (int i = first; i < first + count; ++i) {
      out << fmt::format("k{}-{}:v{}-{}\n", p, i, p, i);
    }
    out.close();
    Result<ProgramOutput> r = RunProgram({Kcat(), "-P", "-b", broker.bootstrap(), "-t", topic, "-p",
                                          std::to_string(p), "-K:", "-X", "acks=all", "-l", file},
                                         milliseconds(60000));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->exit_code, 0) << r->err << "\nbroker log:\n" << broker.Log();
  }
  std::filesystem::remove(file);
}

// Every message of the topic read by `kcat -C -e`: partition -> "offset key value" lines.
std::map<int, std::vector<std::string>> ConsumeWithKcat(const KafkaBroker& broker,
                                                        const std::string& topic) {
  Result<ProgramOutput> r = RunProgram({Kcat(), "-C", "-b", broker.bootstrap(), "-t", topic, "-o",
                                        "beginning", "-e", "-q", "-f", "%p %o %k %s\\n"},
                                       milliseconds(60000));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::map<int, std::vector<std::string>> out;
  if (!r.ok()) {
    return out;
  }
  EXPECT_EQ(r->exit_code, 0) << r->err << "\nbroker log:\n" << broker.Log();
  std::istringstream lines(r->out);
  std::string line;
  while (std::getline(lines, line)) {
    int partition = std::stoi(line.substr(0, line.find(' ')));
    out[partition].push_back(line.substr(line.find(' ') + 1));
  }
  return out;
}

// The lines ConsumeWithKcat returns for what ProduceWithKcat wrote, ids [0, count).
std::vector<std::string> Expected(int partition, int count) {
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    lines.push_back(fmt::format("{} k{}-{} v{}-{}", i, partition, i, partition, i));
  }
  return lines;
}

void ExpectRoundTrip(KafkaBroker* broker, const std::string& topic, int partitions) {
  ASSERT_TRUE(broker->CreateTopic(topic, partitions).ok());
  ASSERT_NO_FATAL_FAILURE(ProduceWithKcat(*broker, topic, partitions, 0, kPerPartition));
  std::map<int, std::vector<std::string>> read = ConsumeWithKcat(*broker, topic);
  ASSERT_EQ(read.size(), static_cast<size_t>(partitions));
  for (int p = 0; p < partitions; ++p) {
    EXPECT_EQ(read[p], Expected(p, kPerPartition)) << "partition " << p;
  }
}

TEST(KafkaBrokerTest, StartsAndKcatReadsBackWhatItProducedOnEveryPartition) {
  KafkaBroker* broker = SharedBroker();
  ASSERT_NE(broker, nullptr);
  // The figures of docs/testing-servers.md.
  Result<int64_t> rss = broker->RssBytes();
  fprintf(stderr, "KAFKA_BROKER version=%s start_ms=%lld rss_mib=%lld\n", broker->version().c_str(),
          static_cast<long long>(broker->last_start_time().count()),
          static_cast<long long>(rss.ok() ? *rss >> 20 : -1));
  ExpectRoundTrip(broker, "roundtrip", 4);
}

TEST(KafkaBrokerTest, CreatingATopicTwiceIsAlreadyExists) {
  KafkaBroker* broker = SharedBroker();
  ASSERT_NE(broker, nullptr);
  ASSERT_TRUE(broker->CreateTopic("twice", 2).ok());
  Status again = broker->CreateTopic("twice", 2);
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
}

// Kafka 4.0 raised the least `segment.bytes` to 1 MiB (KIP-1030); tests that need small segments
// (compaction, retention) set the internal topic config `internal.segment.bytes` instead, which
// 4.x accepts below that.
TEST(KafkaBrokerTest, SmallSegmentsNeedTheInternalConfigOn4x) {
  KafkaBroker* broker = SharedBroker();
  ASSERT_NE(broker, nullptr);
  Status refused = broker->CreateTopic("small-segments", 1, {{"segment.bytes", "65536"}});
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find("1048576"), std::string::npos) << refused.ToString();
  Status created = broker->CreateTopic("small-segments", 1, {{"internal.segment.bytes", "16384"}});
  ASSERT_TRUE(created.ok()) << created.ToString();
  // 100 messages of ~1 KiB in batches of 4 KiB at most (a batch larger than a segment is
  // refused): the partition's log rolls into several segments.
  const std::string file = broker->dir() + "/big-input.txt";
  {
    std::ofstream out(file);
    for (int i = 0; i < 100; ++i) {
      out << std::string(1000, static_cast<char>('a' + i % 26)) << "\n";
    }
  }
  Result<ProgramOutput> r =
      RunProgram({Kcat(), "-P", "-b", broker->bootstrap(), "-t", "small-segments", "-p", "0", "-X",
                  "batch.size=4096", "-l", file},
                 milliseconds(60000));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->exit_code, 0) << r->err;
  size_t segments = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(broker->dir() + "/data/small-segments-0")) {
    segments += entry.path().extension() == ".log" ? 1 : 0;
  }
  EXPECT_GE(segments, 4u);
}

TEST(KafkaBrokerTest, MissingJarsNameTheSetupTarget) {
  KafkaBroker::Options options;
  options.home = "/nonexistent/kafka";
  Result<std::unique_ptr<KafkaBroker>> broker = KafkaBroker::Start(options);
  ASSERT_FALSE(broker.ok());
  EXPECT_EQ(broker.status().code(), StatusCode::kNotFound);
  EXPECT_NE(broker.status().ToString().find("make setup-kafka"), std::string::npos)
      << broker.status().ToString();
}

// Last of the shared broker's tests: it kills the broker and leaves it restarted.
TEST(KafkaBrokerTest, Kill9AndRestartKeepTheData) {
  KafkaBroker* broker = SharedBroker();
  ASSERT_NE(broker, nullptr);
  const int partitions = 3;
  ASSERT_TRUE(broker->CreateTopic("survives", partitions).ok());
  ASSERT_NO_FATAL_FAILURE(ProduceWithKcat(*broker, "survives", partitions, 0, kPerPartition));
  const int port = broker->port();
  ASSERT_TRUE(broker->Kill9().ok());
  EXPECT_FALSE(broker->Alive());
  ASSERT_TRUE(broker->Restart().ok()) << broker->Log();
  fprintf(stderr, "KAFKA_BROKER restart_after_kill9_ms=%lld\n",
          static_cast<long long>(broker->last_start_time().count()));
  EXPECT_EQ(broker->port(), port);
  // Acknowledged with acks=all before the kill: every message is still there, and the log
  // continues after them.
  ASSERT_NO_FATAL_FAILURE(
      ProduceWithKcat(*broker, "survives", partitions, kPerPartition, kPerPartition));
  std::map<int, std::vector<std::string>> read = ConsumeWithKcat(*broker, "survives");
  for (int p = 0; p < partitions; ++p) {
    EXPECT_EQ(read[p], Expected(p, 2 * kPerPartition)) << "partition " << p;
  }
}

TEST(KafkaBrokerTest, TheLast3xLineServesKcatToo) {
  KafkaBroker::Options options;
  options.version = KafkaBroker::Kafka3Version();
  Result<std::unique_ptr<KafkaBroker>> broker = KafkaBroker::Start(options);
  ASSERT_TRUE(broker.ok()) << broker.status().ToString();
  EXPECT_EQ((*broker)->version(), KafkaBroker::Kafka3Version());
  fprintf(stderr, "KAFKA_BROKER version=%s start_ms=%lld\n", (*broker)->version().c_str(),
          static_cast<long long>((*broker)->last_start_time().count()));
  ExpectRoundTrip(broker->get(), "roundtrip3", 3);
}

}  // namespace
}  // namespace ferry::testing
