// s3_upload_memory: the peak memory of a multipart upload through S3Store's writer
// (docs/BENCHMARKS.md, "S3 tables"). It starts a radosgw of its own
// (testing::RadosGw, memstore sized for the largest file), then measures uploads with the loop of
// upload_memory.h against the bound of storage/s3/s3_store.h: about
// part_size x (parts_in_flight + 1): the part being filled and the parts in flight.
//
//   s3_upload_memory [--sizes-mib 64,256,1024] [--part-mib 16] [--in-flight 4] [--ferry-malloc]
//
// --ferry-malloc applies ferry's allocator settings (app/allocator.h: 16 MiB parts then stay in
// the heap instead of being unmapped when freed), as `ferry run` does.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "upload_memory.h"

#include "ferry/storage/s3/s3_store.h"
#include "ferry/testing/radosgw.h"

int main(int argc, char** argv) {
  std::optional<ferry::bench::UploadMemoryArgs> args =
      ferry::bench::ParseUploadMemoryArgs(argc, argv, /*with_in_flight=*/true);
  if (!args) {
    return 2;
  }
  int64_t largest = 0;
  for (int64_t s : args->sizes_mib) {
    largest = std::max(largest, s);
  }
  // memstore keeps every object in the OSD's memory and refuses writes past ~95 %: room for the
  // largest object, its parts while they are assembled, and the pools' own objects.
  const int64_t memstore = (2 * largest + 512) << 20;
  auto start = std::chrono::steady_clock::now();
  auto rgw = ferry::testing::RadosGw::Start({.memstore_bytes = memstore});
  if (!rgw.ok()) {
    fmt::print(stderr, "radosgw: {}\n", rgw.status().ToString());
    return 1;
  }
  if (ferry::Status st = (*rgw)->CreateBucket("bench"); !st.ok()) {
    fmt::print(stderr, "create bucket: {}\n", st.ToString());
    return 1;
  }
  fmt::print("radosgw up in {:.1f} s, memstore {} MiB\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
             memstore >> 20);
  ferry::storage::StorageOptions options = {
      {"aws_endpoint_url", (*rgw)->endpoint()},
      {"aws_access_key_id", (*rgw)->access_key()},
      {"aws_secret_access_key", (*rgw)->secret_key()},
      {"aws_region", (*rgw)->region()},
      {"aws_allow_http", "true"},
      {"upload_part_size", fmt::format("{}MiB", args->part_mib)},
      {"upload_parts_in_flight", std::to_string(args->in_flight)}};
  auto store = ferry::storage::s3::OpenS3Store("bench", "", options);
  if (!store.ok()) {
    fmt::print(stderr, "store: {}\n", store.status().ToString());
    return 1;
  }
  fmt::print("part size {} MiB, {} parts in flight, allocator: {}\n", args->part_mib,
             args->in_flight, args->ferry_malloc ? "ferry's settings" : "glibc defaults");
  const std::string bounds = fmt::format("{} | {}", args->part_mib * args->in_flight,
                                         args->part_mib * (args->in_flight + 1));
  return ferry::bench::MeasureUploads(
      **store, *args, "part x in flight MiB | part x (in flight + 1) MiB", [&] { return bounds; });
}
