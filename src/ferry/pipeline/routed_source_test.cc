// RouteQueue and RoutedSource (routed_source.h): a queue's wake-ups and seal hint, chunks taken
// whole and delivered across polls, and chunk copies that outlive the router's poll.

#include "ferry/pipeline/routed_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "ferry/pipeline/routing_positions.h"

namespace ferry::pipeline {
namespace {

MessageChunk QueuedMessages(int32_t partition, std::vector<int64_t> positions) {
  MessageChunk chunk;
  for (int64_t position : positions) {
    chunk.messages.push_back({.partition = partition, .position = position});
  }
  return chunk;
}

// Wake ends a reader's wait with nothing; after SetSealHint, the Pop after one that took
// messages returns at once on an empty queue (so its pipeline seals), and the next one waits.
TEST(RouteQueueTest, WakeAndTheSealHintEndAWaitEarly) {
  RouteQueue queue(100);
  std::vector<RouteItem> out;
  auto popped = std::async(std::launch::async, [&] {
    std::vector<RouteItem> items;
    queue.Pop(10, std::chrono::minutes(2), &items);
    return items.size();
  });
  queue.Wake();
  ASSERT_EQ(popped.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "Wake did not end the wait";
  EXPECT_EQ(popped.get(), 0u);

  MessageChunk two = QueuedMessages(0, {1, 2});
  ASSERT_TRUE(queue.PushMessages(&two, [] { return false; }));
  queue.SetSealHint();
  queue.Pop(10, std::chrono::minutes(2), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].chunk.messages.size(), 2u);
  // Empty right after taking messages: back at once.
  auto empty = std::async(std::launch::async, [&] {
    std::vector<RouteItem> items;
    queue.Pop(10, std::chrono::minutes(2), &items);
    return items.size();
  });
  ASSERT_EQ(empty.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the Pop after the last messages waited";
  EXPECT_EQ(empty.get(), 0u);
  // Then a Pop waits for what comes (it does not return empty again at once).
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    MessageChunk one = QueuedMessages(0, {3});
    ASSERT_TRUE(queue.PushMessages(&one, [] { return false; }));
  });
  queue.Pop(10, std::chrono::minutes(2), &out);
  later.join();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].chunk.messages.size(), 1u);
  EXPECT_EQ(out[0].chunk.messages[0].position, 3);
}

// Chunks: a Pop takes whole chunks up to its count (at least one), a revocation drops a
// partition's messages inside them, and the routed source delivers a chunk larger than a poll
// over several polls, in order, views valid until the next poll.
TEST(RouteQueueTest, ChunksAreTakenWholeAndDeliveredAcrossPolls) {
  auto queue = std::make_shared<RouteQueue>(100);
  MessageChunk a = QueuedMessages(0, {1, 2, 3});
  MessageChunk b = QueuedMessages(1, {1, 2});
  MessageChunk c = QueuedMessages(0, {4, 5});
  ASSERT_TRUE(queue->PushMessages(&a, [] { return false; }));
  ASSERT_TRUE(queue->PushMessages(&b, [] { return false; }));
  ASSERT_TRUE(queue->PushMessages(&c, [] { return false; }));
  EXPECT_EQ(queue->messages(), 7u);
  EXPECT_EQ(queue->DropPartition(1), 2u);
  EXPECT_EQ(queue->messages(), 5u);
  std::vector<RouteItem> out;
  queue->Pop(1, std::chrono::milliseconds(0), &out);
  ASSERT_EQ(out.size(), 1u);  // one chunk of 3, though 1 was asked for
  EXPECT_EQ(out[0].chunk.messages.size(), 3u);
  queue->Pop(100, std::chrono::milliseconds(0), &out);
  ASSERT_EQ(out.size(), 2u);  // the emptied chunk of partition 1 and the last one
  EXPECT_EQ(out[0].chunk.messages.size(), 0u);
  EXPECT_EQ(queue->messages(), 0u);
}

