#include "ferry/source/jetstream/partition_leases.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <utility>

#include "ferry/base/log.h"
#include "ferry/source/jetstream/nats_connect.h"
#include "ferry/source/jetstream/nats_error.h"

namespace ferry::source::jetstream {
namespace {

int64_t UnixMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string DefaultMember() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) {
    host[0] = '\0';
  }
  std::random_device rd;
  return fmt::format("{}-{}-{:04x}", LeaseKeyToken(host[0] != '\0' ? host : "host"),
                     static_cast<int>(getpid()), rd() & 0xffff);
}

}  // namespace

Status LeaseOptions::Validate() const {
  FERRY_RETURN_IF_ERROR(connection.Validate());
  if (bucket.empty() || pipeline.empty() || stream.empty()) {
    return InvalidArgument("leases need a bucket, a pipeline and a stream");
  }
  if (partitions < 1) {
    return InvalidArgument("leases need at least one partition");
  }
  if (ttl < std::chrono::milliseconds(1000)) {
    return InvalidArgument("lease_ttl must be at least 1s");
  }
  return Status::OK();
}

Result<std::shared_ptr<PartitionLeases>> PartitionLeases::Create(LeaseOptions options) {
  if (options.member.empty()) {
    options.member = DefaultMember();
  }
  options.member = LeaseKeyToken(options.member);
  FERRY_RETURN_IF_ERROR(options.Validate());
  return std::shared_ptr<PartitionLeases>(new PartitionLeases(std::move(options)));
}

PartitionLeases::PartitionLeases(LeaseOptions options)
    : options_(std::move(options)), scope_(LeaseScope(options_.pipeline, options_.stream)) {}

PartitionLeases::~PartitionLeases() {
  Leave();
}

Status PartitionLeases::Connect() {
  FERRY_ASSIGN_OR_RETURN(connection_, ConnectNats(options_.connection));
  FERRY_ASSIGN_OR_RETURN(js_, OpenJetStream(connection_.get(), options_.connection.api_timeout_ms));
  const int64_t ttl_ns = options_.ttl.count() * 1'000'000;
  kvStore* raw = nullptr;
  jsErrCode js_error = jsErrCode(0);
  natsStatus status = js_KeyValue(&raw, js_.get(), options_.bucket.c_str());
  if (status == NATS_NOT_FOUND) {
    kvConfig config;
    kvConfig_Init(&config);
    config.Bucket = options_.bucket.c_str();
    config.Description = "ferry partition leases (docs/jetstream.md)";
    config.History = 1;
    config.TTL = ttl_ns;
    status = js_CreateKeyValue(&raw, js_.get(), &config);
    if (status != NATS_OK) {
      // Another process may have created it meanwhile: bind to it.
      status = js_KeyValue(&raw, js_.get(), options_.bucket.c_str());
    }
  }
  if (status != NATS_OK) {
    return NatsError(status, fmt::format("lease bucket '{}'", options_.bucket), js_error);
  }
  kv_.reset(raw);
  kvStatus* kv_status = nullptr;
  status = kvStore_Status(&kv_status, kv_.get());
  if (status != NATS_OK) {
    return NatsError(status, fmt::format("status of lease bucket '{}'", options_.bucket));
  }
  const int64_t bucket_ttl = kvStatus_TTL(kv_status);
  const int64_t history = kvStatus_History(kv_status);
  kvStatus_Destroy(kv_status);
  if (bucket_ttl != ttl_ns) {
    return InvalidArgument(
        "lease bucket '{}' expires keys after {} ms, but lease_ttl is {} ms: the bucket's TTL is "
        "the lease TTL, so every process sharing it must use the same lease_ttl (or another "
        "lease_bucket)",
        options_.bucket, bucket_ttl / 1'000'000, options_.ttl.count());
  }
  if (history != 1) {
    return InvalidArgument("lease bucket '{}' keeps {} values per key; leases need history 1",
                           options_.bucket, history);
  }
  return Status::OK();
}

Status PartitionLeases::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) {
      return Status::OK();
    }
    if (left_) {
      return Internal("partition leases: Start() after Leave()");
    }
  }
  if (connection_ == nullptr) {
    Status st = Connect();
    if (!st.ok()) {
      kv_.reset();
      js_.reset();
      connection_.reset();
      return st;
    }
  }
  FERRY_RETURN_IF_ERROR(Tick());
  FERRY_LOG_INFO("jetstream leases: {} joined {} in bucket '{}' (lease_ttl {} ms)", options_.member,
                 scope_, options_.bucket, options_.ttl.count());
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;
  keeper_ = std::thread([this] { Run(); });
  return Status::OK();
}

void PartitionLeases::Run() {
  const auto period = options_.ttl / 3;
  auto next = Clock::now() + period;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_until(lock, next, [&] { return stopping_ || confirmed_; });
      if (stopping_) {
        return;
      }
      if (Clock::now() < next) {
        confirmed_ = false;
        lock.unlock();
        ReleaseConfirmed();
        continue;
      }
    }
    next = Clock::now() + period;
    Status st = Tick();
    if (!st.ok()) {
      FERRY_LOG_WARN("jetstream leases ({}): {}; retrying in {} ms", options_.member, st.ToString(),
                     period.count());
    }
  }
}

