#include "ferry/pipeline/table_setup.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "ferry/storage/memory_store.h"
#include "ferry/testing/fault_injecting_store.h"

namespace ferry::pipeline {
namespace {

using std::chrono::milliseconds;
using testing::FaultInjectingStore;
using Op = FaultInjectingStore::Op;
using When = FaultInjectingStore::When;

class TableSetupTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::InMemoryStore> base_ = std::make_shared<storage::InMemoryStore>();
  std::shared_ptr<FaultInjectingStore> store_ = std::make_shared<FaultInjectingStore>(base_);
};

TEST_F(TableSetupTest, AStoreThatDoesNotAnswerAtFirstIsWaitedFor) {
  ASSERT_TRUE(OpenOrCreateTable(base_, "events", {.schema_ddl = "id BIGINT"}).ok());
  store_->InjectError(Op::kList, When::kBefore, Unavailable("HTTP 503 SlowDown"), 1);
  store_->InjectError(Op::kList, When::kBefore, Unavailable("timed out"), 1);
  const int64_t lists_before = store_->count(Op::kList);
  Result<OpenedTable> opened = OpenOrCreateTable(
      store_, "events", {.schema_ddl = "id BIGINT", .unavailable_patience = milliseconds(60'000)});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_FALSE(opened->created);
  EXPECT_EQ(opened->snapshot.version(), 0);
  EXPECT_GE(store_->count(Op::kList) - lists_before, 3)
      << "two refused listings, then one answered";
}

TEST_F(TableSetupTest, WithoutPatienceTheFirstOutageIsTheAnswer) {
  store_->InjectError(Op::kList, When::kBefore, Unavailable("HTTP 503 SlowDown"), 1);
  Result<OpenedTable> opened = OpenOrCreateTable(store_, "events", {.schema_ddl = "id BIGINT"});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(opened.status().message().find("SlowDown"), std::string::npos)
      << opened.status().ToString();
}

TEST_F(TableSetupTest, AStopEndsTheWaitingWithTheStoresError) {
  for (int i = 0; i < 100; ++i) {
    store_->InjectError(Op::kList, When::kBefore, Unavailable("connection refused"), 1);
  }
  int asked = 0;
  Result<OpenedTable> opened = OpenOrCreateTable(store_, "events",
                                                 {.schema_ddl = "id BIGINT",
                                                  .unavailable_patience = milliseconds(600'000),
                                                  .cancelled = [&] { return ++asked >= 2; }});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(opened.status().message().find("connection refused"), std::string::npos);
  EXPECT_EQ(asked, 2);
}

TEST_F(TableSetupTest, ErrorsThatAreNotOutagesAreNotRetried) {
  store_->InjectError(Op::kList, When::kBefore, PermissionDenied("AccessDenied"), 1);
  const int64_t lists_before = store_->count(Op::kList);
  Result<OpenedTable> opened = OpenOrCreateTable(
      store_, "events", {.schema_ddl = "id BIGINT", .unavailable_patience = milliseconds(60'000)});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->count(Op::kList) - lists_before, 1);
}

TEST_F(TableSetupTest, ACreateWhoseReplyWasLostFindsItsOwnTable) {
  // The first commit lands, but its reply is lost: the retry meets AlreadyExists and takes the
  // table, whose schema is the declared one.
  store_->InjectError(Op::kPutIfAbsent, When::kAfter, Unavailable("reset after the request"), 1);
  Result<OpenedTable> opened = OpenOrCreateTable(
      store_, "events",
      {.schema_ddl = "id BIGINT, name STRING", .unavailable_patience = milliseconds(60'000)});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->snapshot.version(), 0);
  EXPECT_EQ(opened->snapshot.schema()->num_fields(), 2);
}

}  // namespace
}  // namespace ferry::pipeline