// A spent chunk goes back to its queue and the next push hands it to the router: refilled, it
// reuses its byte block (no allocation in a steady flow) and holds only the new messages. A
// chunk above kSpareBytes is freed instead of kept.
TEST(RouteQueueTest, SpentChunksComeBackForTheNextFill) {
  RouteQueue queue(100);
  std::vector<std::string> payloads = {"first", "second"};
  std::vector<source::Message> polled;
  for (size_t i = 0; i < payloads.size(); ++i) {
    polled.push_back({.partition = 0, .position = static_cast<int64_t>(i), .payload = payloads[i]});
  }
  std::vector<std::string> no_reasons(polled.size());
  const std::vector<uint32_t> both = {0, 1};
  MessageChunk chunk;
  chunk.Fill(polled, both, no_reasons);
  const char* block = chunk.bytes.get();
  ASSERT_TRUE(queue.PushMessages(&chunk, [] { return false; }));
  EXPECT_EQ(chunk.bytes, nullptr) << "nothing was spent yet: the router gets an empty chunk";
  std::vector<RouteItem> out;
  queue.Pop(10, std::chrono::milliseconds(0), &out);
  ASSERT_EQ(out.size(), 1u);
  queue.Pop(10, std::chrono::milliseconds(0), &out);  // out's chunk is spent: kept
  EXPECT_TRUE(out.empty());

  MessageChunk next;
  next.Fill(polled, both, no_reasons);
  ASSERT_TRUE(queue.PushMessages(&next, [] { return false; }));
  EXPECT_EQ(next.bytes.get(), block) << "the spent chunk came back";
  EXPECT_TRUE(next.messages.empty());
  const std::vector<uint32_t> second = {1};
  next.Fill(polled, second, no_reasons);
  EXPECT_EQ(next.bytes.get(), block) << "a fill that fits reuses the block";
  ASSERT_EQ(next.messages.size(), 1u);
  EXPECT_EQ(next.messages[0].payload, "second");
  EXPECT_EQ(next.messages[0].position, 1);

  // Too large to keep: a spent chunk above kSpareBytes is freed, and the next push hands back
  // an empty chunk.
  RouteQueue other(100);
  std::string big(RouteQueue::kSpareBytes + 1, 'x');
  std::vector<source::Message> large = {{.partition = 0, .position = 2, .payload = big}};
  std::vector<std::string> one_reason(1);
  const std::vector<uint32_t> only = {0};
  MessageChunk huge;
  huge.Fill(large, only, one_reason);
  ASSERT_TRUE(other.PushMessages(&huge, [] { return false; }));
  other.Pop(10, std::chrono::milliseconds(0), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].chunk.messages[0].payload, big);
  other.Pop(10, std::chrono::milliseconds(0), &out);  // the large chunk is spent
  ASSERT_TRUE(other.PushMessages(&next, [] { return false; }));
  EXPECT_EQ(next.bytes, nullptr) << "a chunk above kSpareBytes was kept";
}

// A listener that takes every partition from the start.
class TakeAllListener final : public source::PartitionListener {
 public:
  Result<std::optional<int64_t>> OnAssigned(const source::PartitionInfo&) override {
    return std::optional<int64_t>();
  }
  void OnRevoked(const source::PartitionInfo&) override {}
};

TEST(RoutedSourceTest, AChunkLargerThanAPollIsDeliveredInOrderOverSeveralPolls) {
  auto queue = std::make_shared<RouteQueue>(100);
  RoutingPositions positions;
  positions.Reset(0, std::nullopt);
  std::vector<std::string> payloads = {"a", "bb", "ccc", "dddd", "eeeee"};
  std::vector<source::Message> polled;
  for (size_t i = 0; i < payloads.size(); ++i) {
    polled.push_back({.partition = 0, .position = static_cast<int64_t>(i), .payload = payloads[i]});
    positions.Take(0, static_cast<int64_t>(i), 0);
  }
  std::vector<uint32_t> rows = {0, 1, 2, 3, 4};
  std::vector<std::string> bad(payloads.size());
  bad[3] = "odd";
  MessageChunk chunk;
  chunk.Fill(polled, rows, bad);
  payloads.assign(payloads.size(), "overwritten");  // the chunk holds its own bytes
  queue->PushEvent({.kind = RouteItem::Kind::kAssign, .partition = {.index = 0, .key = "p0"}});
  ASSERT_TRUE(queue->PushMessages(&chunk, [] { return false; }));
  RoutedSource source(queue, &positions, 0, /*inert=*/false);
  TakeAllListener listener;
  ASSERT_TRUE(source.Start(&listener).ok());
  std::vector<std::string> seen;
  std::vector<source::Message> out;
  for (int poll = 0; poll < 4 && seen.size() < 5; ++poll) {
    ASSERT_TRUE(source.Poll(2, std::chrono::milliseconds(0), &out).ok());
    EXPECT_LE(out.size(), 2u);
    for (const source::Message& m : out) {
      seen.push_back(fmt::format("{}:{}:{}", m.position, m.payload, m.bad_reason));
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"0:a:", "1:bb:", "2:ccc:", "3:dddd:odd", "4:eeeee:"}));
}

}  // namespace
}  // namespace ferry::pipeline
