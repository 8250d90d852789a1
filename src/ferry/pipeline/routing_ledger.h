// RoutingLedger: a routed pipeline's own Delta table (router.h), txns only, read and written by
// the router thread:
//   - "<id>/table/<table>" = when the table was first routed to (ms since the epoch), so that a
//     restart reads the positions of every table the pipeline ever wrote (step 3);
//   - "<id>/<partition key>/resume" = L, the partition's low-water mark as of a poll (step 5), so
//     that a restart resumes near where it stopped even when the tables' own seals lag.
// Both are advisory: a table not recorded, or an L not published, only lowers the largest L a
// restart reads (re-reads that the tables drop, never a loss).
//
//   RoutingLedger ledger(id, std::move(table), std::move(snapshot));
//   FERRY_ASSIGN_OR_RETURN(std::optional<int64_t> l, ledger.Resume("kafka/events/0"));
//   ledger.Note("/lake/t_paid");  ledger.RecordNoted();
//   ledger.Publish(lows, assigned, /*force=*/false);
//
// Thread-safety: one thread (the router's).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

class RoutingLedger {
 public:
  // The record of a table pipeline `id` routed to: appId "<id>/table/<table>".
  static std::string TableAppId(const std::string& id, const std::string& table) {
    return id + "/table/" + table;
  }
  // The appId of partition `key`'s resume position.
  static std::string ResumeAppId(const std::string& id, const std::string& key) {
    return id + "/" + key + "/resume";
  }
  // The tables a positions table records for pipeline `id`, sorted.
  static std::vector<std::string> RecordedTables(const delta::Snapshot& positions,
                                                 const std::string& id);

  RoutingLedger(std::string id, std::unique_ptr<delta::Table> table, delta::Snapshot snapshot,
                std::chrono::milliseconds commit_interval);

  // The tables recorded when the ledger was made, sorted.
  const std::set<std::string>& recorded() const { return recorded_; }

  // Step 1: the L the positions table holds for partition `key`. The table is read again once
  // per assignment round (a rebalance assigns many partitions at once): NewRound() starts one.
  Result<std::optional<int64_t>> Resume(const std::string& key);
  void NewRound() { fresh_ = false; }

  // Step 3: `table` was opened; RecordNoted() records the tables noted since its last call (and
  // not recorded yet) in one commit. A failure is logged: it costs re-reads only.
  void Note(const std::string& table) { to_record_.push_back(table); }
  void RecordNoted();

  // Step 5: `lows` (each partition's L as of now) go to the table when one of them moved since
  // the last publication and commit_interval passed (`force`: whatever the interval). `assigned`
  // names the partitions. A failure is logged and tried again at the next publication.
  void Publish(const std::map<int32_t, int64_t>& lows,
               const std::map<int32_t, source::PartitionInfo>& assigned, bool force);
  // Partition `index` was revoked: its next L is published whatever the last one was.
  void Forget(int32_t index) { published_.erase(index); }

 private:
  Status Commit(const std::map<int32_t, int64_t>& lows,
                const std::map<int32_t, source::PartitionInfo>& assigned);

  const std::string id_;
  std::unique_ptr<delta::Table> table_;
  delta::Snapshot snapshot_;
  const std::chrono::milliseconds commit_interval_;
  bool fresh_ = false;                    // snapshot_ was read in this assignment round
  std::set<std::string> recorded_;        // in the table
  std::vector<std::string> to_record_;    // noted, for RecordNoted
  std::map<int32_t, int64_t> published_;  // in the table, by partition index
  std::chrono::steady_clock::time_point last_publish_;
};

}  // namespace ferry::pipeline
