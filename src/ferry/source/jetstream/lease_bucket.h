// The layout of the lease bucket of elastic JetStream pipelines (partition_leases.h): key names,
// lease values and the listing of a scope. Shared by the keeper (PartitionLeases) and by
// `ferry status`, which reads the bucket without taking part. Keys, under a scope per pipeline
// and stream ("<pipeline>.<stream>", each escaped to one key token):
//   <scope>.m.<member>  one key per live process;
//   <scope>.p.<i>       the lease of partition i, valued "<member> <unix ms when taken>".
//
// Thread-safety: free functions over the handles given; a handle is used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/nats_handles.h"

namespace ferry::source::jetstream {

// One partition's lease as the bucket showed it at the last listing.
struct LeaseView {
  int partition = -1;
  std::string owner;            // empty: free
  bool mine = false;            // owner is this process (View() and on_view only)
  int64_t taken_unix_ms = 0;    // when the owner took it
  int64_t renewed_unix_ms = 0;  // the last write (the server's time)
};

// A name as one key token: key tokens allow [-/_=.a-zA-Z0-9]; everything but letters, digits,
// '-' and '_' becomes =HH, so that distinct names stay distinct and a name never adds a token.
std::string LeaseKeyToken(std::string_view name);

// Key names.
std::string LeaseScope(std::string_view pipeline, std::string_view stream);
std::string LeaseKey(std::string_view scope, int partition);
std::string MemberKey(std::string_view scope, std::string_view member);

// A lease's value, "<member> <taken unix ms>".
std::string LeaseValue(std::string_view member, int64_t taken_unix_ms);

// One lease key as a listing found it.
struct ListedLease {
  uint64_t revision = 0;
  std::string owner;
  int64_t taken_unix_ms = 0;
  int64_t renewed_unix_ms = 0;  // the key's last write (the server's time)
};

// Lists the current values under `scope`: leases by partition (keys of another partition count
// are skipped), and the members.
Status ListLeaseScope(kvStore* kv, const std::string& scope, int partitions,
                      std::map<int, ListedLease>* leases, std::set<std::string>* members);

// Reads the leases of a scope (for `ferry status`): one LeaseView per partition 0..partitions-1,
// and the members. NotFound when the bucket does not exist.
struct LeaseListing {
  std::vector<LeaseView> leases;
  std::vector<std::string> members;
};
Result<LeaseListing> ReadLeases(jsCtx* js, const std::string& bucket, const std::string& scope,
                                int partitions);

}  // namespace ferry::source::jetstream
