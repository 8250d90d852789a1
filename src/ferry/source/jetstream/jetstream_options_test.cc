#include "ferry/source/jetstream/jetstream_options.h"

#include <gtest/gtest.h>

namespace ferry::source::jetstream {
namespace {

JetStreamOptions Valid() {
  JetStreamOptions options;
  options.connection.servers = {"nats://127.0.0.1:4222"};
  options.stream = "newstream";
  options.filters = {"newsub"};
  return options;
}

TEST(StartPolicyTest, ParsesEveryForm) {
  EXPECT_EQ(StartPolicy::Parse("all")->kind, StartPolicy::Kind::kAll);
  EXPECT_EQ(StartPolicy::Parse("new")->kind, StartPolicy::Kind::kNew);
  auto seq = StartPolicy::Parse("seq:42");
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(seq->kind, StartPolicy::Kind::kSequence);
  EXPECT_EQ(seq->sequence, 42u);
  EXPECT_EQ(StartPolicy::Parse("7")->sequence, 7u);
  auto t = StartPolicy::Parse("time:2024-05-01T12:00:00Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kind, StartPolicy::Kind::kTime);
  EXPECT_EQ(t->time_ns, 1714564800LL * 1'000'000'000);
  auto offset = StartPolicy::Parse("2024-05-01T14:00:00.25+02:00");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(offset->time_ns, 1714564800LL * 1'000'000'000 + 250'000'000);
}

TEST(StartPolicyTest, RejectsNonsense) {
  for (const char* bad : {"", "ALL", "seq:", "seq:0", "seq:-1", "0", "seq:x", "time:", "yesterday",
                          "2024-05-01", "2024-05-01T12:00:00", "2024-13-01T00:00:00Z",
                          "2024-05-01T12:00:00+2:00", "2024-05-01T12:00:00.Z"}) {
    EXPECT_EQ(StartPolicy::Parse(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(JetStreamOptionsTest, ValidDefaults) {
  EXPECT_TRUE(Valid().Validate().ok());
  EXPECT_EQ(PartitionKey("newstream", "newsub"), "jetstream/newstream/newsub");
}

TEST(JetStreamOptionsTest, RejectsBadCombinations) {
  auto expect_bad = [](JetStreamOptions options, const char* needle) {
    Status status = options.Validate();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << needle;
    EXPECT_NE(status.message().find(needle), std::string::npos) << status.ToString();
  };
  JetStreamOptions o = Valid();
  o.filters = {"orders.*", "orders.eu"};
  expect_bad(o, "overlap");
  o = Valid();
  o.filters = {};
  expect_bad(o, "no subject filter");
  o = Valid();
  o.filters = {"a..b"};
  expect_bad(o, "empty token");
  o = Valid();
  o.stream = "a.b";
  expect_bad(o, "stream name");
  o = Valid();
  o.connection.servers = {};
  expect_bad(o, "no server");
  o = Valid();
  o.connection.auth.user = "u";
  o.connection.auth.token = "t";
  expect_bad(o, "choose one");
  o = Valid();
  o.connection.auth.nkey_seed_file = "/x.nk";
  expect_bad(o, "nkey");
  o = Valid();
  o.connection.tls.cert_file = "/c.pem";
  expect_bad(o, "key_file");
  o = Valid();
  o.batch_size = 0;
  expect_bad(o, "batch_size");
}

}  // namespace
}  // namespace ferry::source::jetstream
