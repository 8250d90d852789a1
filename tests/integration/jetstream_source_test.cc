// JetStreamSource against a real nats-server (JetStream file store) on a free port, each test on
// Debian's 2.9.10 and on the pinned current release (TestedNatsServers()): exact
// starts at a table position, start policies, contiguity across a server SIGKILL and restart,
// independent filters, retention overruns, refused retention policies, slow processing.
#include "ferry/source/jetstream/jetstream_source.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "jetstream_tcp_proxy.h"
#include "jetstream_test_client.h"

#include "ferry/base/clock.h"
#include "ferry/testing/nats_server.h"

namespace ferry::source::jetstream {
namespace {

using ferry::testing::JetStreamTestClient;
using ferry::testing::NatsServer;
using ferry::testing::StreamSpec;
using ferry::testing::TcpProxy;

#define ASSERT_OK(expr)                                                  \
  do {                                                                   \
    Status assert_ok_status_ = (expr);                                   \
    ASSERT_TRUE(assert_ok_status_.ok()) << assert_ok_status_.ToString(); \
  } while (false)

class Listener : public PartitionListener {
 public:
  Result<std::optional<int64_t>> OnAssigned(const PartitionInfo& partition) override {
    assigned.push_back(partition);
    auto it = positions.find(partition.key);
    return it == positions.end() ? std::optional<int64_t>() : it->second;
  }
  void OnRevoked(const PartitionInfo& partition) override { revoked.push_back(partition.key); }

  std::map<std::string, int64_t> positions;
  std::vector<PartitionInfo> assigned;
  std::vector<std::string> revoked;
};

// A message copied out of the source (its views die at the next Poll).
struct Got {
  int32_t partition;
  int64_t position;
  std::string payload;
  std::string subject;
  std::string msg_id;
  int64_t timestamp_us;
  std::map<std::string, std::string> headers;
};

struct ReadResult {
  std::vector<Got> messages;
  Status error;  // the first error other than Unavailable
  int unavailable = 0;
};

// Polls until `count` messages arrived, a non-retryable error, or a generous safety deadline.
ReadResult ReadN(Source* source, size_t count, size_t per_poll = 500, int deadline_s = 60) {
  ReadResult result;
  std::vector<Message> batch;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(deadline_s);
  while (result.messages.size() < count && std::chrono::steady_clock::now() < deadline) {
    size_t want = std::min(per_poll, count - result.messages.size());
    Status status = source->Poll(want, std::chrono::milliseconds(100), &batch);
    if (status.code() == StatusCode::kUnavailable) {
      ++result.unavailable;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (!status.ok()) {
      result.error = status;
      break;
    }
    for (const Message& m : batch) {
      Got got{m.partition,
              m.position,
              std::string(m.payload),
              std::string(m.subject),
              std::string(m.msg_id),
              m.timestamp_us,
              {}};
      for (const Header& h : m.headers) {
        got.headers[std::string(h.name)] = std::string(h.value);
      }
      result.messages.push_back(std::move(got));
    }
  }
  return result;
}

std::vector<int64_t> Positions(const std::vector<Got>& messages, int32_t partition = -1) {
  std::vector<int64_t> out;
  for (const Got& m : messages) {
    if (partition < 0 || m.partition == partition) {
      out.push_back(m.position);
    }
  }
  return out;
}

std::vector<int64_t> Range(int64_t first, int64_t last) {
  std::vector<int64_t> out;
  for (int64_t i = first; i <= last; ++i) {
    out.push_back(i);
  }
  return out;
}

class JetStreamSourceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NatsServer::Options options;
    options.server = GetParam();
    auto server = NatsServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    auto client = JetStreamTestClient::Connect(server_->url());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
  }

  JetStreamOptions Options(const std::string& stream, std::vector<std::string> filters) {
    JetStreamOptions options;
    options.connection.servers = {server_->url()};
    options.connection.reconnect_wait_ms = 100;
    options.stream = stream;
    options.filters = std::move(filters);
    return options;
  }

  std::unique_ptr<JetStreamSource> MakeSource(JetStreamOptions options) {
    auto source = JetStreamSource::Create(std::move(options));
    EXPECT_TRUE(source.ok()) << source.status().ToString();
    return source.ok() ? std::move(*source) : nullptr;
  }

