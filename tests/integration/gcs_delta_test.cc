// The storage-agnostic Delta suites (testing/delta_suites.h) on Google Cloud Storage
// (fake-gcs-server): the golden tables of Spark and delta-kernel-rs uploaded by Google's own
// google-cloud-storage Python client and read through the GCS store with the same expectations
// as on disk, and the table writing, commit and conflict tests on a fresh bucket each. One
// emulator serves the whole binary (one ctest test: WHOLE_BINARY).
#include <gtest/gtest.h>

#include "ferry/testing/delta_suites.h"
#include "ferry/testing/gcs_test_store.h"

namespace ferry::testing {

FERRY_INSTANTIATE_GOLDEN_SUITES(FakeGcs, ::testing::Values(FakeGcsStoreFactory("Gcs", "")));

INSTANTIATE_TEST_SUITE_P(FakeGcs, TableTest, ::testing::Values(FakeGcsStoreFactory("Gcs", "lake")),
                         [](const auto& p) { return StoreFactoryName(p.param); });

}  // namespace ferry::testing
