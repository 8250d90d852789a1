// The storage-agnostic Delta suites (testing/delta_suites.h) on Azure Blob: the golden tables of
// Spark and delta-kernel-rs uploaded to Azurite by Microsoft's SDK and read through the Azure
// store with the same expectations as on disk, and the table writing, commit and conflict tests
// on a fresh container each. One emulator serves the whole binary (one ctest test: WHOLE_BINARY).
#include <gtest/gtest.h>

#include "ferry/testing/azure_test_store.h"
#include "ferry/testing/delta_suites.h"

namespace ferry::testing {

FERRY_INSTANTIATE_GOLDEN_SUITES(Azurite, ::testing::Values(AzuriteStoreFactory("Azure", "")));

INSTANTIATE_TEST_SUITE_P(Azurite, TableTest,
                         ::testing::Values(AzuriteStoreFactory("Azure", "lake")),
                         [](const auto& p) { return StoreFactoryName(p.param); });

}  // namespace ferry::testing