  void AddStream(StreamSpec spec) {
    Status status = client_->AddStream(spec);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  void Publish(const std::string& subject, int count, const std::string& prefix,
               int first_index = 1) {
    auto sequences = client_->Publish(subject, count, prefix, first_index);
    ASSERT_TRUE(sequences.ok()) << sequences.status().ToString();
  }

  std::unique_ptr<NatsServer> server_;
  std::unique_ptr<JetStreamTestClient> client_;
};

TEST_P(JetStreamSourceTest, StartsRightAfterTheTablePositionWithAllFields) {
  AddStream({.name = "newstream", .subjects = {"newsub"}});
  Publish("newsub", 100, "test #");
  auto source = MakeSource(Options("newstream", {"newsub"}));
  Listener listener;
  listener.positions["jetstream/newstream/newsub"] = 40;
  ASSERT_OK(source->Start(&listener));
  ASSERT_EQ(listener.assigned.size(), 1u);
  EXPECT_EQ(listener.assigned[0].key, "jetstream/newstream/newsub");
  EXPECT_EQ(listener.assigned[0].index, 0);

  ReadResult read = ReadN(source.get(), 60);
  ASSERT_TRUE(read.error.ok()) << read.error.ToString();
  EXPECT_EQ(Positions(read.messages), Range(41, 100));
  const Got& first = read.messages.front();
  EXPECT_EQ(first.partition, 0);
  EXPECT_EQ(first.payload, "test #41");
  EXPECT_EQ(first.subject, "newsub");
  EXPECT_EQ(first.msg_id, "test #41");
  EXPECT_EQ(first.headers.at("X-Index"), "41");
  EXPECT_EQ(first.headers.at("Nats-Msg-Id"), "test #41");
  int64_t now_us = WallMicros();
  EXPECT_GT(first.timestamp_us, now_us - 3'600'000'000LL);
  EXPECT_LE(first.timestamp_us, now_us);

  // Nothing more: an empty poll is not an error.
  std::vector<Message> batch;
  ASSERT_TRUE(source->Poll(100, std::chrono::milliseconds(50), &batch).ok());
  EXPECT_TRUE(batch.empty());

  auto heads = source->Heads();
  ASSERT_TRUE(heads.ok()) << heads.status().ToString();
  ASSERT_EQ(heads->size(), 1u);
  EXPECT_EQ((*heads)[0].key, "jetstream/newstream/newsub");
  EXPECT_EQ((*heads)[0].last_position, 100);
  EXPECT_EQ((*heads)[0].first_position, 1);
  // The consumer needs no acks: no consumer of the stream has an ack policy other than none.
  auto policies = client_->ConsumerAckPolicies("newstream");
  ASSERT_TRUE(policies.ok()) << policies.status().ToString();
  ASSERT_EQ(policies->size(), 1u);
  EXPECT_EQ((*policies)[0], js_AckNone);
  ASSERT_TRUE(source->Close().ok());
  EXPECT_EQ(source->Poll(10, std::chrono::milliseconds(0), &batch).code(), StatusCode::kCancelled);
  policies = client_->ConsumerAckPolicies("newstream");
  ASSERT_TRUE(policies.ok());
  EXPECT_TRUE(policies->empty()) << "Close() deletes the consumers it created";
}

TEST_P(JetStreamSourceTest, PositionAtTheHeadWaitsForNewMessages) {
  AddStream({.name = "s", .subjects = {"x"}});
  Publish("x", 10, "m");
  auto source = MakeSource(Options("s", {"x"}));
  Listener listener;
  listener.positions["jetstream/s/x"] = 10;
  ASSERT_OK(source->Start(&listener));
  std::vector<Message> batch;
  ASSERT_TRUE(source->Poll(100, std::chrono::milliseconds(100), &batch).ok());
  EXPECT_TRUE(batch.empty());
  Publish("x", 5, "m", 11);
  ReadResult read = ReadN(source.get(), 5);
  ASSERT_TRUE(read.error.ok()) << read.error.ToString();
  EXPECT_EQ(Positions(read.messages), Range(11, 15));
}

TEST_P(JetStreamSourceTest, StartPolicies) {
  AddStream({.name = "s", .subjects = {"x"}});
  Publish("x", 10, "m");
  auto start_with = [&](const char* policy) {
    JetStreamOptions options = Options("s", {"x"});
    auto parsed = StartPolicy::Parse(policy);
    EXPECT_TRUE(parsed.ok()) << policy;
    options.start = *parsed;
    auto source = MakeSource(options);
    Listener listener;
    Status status = source->Start(&listener);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return source;
  };
  {
    auto source = start_with("all");
    ReadResult read = ReadN(source.get(), 10);
    EXPECT_EQ(Positions(read.messages), Range(1, 10));
  }
  {
    auto source = start_with("seq:7");
    ReadResult read = ReadN(source.get(), 4);
    EXPECT_EQ(Positions(read.messages), Range(7, 10));
  }
  int64_t sixth_time_us = 0;
  {
    auto source = start_with("new");
    std::vector<Message> batch;
    ASSERT_TRUE(source->Poll(100, std::chrono::milliseconds(200), &batch).ok());
    EXPECT_TRUE(batch.empty()) << "'new' must skip what the stream held at start";
    Publish("x", 5, "m", 11);
    ReadResult read = ReadN(source.get(), 5);
    EXPECT_EQ(Positions(read.messages), Range(11, 15));
    sixth_time_us = read.messages.at(2).timestamp_us;  // sequence 13
  }
  {
    // time: the first message stored at or after sequence 13's timestamp.
    JetStreamOptions options = Options("s", {"x"});
    options.start.kind = StartPolicy::Kind::kTime;
    options.start.time_ns = sixth_time_us * 1000;
    auto source = MakeSource(options);
    Listener listener;
    ASSERT_OK(source->Start(&listener));
    ReadResult read = ReadN(source.get(), 3);
    // Timestamps reach the test truncated to microseconds; synchronous publishes are far more
    // than a microsecond apart, so 12 is before the start and 13 at or after it.
    ASSERT_FALSE(read.messages.empty());
    EXPECT_EQ(read.messages.front().position, 13);
    EXPECT_EQ(read.messages.back().position, 15);
    EXPECT_TRUE(std::is_sorted(read.messages.begin(), read.messages.end(),
                               [](const Got& a, const Got& b) { return a.position < b.position; }));
  }
  {
    // A table position wins over the policy.
    JetStreamOptions options = Options("s", {"x"});
    options.start.kind = StartPolicy::Kind::kNew;
    auto source = MakeSource(options);
    Listener listener;
    listener.positions["jetstream/s/x"] = 3;
    ASSERT_OK(source->Start(&listener));
    ReadResult read = ReadN(source.get(), 12);
    EXPECT_EQ(Positions(read.messages), Range(4, 15));
  }
}

TEST_P(JetStreamSourceTest, EverySequenceOnceInOrderAcrossServerKillAndRestart) {
  AddStream({.name = "s", .subjects = {"x"}});
  Publish("x", 3000, "m");
  JetStreamOptions options = Options("s", {"x"});
  options.heartbeat_ms = 500;
  auto source = MakeSource(options);
  Listener listener;
  ASSERT_OK(source->Start(&listener));
  ReadResult before = ReadN(source.get(), 1000, 100);
  ASSERT_TRUE(before.error.ok()) << before.error.ToString();
  ASSERT_EQ(before.messages.size(), 1000u);

  std::vector<int64_t> all = Positions(before.messages);

  ASSERT_TRUE(server_->Kill9().ok());
  // While the server is down, polls return what the client had buffered, then nothing (or
  // Unavailable), and never fail otherwise.
  std::vector<Message> batch;
  for (int i = 0; i < 5; ++i) {
    Status status = source->Poll(100, std::chrono::milliseconds(20), &batch);
    EXPECT_TRUE(status.ok() || status.code() == StatusCode::kUnavailable) << status.ToString();
    for (const Message& m : batch) {
      all.push_back(m.position);
    }
  }
  ASSERT_TRUE(server_->Restart().ok());
  // More messages after the restart, through a fresh client.
  auto client = JetStreamTestClient::Connect(server_->url());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Publish("x", 1000, "m", 3001).ok());

  ReadResult after = ReadN(source.get(), 4000 - all.size());
  ASSERT_TRUE(after.error.ok()) << after.error.ToString();
  for (int64_t p : Positions(after.messages)) {
    all.push_back(p);
  }
  EXPECT_EQ(all.size(), 4000u);
  std::set<int64_t> unique(all.begin(), all.end());
  EXPECT_EQ(unique.size(), all.size()) << "a sequence was delivered twice";
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(*unique.begin(), 1);
  EXPECT_EQ(*unique.rbegin(), 4000);
}

TEST_P(JetStreamSourceTest, TwoFiltersAtDifferentSpeedsKeepTheirOwnPositions) {
  AddStream({.name = "orders", .subjects = {"orders.eu", "orders.us"}});
  // Interleaved: 50 rounds of 20 eu and 1 us.
  std::vector<int64_t> eu_seqs;
  std::vector<int64_t> us_seqs;
  for (int round = 0; round < 50; ++round) {
    auto eu = client_->Publish("orders.eu", 20, "eu", round * 20 + 1);
    auto us = client_->Publish("orders.us", 1, "us", round + 1);
    ASSERT_TRUE(eu.ok() && us.ok());
    eu_seqs.insert(eu_seqs.end(), eu->begin(), eu->end());
    us_seqs.insert(us_seqs.end(), us->begin(), us->end());
  }
  auto source = MakeSource(Options("orders", {"orders.eu", "orders.us"}));
  Listener listener;
  // eu has committed its 600th message, us its 10th.
  listener.positions["jetstream/orders/orders.eu"] = eu_seqs[599];
  listener.positions["jetstream/orders/orders.us"] = us_seqs[9];
  ASSERT_OK(source->Start(&listener));
  ASSERT_EQ(listener.assigned.size(), 2u);
  EXPECT_EQ(listener.assigned[0].key, "jetstream/orders/orders.eu");
  EXPECT_EQ(listener.assigned[1].key, "jetstream/orders/orders.us");

  ReadResult read = ReadN(source.get(), 400 + 40, 64);
  ASSERT_TRUE(read.error.ok()) << read.error.ToString();
  std::vector<int64_t> want_eu(eu_seqs.begin() + 600, eu_seqs.end());
  std::vector<int64_t> want_us(us_seqs.begin() + 10, us_seqs.end());
  EXPECT_EQ(Positions(read.messages, 0), want_eu);
  EXPECT_EQ(Positions(read.messages, 1), want_us);
  for (const Got& m : read.messages) {
    EXPECT_EQ(m.subject, m.partition == 0 ? "orders.eu" : "orders.us");
  }
  // Neither filter's skipped sequences (the other's messages) counted as lost or deleted.
  EXPECT_EQ(source->stats().gaps, 0u);
  EXPECT_EQ(source->stats().deleted_sequences, 0u);
  EXPECT_TRUE(source->TakeGaps().empty());
  auto heads = source->Heads();
  ASSERT_TRUE(heads.ok());
  EXPECT_EQ((*heads)[0].last_position, eu_seqs.back());
  EXPECT_EQ((*heads)[1].last_position, us_seqs.back());
}

TEST_P(JetStreamSourceTest, RetentionOverrunIsDataLossNamingTheRange) {
  AddStream({.name = "small", .subjects = {"x"}, .max_msgs = 100});
  Publish("x", 300, "m");  // the stream keeps 201..300
  auto source = MakeSource(Options("small", {"x"}));
  Listener listener;
  listener.positions["jetstream/small/x"] = 50;
  Status status = source->Start(&listener);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status.ToString();
  EXPECT_NE(status.message().find("jetstream/small/x"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("stream 'small'"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("filter 'x'"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("51..200"), std::string::npos) << status.message();
  EXPECT_EQ(listener.revoked, std::vector<std::string>{"jetstream/small/x"});
}

TEST_P(JetStreamSourceTest, RetentionOverrunWithContinueReportsTheGap) {
  AddStream({.name = "small", .subjects = {"x"}, .max_msgs = 100});
  Publish("x", 300, "m");
  JetStreamOptions options = Options("small", {"x"});
  options.on_gap = OnGap::kContinue;
  auto source = MakeSource(options);
  Listener listener;
  listener.positions["jetstream/small/x"] = 50;
  ASSERT_OK(source->Start(&listener));
  std::vector<Gap> gaps = source->TakeGaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].key, "jetstream/small/x");
  EXPECT_EQ(gaps[0].partition, 0);
  EXPECT_EQ(gaps[0].first_position, 51);
  EXPECT_EQ(gaps[0].last_position, 200);
  EXPECT_TRUE(source->TakeGaps().empty()) << "each gap is reported once";
  ReadResult read = ReadN(source.get(), 100);
  EXPECT_EQ(Positions(read.messages), Range(201, 300));
}

// Retention overruns a consumer that was cut off (a network partition through a proxy the test
// controls; the server keeps running and trims the stream): every sequence is either delivered
// once or inside a reported gap, never silently skipped, and what the client had already
// buffered before the cut is still delivered.
TEST_P(JetStreamSourceTest, RetentionOverrunWhileAwayIsReportedNotSkipped) {
  AddStream({.name = "small", .subjects = {"x"}, .max_msgs = 100});
  Publish("x", 100, "m");
  auto proxy = TcpProxy::Start(server_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  JetStreamOptions options = Options("small", {"x"});
  options.connection.servers = {"nats://127.0.0.1:" + std::to_string((*proxy)->port())};
  options.on_gap = OnGap::kContinue;
  auto source = MakeSource(options);
  Listener listener;
  ASSERT_OK(source->Start(&listener));
  ReadResult first = ReadN(source.get(), 10, 10);
  ASSERT_EQ(Positions(first.messages), Range(1, 10));
  (*proxy)->Cut();
  Publish("x", 2000, "n", 101);  // the stream keeps 2001..2100
  ASSERT_TRUE((*proxy)->Restore().ok());

  std::vector<int64_t> delivered = Positions(first.messages);
  std::vector<Gap> gaps;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((delivered.empty() || delivered.back() < 2100) &&
         std::chrono::steady_clock::now() < deadline) {
    ReadResult more = ReadN(source.get(), 1, 500, 5);
    ASSERT_TRUE(more.error.ok()) << more.error.ToString();
    for (int64_t p : Positions(more.messages)) {
      delivered.push_back(p);
    }
    for (Gap& gap : source->TakeGaps()) {
      gaps.push_back(gap);
    }
  }
  ASSERT_FALSE(gaps.empty()) << "2000 messages through a 100-message stream must lose some";
  std::vector<int> seen(2101, 0);
  for (int64_t p : delivered) {
    ++seen[static_cast<size_t>(p)];
  }
  for (const Gap& gap : gaps) {
    EXPECT_EQ(gap.key, "jetstream/small/x");
    for (int64_t p = gap.first_position; p <= gap.last_position; ++p) {
      ++seen[static_cast<size_t>(p)];
    }
  }
  for (size_t p = 1; p <= 2100; ++p) {
    EXPECT_EQ(seen[p], 1) << "sequence " << p << " delivered/reported " << seen[p] << " times";
  }
  EXPECT_TRUE(std::is_sorted(delivered.begin(), delivered.end()));
  EXPECT_EQ(delivered.back(), 2100);
}

// A network partition while the stream's limits trim what the consumer has not received: the
// default stops with DataLoss naming exactly the trimmed range, and keeps failing. (Through a
// proxy the test cuts, so the consumer cannot be recreated before the trim.)
TEST_P(JetStreamSourceTest, RetentionOverrunDuringAPartitionStopsByDefault) {
  AddStream({.name = "small", .subjects = {"x"}, .max_msgs = 100});
  Publish("x", 100, "m");
  auto proxy = TcpProxy::Start(server_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  JetStreamOptions options = Options("small", {"x"});
  options.connection.servers = {"nats://127.0.0.1:" + std::to_string((*proxy)->port())};
  auto source = MakeSource(options);
  Listener listener;
  ASSERT_OK(source->Start(&listener));
  ReadResult first = ReadN(source.get(), 100, 100);
  ASSERT_EQ(Positions(first.messages), Range(1, 100));

  (*proxy)->Cut();
  Publish("x", 300, "n", 101);  // the stream keeps 301..400
  ASSERT_TRUE((*proxy)->Restore().ok());

  ReadResult rest = ReadN(source.get(), 300);
  EXPECT_TRUE(rest.messages.empty());
  EXPECT_EQ(rest.error.code(), StatusCode::kDataLoss) << rest.error.ToString();
  EXPECT_NE(rest.error.message().find("sequences 101..300"), std::string::npos)
      << rest.error.message();
  std::vector<Message> batch;
  EXPECT_EQ(source->Poll(10, std::chrono::milliseconds(10), &batch).code(), StatusCode::kDataLoss);
}

// A partition without loss: the consumer continues exactly after the last delivered sequence.
TEST_P(JetStreamSourceTest, EverySequenceOnceAcrossANetworkPartition) {
  AddStream({.name = "s", .subjects = {"x"}});
  Publish("x", 500, "m");
  auto proxy = TcpProxy::Start(server_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  JetStreamOptions options = Options("s", {"x"});
  options.connection.servers = {"nats://127.0.0.1:" + std::to_string((*proxy)->port())};
  auto source = MakeSource(options);
  Listener listener;
  ASSERT_OK(source->Start(&listener));
  ReadResult before = ReadN(source.get(), 200, 50);
  std::vector<int64_t> all = Positions(before.messages);
  (*proxy)->Cut();
  Publish("x", 500, "n", 501);
  std::vector<Message> batch;
  for (int i = 0; i < 3; ++i) {
    Status status = source->Poll(100, std::chrono::milliseconds(20), &batch);
    ASSERT_TRUE(status.ok() || status.code() == StatusCode::kUnavailable) << status.ToString();
    for (const Message& m : batch) {
      all.push_back(m.position);
    }
  }
  ASSERT_TRUE((*proxy)->Restore().ok());
  ReadResult after = ReadN(source.get(), 1000 - all.size());
  ASSERT_TRUE(after.error.ok()) << after.error.ToString();
  for (int64_t p : Positions(after.messages)) {
    all.push_back(p);
  }
  EXPECT_EQ(all, Range(1, 1000));
}

TEST_P(JetStreamSourceTest, WorkQueueAndInterestStreamsAreRefused) {
  AddStream({.name = "wq", .subjects = {"wq"}, .retention = js_WorkQueuePolicy});
  AddStream({.name = "interest", .subjects = {"in"}, .retention = js_InterestPolicy});
  {
    auto source = MakeSource(Options("wq", {"wq"}));
    Listener listener;
    Status status = source->Start(&listener);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("'wq' uses WorkQueue retention"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("Limits retention"), std::string::npos);
    EXPECT_TRUE(listener.assigned.empty()) << "refused before any partition is assigned";
  }
  {
    auto source = MakeSource(Options("interest", {"in"}));
    Listener listener;
    Status status = source->Start(&listener);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("'interest' uses Interest retention"), std::string::npos)
        << status.message();
  }
}

TEST_P(JetStreamSourceTest, MissingStreamAndFilterOutsideTheStream) {
  AddStream({.name = "s", .subjects = {"x"}});
  {
    auto source = MakeSource(Options("nope", {"x"}));
    Listener listener;
    Status status = source->Start(&listener);
    EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
    EXPECT_NE(status.message().find("'nope'"), std::string::npos);
  }
  {
    // 2.9 refuses the consumer, 2.10+ would create it and wait forever: ferry refuses it
    // itself, before any partition is assigned.
    auto source = MakeSource(Options("s", {"y"}));
    Listener listener;
    Status status = source->Start(&listener);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_NE(status.message().find("filter 'y'"), std::string::npos) << status.ToString();
    EXPECT_TRUE(listener.assigned.empty());
  }
}

TEST_P(JetStreamSourceTest, PositionPastARecreatedStreamIsDataLoss) {
  AddStream({.name = "s", .subjects = {"x"}});
  Publish("x", 10, "m");
  auto source = MakeSource(Options("s", {"x"}));
  Listener listener;
  listener.positions["jetstream/s/x"] = 5000;  // from the stream's previous life
  Status status = source->Start(&listener);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("past the stream's last sequence 10"), std::string::npos)
      << status.message();
}

// Processing slower than any ack wait or heartbeat: nothing is redelivered, nothing is missed,
// because the consumer needs no acks and the client buffers what the server pushed.
TEST_P(JetStreamSourceTest, SlowProcessingGetsEverythingOnce) {
  AddStream({.name = "s", .subjects = {"x"}});
  Publish("x", 1500, "m");
  JetStreamOptions options = Options("s", {"x"});
  options.heartbeat_ms = 100;
  auto source = MakeSource(options);
  Listener listener;
  ASSERT_OK(source->Start(&listener));
  std::vector<int64_t> all;
  for (int round = 0; round < 3; ++round) {
    ReadResult read = ReadN(source.get(), 500, 500);
    ASSERT_TRUE(read.error.ok()) << read.error.ToString();
    for (int64_t p : Positions(read.messages)) {
      all.push_back(p);
    }
    // A "batch" that takes 12 heartbeat intervals.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  }
  EXPECT_EQ(all, Range(1, 1500));
  std::vector<Message> batch;
  ASSERT_TRUE(source->Poll(100, std::chrono::milliseconds(300), &batch).ok());
  EXPECT_TRUE(batch.empty()) << "nothing redelivered after the slow batches";
}

TEST_P(JetStreamSourceTest, HeadsOfAFilteredPartitionAndOfAnEmptyOne) {
  AddStream({.name = "s", .subjects = {"a.*", "b"}});
  Publish("a.x", 3, "a");
  Publish("b", 2, "b");
  Publish("a.y", 1, "a", 4);
  auto source = MakeSource(Options("s", {"a.*", "b"}));
  Listener listener;
  ASSERT_OK(source->Start(&listener));
  auto heads = source->Heads();
  ASSERT_TRUE(heads.ok()) << heads.status().ToString();
  ASSERT_EQ(heads->size(), 2u);
  EXPECT_EQ((*heads)[0].last_position, 6);
  EXPECT_EQ((*heads)[1].last_position, 5);
  EXPECT_EQ((*heads)[0].first_position, 1);

  AddStream({.name = "empty", .subjects = {"e"}});
  auto empty = MakeSource(Options("empty", {"e"}));
  Listener listener2;
  ASSERT_TRUE(empty->Start(&listener2).ok());
  heads = empty->Heads();
  ASSERT_TRUE(heads.ok());
  EXPECT_FALSE((*heads)[0].last_position.has_value());
}

TEST_P(JetStreamSourceTest, UnreachableServerIsUnavailable) {
  JetStreamOptions options = Options("s", {"x"});
  ASSERT_TRUE(server_->Kill9().ok());
  auto source = MakeSource(options);
  Listener listener;
  Status status = source->Start(&listener);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_NE(status.message().find(server_->url()), std::string::npos) << status.message();
}

// Shutting down while the server is away neither fails nor waits for the JetStream API timeout
// per filter (the test's own timeout would catch a hang).
TEST_P(JetStreamSourceTest, CloseWhileTheServerIsDown) {
  AddStream({.name = "s", .subjects = {"a", "b"}});
  Publish("a", 3, "m");
  auto source = MakeSource(Options("s", {"a", "b"}));
  Listener listener;
  ASSERT_OK(source->Start(&listener));
  ReadResult read = ReadN(source.get(), 3);
  ASSERT_EQ(Positions(read.messages), Range(1, 3));
  ASSERT_TRUE(server_->Kill9().ok());
  std::vector<Message> batch;
  Status status = source->Poll(10, std::chrono::milliseconds(50), &batch);
  EXPECT_TRUE(status.ok() || status.code() == StatusCode::kUnavailable) << status.ToString();
  EXPECT_TRUE(source->Close().ok());
  EXPECT_EQ(source->Poll(10, std::chrono::milliseconds(0), &batch).code(), StatusCode::kCancelled);
}

INSTANTIATE_TEST_SUITE_P(Servers, JetStreamSourceTest,
                         ::testing::ValuesIn(ferry::testing::TestedNatsServers()),
                         ferry::testing::NatsServerParamName());

}  // namespace
}  // namespace ferry::source::jetstream