std::vector<int> PartitionLeases::Owned() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> out;
  const auto now = Clock::now();
  for (const auto& [p, h] : held_) {
    if (!h.releasing && h.valid_until > now) {
      out.push_back(p);
    }
  }
  return out;
}

void PartitionLeases::Confirm(const std::set<int>& reading) {
  std::lock_guard<std::mutex> lock(mu_);
  reading_ = reading;
  bool any = std::any_of(held_.begin(), held_.end(), [&](const auto& kv) {
    return kv.second.releasing && reading_.count(kv.first) == 0;
  });
  if (any) {
    confirmed_ = true;
    wake_.notify_all();
  }
}

std::vector<LeaseView> PartitionLeases::View() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

LeaseStats PartitionLeases::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Status PartitionLeases::List(std::map<int, Listed>* leases, std::set<std::string>* members) {
  return ListLeaseScope(kv_.get(), scope_, options_.partitions, leases, members);
}

Result<uint64_t> PartitionLeases::Write(int partition, int64_t taken_unix_ms, uint64_t revision) {
  std::string key = LeaseKey(scope_, partition);
  std::string value = LeaseValue(options_.member, taken_unix_ms);
  uint64_t rev = 0;
  natsStatus status = revision == 0 ? kvStore_Create(&rev, kv_.get(), key.c_str(), value.data(),
                                                     static_cast<int>(value.size()))
                                    : kvStore_Update(&rev, kv_.get(), key.c_str(), value.data(),
                                                     static_cast<int>(value.size()), revision);
  if (status != NATS_OK) {
    // nats.c 3.4.1 reports a revision mismatch as NATS_ERR ("wrong last sequence: N") and
    // hides the JetStream error code; a timeout may have been applied or not (the next renewal
    // finds out).
    Status st = NatsError(status, fmt::format("lease '{}'", key));
    return status == NATS_ERR ? Aborted("{}", st.message()) : st;
  }
  return rev;
}

Status PartitionLeases::DeleteLease(int partition, uint64_t revision) {
  std::string subject = fmt::format("$KV.{}.{}", options_.bucket, LeaseKey(scope_, partition));
  natsMsg* raw = nullptr;
  natsStatus status = natsMsg_Create(&raw, subject.c_str(), nullptr, nullptr, 0);
  if (status != NATS_OK) {
    return NatsError(status, "lease delete message");
  }
  NatsMsgPtr msg(raw);
  status = natsMsgHeader_Set(raw, "KV-Operation", "DEL");
  if (status != NATS_OK) {
    return NatsError(status, "lease delete header");
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.ExpectLastSubjectSeq = revision;
  jsErrCode js_error = jsErrCode(0);
  status = js_PublishMsg(nullptr, js_.get(), raw, &po, &js_error);
  if (status != NATS_OK) {
    return NatsError(status, fmt::format("release lease of partition {}", partition), js_error);
  }
  return Status::OK();
}

void PartitionLeases::Renew(const std::map<int, Listed>& listed, Clock::time_point sent) {
  std::map<int, Held> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A lease in our name is ours even when the write that made it timed out (the server applied
    // it; only this process writes its member id): adopt its revision.
    for (const auto& [p, l] : listed) {
      if (l.owner == options_.member) {
        Held& h = held_[p];
        h.revision = l.revision;
        h.taken_unix_ms = l.taken_unix_ms;
      }
    }
    held = held_;
  }
  for (auto& [p, h] : held) {
    auto it = listed.find(p);
    if (it == listed.end() || it->second.revision != h.revision) {
      FERRY_LOG_WARN("jetstream leases ({}): lease of partition {} {}; no longer reading it",
                     options_.member, p,
                     it == listed.end() ? "expired" : "was taken by " + it->second.owner);
      std::lock_guard<std::mutex> lock(mu_);
      held_.erase(p);
      ++stats_.lost;
      continue;
    }
    Result<uint64_t> rev = Write(p, h.taken_unix_ms, h.revision);
    std::lock_guard<std::mutex> lock(mu_);
    if (rev.ok()) {
      Held& mine = held_[p];
      mine.revision = *rev;
      mine.valid_until = sent + options_.ttl * 3 / 4;
    } else if (rev.status().code() == StatusCode::kAborted) {
      FERRY_LOG_WARN("jetstream leases ({}): renewing partition {}: {}; no longer reading it",
                     options_.member, p, rev.status().message());
      held_.erase(p);
      ++stats_.lost;
    } else {
      ++stats_.errors;  // kept until it expires locally; the next tick tries again
    }
  }
}

void PartitionLeases::Rebalance(const std::map<int, Listed>& listed,
                                const std::set<std::string>& members_seen, Clock::time_point sent) {
  std::set<std::string> members = members_seen;
  members.insert(options_.member);
  const int n = options_.partitions;
  const int k = static_cast<int>(members.size());
  const int rank = static_cast<int>(std::distance(members.begin(), members.find(options_.member)));
  const int share = n / k + (rank < n % k ? 1 : 0);
  std::vector<int> keeping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.live_members = members.size();
    for (const auto& [p, h] : held_) {
      if (!h.releasing) {
        keeping.push_back(p);
      }
    }
    // Over the share: give up the highest partitions (after the source confirms).
    while (static_cast<int>(keeping.size()) > share) {
      held_[keeping.back()].releasing = true;
      FERRY_LOG_INFO("jetstream leases ({}): releasing partition {} ({} live, share {})",
                     options_.member, keeping.back(), k, share);
      keeping.pop_back();
    }
  }
  int missing = share - static_cast<int>(keeping.size());
  const int offset = k > 0 ? rank * n / k : 0;
  for (int i = 0; i < n && missing > 0; ++i) {
    const int p = (offset + i) % n;
    if (listed.count(p) != 0) {
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (held_.count(p) != 0) {
        continue;
      }
    }
    const int64_t now_ms = UnixMillisNow();
    Result<uint64_t> rev = Write(p, now_ms, 0);
    if (!rev.ok()) {
      if (rev.status().code() != StatusCode::kAborted) {
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.errors;
        return;
      }
      continue;  // taken by another process since the listing
    }
    FERRY_LOG_INFO("jetstream leases ({}): took partition {} ({} live, share {})", options_.member,
                   p, k, share);
    std::lock_guard<std::mutex> lock(mu_);
    held_[p] = Held{.revision = *rev,
                    .taken_unix_ms = now_ms,
                    .valid_until = sent + options_.ttl * 3 / 4,
                    .releasing = false};
    ++stats_.taken;
    --missing;
  }
}

