// S3 stores on the test binary's radosgw (radosgw.h, RadosGw::Shared()) for the storage-agnostic
// suites (test_store.h): S3Store as users get it, through OpenS3Store and storage options, with
// the smallest part size S3 allows (5 MiB) so that the suites' large objects go up in parts.
//
//   - fresh(): a new bucket per test ("ferry-<n>"), the store at its root or under `root`;
//   - testdata(): ../shared/testdata's delta-golden and delta-kernel, uploaded once per process
//     into the bucket "testdata" with the Debian awscli (`aws s3 sync`), read-only afterwards.
//
// Thread-safety: the functions and the factories' functions may be called from any thread.
#pragma once

#include <string>

#include "ferry/base/result.h"
#include "ferry/storage/storage_options.h"
#include "ferry/testing/radosgw.h"
#include "ferry/testing/test_store.h"

namespace ferry::testing {

// The storage options that reach `rgw` as its user: endpoint, keys, region, plain http, and
// upload_part_size 5MiB.
storage::StorageOptions RadosGwStorageOptions(const RadosGw& rgw);

// A bucket of its own for a test: "ferry-<n>", n counting up in this process. Created.
Result<std::string> NewRadosGwBucket(RadosGw& rgw);

// `name` names the factory in test names; `root` is the store's key prefix inside each fresh
// bucket ("" = the bucket's root).
StoreFactory RadosGwStoreFactory(std::string name, std::string root);

}  // namespace ferry::testing
