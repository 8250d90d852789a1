// The storage-agnostic Delta suites (testing/delta_suites.h) on the local stores: the golden
// tables where they lie on disk, the table tests on an in-memory store and on local disk.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "ferry/testing/delta_suites.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {

FERRY_INSTANTIATE_GOLDEN_SUITES(Golden, ::testing::Values(LocalDiskStoreFactory()));

INSTANTIATE_TEST_SUITE_P(AllStores, TableTest,
                         ::testing::Values(MemoryStoreFactory(), LocalDiskStoreFactory()),
                         [](const auto& p) { return StoreFactoryName(p.param); });

// Commits racing a writer that commits back to back, on stores whose request costs the test sets
// (table_test.cc).
INSTANTIATE_TEST_SUITE_P(AllStores, ContentionTest,
                         ::testing::Values(MemoryStoreFactory(), LocalDiskStoreFactory()),
                         [](const auto& p) { return StoreFactoryName(p.param); });

namespace {

// Every directory of delta-golden is covered by the golden suites (or is a parent of nested
// tables), so a new golden table cannot slip through untested.
TEST(GoldenCoverageTest, EveryGoldenTableIsChecked) {
  std::set<std::string> covered;
  for (const GoldenExpected& e : GoldenTables()) {
    covered.insert(e.table.substr(0, e.table.find('/')));
  }
  for (const GoldenExpectedError& e : GoldenErrors()) {
    covered.insert(e.table);
  }
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(FERRY_TESTDATA_DIR) + "/delta-golden")) {
    std::string name = entry.path().filename().string();
    EXPECT_TRUE(covered.count(name) == 1) << "golden table not covered: " << name;
  }
}

}  // namespace
}  // namespace ferry::testing
