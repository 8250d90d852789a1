// The storage-agnostic Delta suites (testing/delta_suites.h) on S3: the golden tables of Spark and
// delta-kernel-rs uploaded to radosgw with the awscli and read through the S3 store with the
// same expectations as on disk, and the table writing, commit and conflict tests on a fresh
// bucket each. One radosgw serves the whole binary (one ctest test: WHOLE_BINARY).
#include <gtest/gtest.h>

#include "ferry/testing/delta_suites.h"
#include "ferry/testing/s3_test_store.h"

namespace ferry::testing {

FERRY_INSTANTIATE_GOLDEN_SUITES(RadosGw, ::testing::Values(RadosGwStoreFactory("S3", "")));

INSTANTIATE_TEST_SUITE_P(RadosGw, TableTest, ::testing::Values(RadosGwStoreFactory("S3", "lake")),
                         [](const auto& p) { return StoreFactoryName(p.param); });

}  // namespace ferry::testing
