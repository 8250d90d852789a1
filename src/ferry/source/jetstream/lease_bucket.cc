#include "ferry/source/jetstream/lease_bucket.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <memory>
#include <utility>

#include "ferry/source/jetstream/nats_error.h"

namespace ferry::source::jetstream {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

void ParseLeaseValue(std::string_view value, std::string* owner, int64_t* taken) {
  size_t space = value.find(' ');
  *owner = std::string(value.substr(0, space));
  *taken = 0;
  if (space != std::string_view::npos) {
    std::string_view ms = value.substr(space + 1);
    std::from_chars(ms.data(), ms.data() + ms.size(), *taken);
  }
}

struct KvWatcherDeleter {
  void operator()(kvWatcher* w) const { kvWatcher_Destroy(w); }
};
struct KvEntryDeleter {
  void operator()(kvEntry* e) const { kvEntry_Destroy(e); }
};

}  // namespace

std::string LeaseKeyToken(std::string_view name) {
  std::string out;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '_') {
      out += c;
    } else {
      out += '=';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out.empty() ? std::string("=") : out;
}

std::string LeaseScope(std::string_view pipeline, std::string_view stream) {
  return LeaseKeyToken(pipeline) + "." + LeaseKeyToken(stream);
}

std::string LeaseKey(std::string_view scope, int partition) {
  return fmt::format("{}.p.{}", scope, partition);
}

std::string MemberKey(std::string_view scope, std::string_view member) {
  return fmt::format("{}.m.{}", scope, LeaseKeyToken(member));
}

std::string LeaseValue(std::string_view member, int64_t taken_unix_ms) {
  return fmt::format("{} {}", member, taken_unix_ms);
}

Status ListLeaseScope(kvStore* kv, const std::string& scope, int partitions,
                      std::map<int, ListedLease>* leases, std::set<std::string>* members) {
  kvWatchOptions opts;
  kvWatchOptions_Init(&opts);
  opts.IgnoreDeletes = true;
  kvWatcher* raw = nullptr;
  std::string keys = scope + ".>";
  natsStatus status = kvStore_Watch(&raw, kv, keys.c_str(), &opts);
  if (status != NATS_OK) {
    return NatsError(status, fmt::format("list lease keys '{}'", keys));
  }
  std::unique_ptr<kvWatcher, KvWatcherDeleter> watcher(raw);
  const std::string lease_prefix = scope + ".p.";
  const std::string member_prefix = scope + ".m.";
  while (true) {
    kvEntry* e = nullptr;
    status = kvWatcher_Next(&e, watcher.get(), 5000);
    if (status != NATS_OK) {
      return NatsError(status, fmt::format("list lease keys '{}'", keys));
    }
    if (e == nullptr) {
      return Status::OK();  // the current values are all here
    }
    std::unique_ptr<kvEntry, KvEntryDeleter> entry(e);
    if (kvEntry_Operation(e) != kvOp_Put) {
      continue;
    }
    std::string_view key = kvEntry_Key(e);
    if (key.starts_with(member_prefix)) {
      members->insert(std::string(key.substr(member_prefix.size())));
    } else if (key.starts_with(lease_prefix)) {
      std::string_view number = key.substr(lease_prefix.size());
      int p = -1;
      auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), p);
      if (ec != std::errc() || end != number.data() + number.size() || p < 0 || p >= partitions) {
        continue;  // another partition count: not ours to judge
      }
      ListedLease lease{.revision = kvEntry_Revision(e),
                        .renewed_unix_ms = kvEntry_Created(e) / 1'000'000};
      ParseLeaseValue(std::string_view(static_cast<const char*>(kvEntry_Value(e)),
                                       static_cast<size_t>(kvEntry_ValueLen(e))),
                      &lease.owner, &lease.taken_unix_ms);
      (*leases)[p] = std::move(lease);
    }
  }
}

Result<LeaseListing> ReadLeases(jsCtx* js, const std::string& bucket, const std::string& scope,
                                int partitions) {
  kvStore* raw = nullptr;
  natsStatus status = js_KeyValue(&raw, js, bucket.c_str());
  if (status != NATS_OK) {
    return NatsError(status, fmt::format("lease bucket '{}'", bucket));
  }
  std::unique_ptr<kvStore, void (*)(kvStore*)> kv(raw, kvStore_Destroy);
  std::map<int, ListedLease> leases;
  std::set<std::string> members;
  FERRY_RETURN_IF_ERROR(ListLeaseScope(kv.get(), scope, partitions, &leases, &members));
  LeaseListing listing;
  listing.members.assign(members.begin(), members.end());
  for (int p = 0; p < partitions; ++p) {
    LeaseView view{.partition = p};
    auto it = leases.find(p);
    if (it != leases.end()) {
      view.owner = it->second.owner;
      view.taken_unix_ms = it->second.taken_unix_ms;
      view.renewed_unix_ms = it->second.renewed_unix_ms;
    }
    listing.leases.push_back(std::move(view));
  }
  return listing;
}

}  // namespace ferry::source::jetstream
