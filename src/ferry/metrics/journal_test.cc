#include "ferry/metrics/journal.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ferry/metrics/metrics.h"

namespace ferry::metrics {
namespace {

TEST(JournalTest, StatesAndTheErrorOfAFailureStays) {
  int64_t now = 1000;
  Journal j([&] { return now; });
  j.SetState({"a"}, PipelineState::kRunning);
  EXPECT_EQ(j.Read().at({"a"}).state, PipelineState::kRunning);
  now = 2000;
  j.SetState({"a"}, PipelineState::kWaitingForBroker, "kafka: all brokers down");
  PipelineRecord r = j.Read().at({"a"});
  EXPECT_EQ(r.state, PipelineState::kWaitingForBroker);
  EXPECT_EQ(r.state_since_ms, 2000);
  EXPECT_EQ(r.error, "kafka: all brokers down");
  now = 3000;
  j.SetState({"a"}, PipelineState::kFailed, "bad message at offset 7");
  j.SetState({"a"}, PipelineState::kStopped);
  r = j.Read().at({"a"});
  EXPECT_EQ(r.state, PipelineState::kFailed);
  EXPECT_EQ(r.error, "bad message at offset 7");
  EXPECT_EQ(r.error_ms, 3000);
  EXPECT_EQ(PipelineStateName(r.state), "failed");
}

TEST(JournalTest, ACommitEndsRetryingAndListsAreBounded) {
  Journal j([] { return 5; });
  j.SetState({"a"}, PipelineState::kRetrying, "EIO");
  for (int i = 0; i < 50; ++i) {
    j.RecordCommit({"a"}, {.version = i, .time_ms = 10 + i, .positions = {{"kafka/t/0", i, i}}});
    j.RecordFence({"a"}, {.time_ms = i, .reason = "lost"});
    j.RecordDroppedField({"a"}, {.time_ms = i, .writer = "schema id 3", .field = "f"});
  }
  PipelineRecord r = j.Read().at({"a"});
  EXPECT_EQ(r.state, PipelineState::kRunning);
  EXPECT_EQ(r.state_since_ms, 10);
  ASSERT_EQ(r.commits.size(), Journal::kMaxCommits);
  EXPECT_EQ(r.commits.back().version, 49);
  EXPECT_EQ(r.commits.front().version, 50 - static_cast<int64_t>(Journal::kMaxCommits));
  EXPECT_EQ(r.fences.size(), Journal::kMaxFences);
  ASSERT_EQ(r.dropped_fields.size(), Journal::kMaxDroppedFields);
  EXPECT_EQ(r.dropped_fields.back().time_ms, 49);
  EXPECT_EQ(r.dropped_fields.back().writer, "schema id 3");
}

TEST(JournalTest, PayloadsOnlyWhenAskedAndTruncated) {
  Journal j;
  j.RecordBadRecord({"a"}, {.partition = "kafka/t/0", .position = 3, .error = "malformed"},
                    "{secret");
  EXPECT_FALSE(j.Read().at({"a"}).bad_records.back().payload.has_value());
  j.set_keep_payloads(true);
  std::string big(5000, 'x');
  j.RecordBadRecord({"a"}, {.partition = "kafka/t/0", .position = 4, .error = "malformed"}, big);
  BadRecordSample s = j.Read().at({"a"}).bad_records.back();
  ASSERT_TRUE(s.payload.has_value());
  EXPECT_EQ(s.payload->size(), Journal::kMaxPayloadBytes + 3);
  EXPECT_EQ(s.position, 4);
}

TEST(JournalTest, TextsAreRedacted) {
  Journal j;
  j.set_keep_payloads(true);
  j.set_redactor([](std::string text) {
    for (size_t pos; (pos = text.find("hunter2")) != std::string::npos;) {
      text.replace(pos, 7, "***");
    }
    return text;
  });
  j.SetState({"a"}, PipelineState::kWaitingForBroker, "nats://u:hunter2@host: refused");
  j.RecordBadRecord({"a"}, {.error = "bad hunter2"}, "payload hunter2");
  j.RecordFence({"a"}, {.reason = "hunter2"});
  j.RecordMaintenance({"a"}, {.detail = "hunter2"});
  PipelineRecord r = j.Read().at({"a"});
  EXPECT_EQ(r.error, "nats://u:***@host: refused");
  EXPECT_EQ(r.bad_records.back().error, "bad ***");
  EXPECT_EQ(r.bad_records.back().payload, "payload ***");
  EXPECT_EQ(r.fences.back().reason, "***");
  EXPECT_EQ(r.maintenance.back().detail, "***");
}

TEST(JournalTest, TheCheckpointTimeIsKeptWhileItsVersionIs) {
  Journal j;
  j.SetTable({"a"}, {.version = 10, .checkpoint_version = 10, .checkpoint_ms = 777});
  j.SetTable({"a"}, {.version = 11, .checkpoint_version = 10});
  EXPECT_EQ(j.Read().at({"a"}).table->checkpoint_ms, 777);
  j.SetTable({"a"}, {.version = 12, .checkpoint_version = 0});
  EXPECT_EQ(j.Read().at({"a"}).table->checkpoint_version, 10);
  EXPECT_EQ(j.Read().at({"a"}).table->checkpoint_ms, 777);
  j.SetTable({"a"}, {.version = 20, .checkpoint_version = 20});
  EXPECT_FALSE(j.Read().at({"a"}).table->checkpoint_ms.has_value());
}

TEST(JournalTest, EachTableOfARoutedPipelineKeepsItsOwnRecord) {
  int64_t now = 100;
  Journal j([&] { return now; });
  const JournalKey orders{"events", "/data/orders"};
  const JournalKey users{"events", "/data/users"};
  j.SetState(orders, PipelineState::kRunning);
  j.SetState(users, PipelineState::kRunning);
  j.RecordCommit(orders, {.version = 3, .rows = 30, .positions = {{"kafka/t/0", 0, 40}}});
  j.RecordCommit(users, {.version = 7, .rows = 10, .positions = {{"kafka/t/0", 5, 41}}});
  j.RecordCommit(orders, {.version = 4, .rows = 5, .positions = {{"kafka/t/0", 42, 50}}});
  j.SetTable(orders, {.version = 4, .num_files = 2});
  j.SetTable(users, {.version = 7, .num_files = 9});
  now = 200;
  j.SetState(users, PipelineState::kRetrying, "EIO on /data/users");
  j.RecordFence(users, {.reason = "another writer took kafka/t/0"});

  std::map<JournalKey, PipelineRecord> all = j.Read();
  ASSERT_EQ(all.size(), 2u);  // no record of the pipeline's own: nothing was told of it
  const PipelineRecord& o = all.at(orders);
  ASSERT_EQ(o.commits.size(), 2u);
  EXPECT_EQ(o.commits[0].version, 3);
  EXPECT_EQ(o.commits[0].rows, 30);
  EXPECT_EQ(o.commits[1].version, 4);
  EXPECT_EQ(o.table->version, 4);
  EXPECT_EQ(o.table->num_files, 2);
  EXPECT_EQ(o.state, PipelineState::kRunning);
  EXPECT_TRUE(o.error.empty());
  EXPECT_TRUE(o.fences.empty());
  const PipelineRecord& u = all.at(users);
  ASSERT_EQ(u.commits.size(), 1u);
  EXPECT_EQ(u.commits[0].version, 7);
  EXPECT_EQ(u.commits[0].rows, 10);
  EXPECT_EQ(u.table->version, 7);
  EXPECT_EQ(u.state, PipelineState::kRetrying);
  EXPECT_EQ(u.state_since_ms, 200);
  EXPECT_EQ(u.error, "EIO on /data/users");
  EXPECT_EQ(u.fences.size(), 1u);
  // A one-table pipeline's record (table empty) is apart from both, and ordered before them.
  j.SetState({"events"}, PipelineState::kStopped);
  all = j.Read();
  EXPECT_EQ(all.begin()->first, (JournalKey{"events", ""}));
  EXPECT_EQ(all.at({"events"}).state, PipelineState::kStopped);
  EXPECT_TRUE(all.at({"events"}).commits.empty());
  EXPECT_EQ(all.at(orders).state, PipelineState::kRunning);
}

TEST(JournalTest, TheRegistryHoldsOneAndHistogramTotals) {
  Registry r;
  r.journal()->SetState({"p"}, PipelineState::kRunning);
  EXPECT_EQ(r.journal()->Read().size(), 1u);
  Histogram* h = r.GetHistogram("h_seconds", "h", {{"pipeline", "p"}});
  h->Observe(0.5);
  h->Observe(1.5);
  std::vector<Registry::HistogramTotals> totals = r.Histograms("h_seconds");
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].count, 2u);
  EXPECT_DOUBLE_EQ(totals[0].sum, 2.0);
  EXPECT_TRUE(r.Histograms("absent").empty());
}

}  // namespace
}  // namespace ferry::metrics
