#include "ferry/testing/fault_injecting_store.h"

#include <gtest/gtest.h>

#include "ferry/storage/memory_store.h"

namespace ferry::testing {
namespace {

using Op = FaultInjectingStore::Op;
using When = FaultInjectingStore::When;

class FaultInjectingStoreTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::InMemoryStore> base_ = std::make_shared<storage::InMemoryStore>();
  FaultInjectingStore store_{base_};
};

TEST_F(FaultInjectingStoreTest, ErrorBeforeLeavesNothing) {
  store_.InjectError(Op::kPutIfAbsent, When::kBefore, IOError("boom"));
  EXPECT_EQ(store_.PutIfAbsent("a", "1").code(), StatusCode::kIOError);
  EXPECT_EQ(base_->Stat("a").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_.PutIfAbsent("a", "1").ok());
  EXPECT_EQ(store_.count(Op::kPutIfAbsent), 2);
}

TEST_F(FaultInjectingStoreTest, ErrorAfterAppliesTheWrite) {
  store_.InjectError(Op::kPutIfAbsent, When::kAfter, Unavailable("timeout"));
  EXPECT_EQ(store_.PutIfAbsent("a", "1").code(), StatusCode::kUnavailable);
  EXPECT_EQ(*base_->Read("a"), "1");
}

TEST_F(FaultInjectingStoreTest, NthCallFires) {
  store_.InjectError(Op::kPut, When::kBefore, IOError("third"), 3);
  EXPECT_TRUE(store_.Put("a", "1").ok());
  EXPECT_TRUE(store_.Put("b", "1").ok());
  EXPECT_FALSE(store_.Put("c", "1").ok());
  EXPECT_TRUE(store_.Put("d", "1").ok());
  EXPECT_EQ(store_.List("").value().size(), 3u);
}

TEST_F(FaultInjectingStoreTest, CrashDropsOpenWriters) {
  auto writer = store_.OpenAtomicWriter("data/f.parquet");
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("bytes").ok());
  ASSERT_TRUE(store_.Put("durable", "x").ok());
  store_.SimulateCrash();
  EXPECT_FALSE(store_.Put("after", "x").ok());
  store_.Restart();
  EXPECT_EQ((*writer)->Close().code(), StatusCode::kIOError);
  EXPECT_EQ(base_->Stat("data/f.parquet").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_.Read("durable"), "x");
  EXPECT_TRUE(store_.Put("after", "x").ok());
}

}  // namespace
}  // namespace ferry::testing