void PartitionLeases::ReleaseConfirmed() {
  std::vector<std::pair<int, uint64_t>> go;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = held_.begin(); it != held_.end();) {
      if (it->second.releasing && reading_.count(it->first) == 0) {
        go.emplace_back(it->first, it->second.revision);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto [p, rev] : go) {
    Status st = DeleteLease(p, rev);
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.released;
    if (!st.ok()) {
      // It expires on its own within a TTL.
      FERRY_LOG_WARN("jetstream leases ({}): {}", options_.member, st.ToString());
    }
  }
}

Status PartitionLeases::Tick() {
  const auto sent = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.ticks;
  }
  std::string member_key = MemberKey(scope_, options_.member);
  uint64_t rev = 0;
  natsStatus status =
      kvStore_PutString(&rev, kv_.get(), member_key.c_str(), options_.member.c_str());
  if (status != NATS_OK) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.errors;
    return NatsError(status, fmt::format("membership key '{}'", member_key));
  }
  std::map<int, Listed> listed;
  std::set<std::string> members;
  Status st = List(&listed, &members);
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.errors;
    return st;
  }
  Renew(listed, sent);
  ReleaseConfirmed();
  Rebalance(listed, members, sent);
  std::vector<LeaseView> view;
  for (int p = 0; p < options_.partitions; ++p) {
    LeaseView v{.partition = p};
    auto it = listed.find(p);
    if (it != listed.end()) {
      v.owner = it->second.owner;
      v.taken_unix_ms = it->second.taken_unix_ms;
      v.renewed_unix_ms = it->second.renewed_unix_ms;
    }
    view.push_back(std::move(v));
  }
  std::unique_lock<std::mutex> lock(mu_);
  for (const auto& [p, h] : held_) {
    LeaseView& v = view[static_cast<size_t>(p)];
    if (v.owner != options_.member) {
      v.owner = options_.member;
      v.taken_unix_ms = h.taken_unix_ms;
      v.renewed_unix_ms = UnixMillisNow();
    }
  }
  for (LeaseView& v : view) {
    v.mine = v.owner == options_.member;
  }
  view_ = view;
  lock.unlock();
  if (options_.on_view) {
    options_.on_view(view);
  }
  return Status::OK();
}

void PartitionLeases::Leave() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_) {
      return;
    }
    left_ = true;
    stopping_ = true;
    wake_.notify_all();
  }
  if (keeper_.joinable()) {
    keeper_.join();
  }
  if (kv_ == nullptr) {
    return;
  }
  std::map<int, Held> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.swap(held_);
  }
  for (const auto& [p, h] : held) {
    Status st = DeleteLease(p, h.revision);
    if (!st.ok()) {
      FERRY_LOG_WARN("jetstream leases ({}): {} (it expires on its own)", options_.member,
                     st.ToString());
    }
  }
  std::string member_key = MemberKey(scope_, options_.member);
  kvStore_Delete(kv_.get(), member_key.c_str());
  FERRY_LOG_INFO("jetstream leases: {} left {} ({} leases released)", options_.member, scope_,
                 held.size());
  kv_.reset();
  js_.reset();
  if (connection_ != nullptr) {
    natsConnection_Close(connection_.get());
  }
  connection_.reset();
}

}  // namespace ferry::source::jetstream
