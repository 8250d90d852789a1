// The ObjectStore conformance suite (CONVENTIONS.md: every implementation passes the same
// tests): the contract of storage/object_store.h, checked through the interface alone. The
// tests are in object_store_suite.cc, an object library (ferry_object_store_suite) that each
// test binary links and instantiates for its stores:
//
//   INSTANTIATE_TEST_SUITE_P(AllStores, ObjectStoreTest,
//                            ::testing::ValuesIn(testing::LocalStoreFactories()),
//                            [](const auto& p) { return testing::StoreFactoryName(p.param); });
//
// Each test gets a fresh, empty store from StoreFactory::fresh (test_store.h).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "ferry/storage/object_store.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {

class ObjectStoreTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The keys List returns (ASSERTs that it succeeds).
  std::vector<std::string> Keys(std::string_view prefix, bool recursive = false,
                                std::string start_after = "");

  TestStore fixture_;
  storage::ObjectStore* store_ = nullptr;
};

}  // namespace ferry::testing
