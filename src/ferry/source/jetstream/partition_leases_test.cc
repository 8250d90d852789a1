// PartitionLeases on a real nats-server (FERRY_NATS_SERVER or Debian's): processes share the
// partitions exactly, a released lease waits for Confirm, a clean leave hands everything over at
// once, a bucket with another TTL is refused. Each test uses its own scope in one server.
#include "ferry/source/jetstream/partition_leases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferry/testing/nats_server.h"
#include "ferry/testing/wait_until.h"

namespace ferry::source::jetstream {
namespace {

using std::chrono::milliseconds;

class PartitionLeasesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = testing::NatsServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  std::shared_ptr<PartitionLeases> Make(const std::string& pipeline, const std::string& member,
                                        int partitions, milliseconds ttl = milliseconds(1000),
                                        const std::string& bucket = "test_leases") {
    LeaseOptions o;
    o.connection.servers = {server_->url()};
    o.bucket = bucket;
    o.pipeline = pipeline;
    o.stream = "orders";
    o.partitions = partitions;
    o.ttl = ttl;
    o.member = member;
    auto made = PartitionLeases::Create(o);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? *made : nullptr;
  }

  // Confirms what each reads (as a source would) until the owned sets are disjoint, cover every
  // partition and have the expected sizes.
  static bool Settled(const std::vector<std::shared_ptr<PartitionLeases>>& all, int partitions,
                      const std::vector<size_t>& sizes) {
    return testing::WaitUntil(
        [&] {
          std::set<int> seen;
          std::vector<size_t> got;
          for (const auto& l : all) {
            std::vector<int> owned = l->Owned();
            l->Confirm(std::set<int>(owned.begin(), owned.end()));
            got.push_back(owned.size());
            for (int p : owned) {
              if (!seen.insert(p).second) {
                return false;
              }
            }
          }
          std::sort(got.begin(), got.end());
          return static_cast<int>(seen.size()) == partitions && got == sizes;
        },
        milliseconds(20000));
  }

  static testing::NatsServer* server_;
};

testing::NatsServer* PartitionLeasesTest::server_ = nullptr;

TEST_F(PartitionLeasesTest, OneProcessTakesEverything) {
  auto a = Make("one", "a", 5);
  ASSERT_TRUE(a->Start().ok());
  EXPECT_EQ(a->Owned(), (std::vector<int>{0, 1, 2, 3, 4}));  // the first tick takes its share
  EXPECT_TRUE(a->Start().ok());                              // idempotent
}

TEST_F(PartitionLeasesTest, ThreeShareSevenExactlyAndACleanLeaveHandsOver) {
  auto a = Make("share", "a", 7);
  auto b = Make("share", "b", 7);
  auto c = Make("share", "c", 7);
  ASSERT_TRUE(a->Start().ok());
  ASSERT_TRUE(b->Start().ok());
  ASSERT_TRUE(c->Start().ok());
  EXPECT_TRUE(Settled({a, b, c}, 7, {2, 2, 3}));
  b->Leave();
  EXPECT_TRUE(Settled({a, c}, 7, {3, 4}));
  auto listing = c->View();
  ASSERT_EQ(listing.size(), 7u);
}

TEST_F(PartitionLeasesTest, AReleasedLeaseWaitsForTheSourceToLetGo) {
  auto a = Make("handover", "a", 4);
  ASSERT_TRUE(a->Start().ok());
  ASSERT_EQ(a->Owned().size(), 4u);
  a->Confirm({0, 1, 2, 3});  // the source reads all four and never lets go
  auto b = Make("handover", "b", 4);
  ASSERT_TRUE(b->Start().ok());
  // a's share drops to 2: Owned() stops naming two, but they stay a's until it confirms.
  ASSERT_TRUE(testing::WaitUntil([&] { return a->Owned().size() == 2; }, milliseconds(10000)));
  std::this_thread::sleep_for(milliseconds(1500));  // more than a TTL: renewed, not expired
  EXPECT_TRUE(b->Owned().empty());
  std::vector<int> kept = a->Owned();
  a->Confirm(std::set<int>(kept.begin(), kept.end()));
  EXPECT_TRUE(Settled({a, b}, 4, {2, 2}));
}

// A process that dies renews nothing: its lease (written here by hand, as a dead "ghost" left
// it) expires one TTL after its last write, on the server, and the live process takes it.
TEST_F(PartitionLeasesTest, ADeadOwnersLeaseExpiresAndIsTaken) {
  auto b = Make("expiry", "b", 2);
  ASSERT_TRUE(b->Start().ok());  // creates the bucket; takes both
  b->Leave();
  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, server_->url().c_str()), NATS_OK);
  jsCtx* js = nullptr;
  ASSERT_EQ(natsConnection_JetStream(&js, nc, nullptr), NATS_OK);
  kvStore* kv = nullptr;
  ASSERT_EQ(js_KeyValue(&kv, js, "test_leases"), NATS_OK);
  uint64_t rev = 0;
  std::string key = LeaseKey(LeaseScope("expiry", "orders"), 0);
  ASSERT_EQ(kvStore_CreateString(&rev, kv, key.c_str(), "ghost 1"), NATS_OK)
      << nats_GetLastError(nullptr);
  auto c = Make("expiry", "c", 2);
  ASSERT_TRUE(c->Start().ok());
  EXPECT_EQ(c->Owned(), std::vector<int>{1});  // 0 is the ghost's until it expires
  EXPECT_TRUE(testing::WaitUntil([&] { return c->Owned().size() == 2; }, milliseconds(10000)));
  kvStore_Destroy(kv);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
}

TEST_F(PartitionLeasesTest, ABucketWithAnotherTtlIsRefused) {
  auto a = Make("ttl", "a", 2, milliseconds(1000), "ttl_bucket");
  ASSERT_TRUE(a->Start().ok());
  auto b = Make("ttl", "b", 2, milliseconds(3000), "ttl_bucket");
  Status st = b->Start();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("lease_ttl"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ferry::source::jetstream
