#include "ferry/pipeline/routing_ledger.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/delta/transaction.h"

namespace ferry::pipeline {

std::vector<std::string> RoutingLedger::RecordedTables(const delta::Snapshot& positions,
                                                       const std::string& id) {
  const std::string prefix = TableAppId(id, "");
  std::vector<std::string> out;
  for (const auto& [app_id, txn] : positions.txns()) {
    if (app_id.starts_with(prefix) && app_id.size() > prefix.size()) {
      out.push_back(app_id.substr(prefix.size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

RoutingLedger::RoutingLedger(std::string id, std::unique_ptr<delta::Table> table,
                             delta::Snapshot snapshot, std::chrono::milliseconds commit_interval)
    : id_(std::move(id)),
      table_(std::move(table)),
      snapshot_(std::move(snapshot)),
      commit_interval_(commit_interval) {
  for (std::string& recorded : RecordedTables(snapshot_, id_)) {
    recorded_.insert(std::move(recorded));
  }
}

Result<std::optional<int64_t>> RoutingLedger::Resume(const std::string& key) {
  if (!fresh_) {
    FERRY_ASSIGN_OR_RETURN(snapshot_, table_->Update(snapshot_));
    fresh_ = true;
  }
  return snapshot_.position(ResumeAppId(id_, key));
}

void RoutingLedger::RecordNoted() {
  std::vector<std::string> tables;
  for (const std::string& table : to_record_) {
    if (recorded_.count(table) == 0) {
      tables.push_back(table);
    }
  }
  to_record_.clear();
  if (tables.empty()) {
    return;
  }
  Status st = [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(snapshot_, table_->Update(snapshot_));
    delta::Transaction txn(*table_, snapshot_);
    const int64_t now = WallMillis();
    for (const std::string& table : tables) {
      txn.SetPosition(TableAppId(id_, table), now);
    }
    txn.SetOperation("ROUTING TABLE", {{"queryId", id_}});
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult committed, txn.Commit());
    (void)committed;
    return Status::OK();
  }();
  if (!st.ok()) {
    FERRY_LOG_WARN("pipeline {}: recording table(s) {} in {}: {}", id_, fmt::join(tables, ", "),
                   table_->Describe(), st.ToString());
    return;
  }
  recorded_.insert(tables.begin(), tables.end());
}

void RoutingLedger::Publish(const std::map<int32_t, int64_t>& lows,
                            const std::map<int32_t, source::PartitionInfo>& assigned, bool force) {
  bool moved = false;
  for (const auto& [index, low] : lows) {
    auto it = published_.find(index);
    moved = moved || it == published_.end() || it->second < low;
  }
  const auto now = std::chrono::steady_clock::now();
  if (!moved || (!force && now - last_publish_ < commit_interval_)) {
    return;
  }
  if (Status st = Commit(lows, assigned); !st.ok()) {
    FERRY_LOG_WARN("pipeline {}: committing the routing positions to {}: {}", id_,
                   table_->Describe(), st.ToString());
  }
  last_publish_ = std::chrono::steady_clock::now();
}

Status RoutingLedger::Commit(const std::map<int32_t, int64_t>& lows,
                             const std::map<int32_t, source::PartitionInfo>& assigned) {
  FERRY_ASSIGN_OR_RETURN(snapshot_, table_->Update(snapshot_));
  delta::Transaction txn(*table_, snapshot_);
  int count = 0;
  for (const auto& [index, low] : lows) {
    auto info = assigned.find(index);
    if (info == assigned.end()) {
      continue;
    }
    const std::string app_id = ResumeAppId(id_, info->second.key);
    if (snapshot_.position(app_id).value_or(-1) >= low) {
      continue;
    }
    txn.SetPosition(app_id, low);
    ++count;
  }
  if (count > 0) {
    txn.SetOperation("ROUTING POSITIONS", {{"queryId", id_}});
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult committed, txn.Commit());
    (void)committed;
    FERRY_ASSIGN_OR_RETURN(snapshot_, table_->Update(snapshot_));
  }
  for (const auto& [index, low] : lows) {
    published_[index] = low;
  }
  return Status::OK();
}

}  // namespace ferry::pipeline
