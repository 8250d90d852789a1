// AssignmentController: which partitions a KafkaSource consumes and where each one starts; steps
// 2, 3 and 5 of kafka_source.h:
//   - group assignment: librdkafka's rebalance callback (OnRebalance), eager rd_kafka_assign() of
//     the whole list or cooperative rd_kafka_incremental_assign()/_unassign() of the partitions
//     that move, the listener's OnAssigned()/OnRevoked() around them;
//   - manual assignment: the partitions found in cluster metadata (at Start, then every
//     metadata_refresh, after a failure every second or so), a named topic missing from it asked
//     for by name when the client authenticates (SASL or SSL), so that a refusal (no DESCRIBE)
//     stops the source (access_refusal.h);
//   - partitions whose start is not resolved yet (the table or the broker failed) stay pending
//     and are tried again at every Refresh();
//   - an out-of-range fetch: the check that names a gap below the log start or a topic deleted
//     and recreated past the table's position (gap_report.h), and with on_gap = kContinue the
//     re-assignment at the log start; a partition started by policy at the log start or end
//     whose log moved under that offset before anything was taken (retention moved the log
//     start past it, once or more; the topic was deleted and recreated, or an unclean leader
//     election cut the log end below it) starts again at the new log start or end (no gap: the
//     table holds no position for it).
//
// Errors found here reach the source through AssignmentHost::Defer (the next Poll returns them).
//
// Thread-safety: used on the source's thread only; librdkafka calls the rebalance callback from
// rd_kafka_consumer_poll() on that thread.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/source/kafka/kafka_source_options.h"
#include "ferry/source/kafka/kafka_source_stats.h"
#include "ferry/source/kafka/partition_table.h"
#include "ferry/source/kafka/start_resolver.h"
#include "ferry/source/kafka/topic_matcher.h"
#include "ferry/source/source.h"

namespace ferry::source::kafka {

struct RefusedOffset;

// What the controller needs of the source that owns it.
class AssignmentHost {
 public:
  virtual ~AssignmentHost() = default;
  // A partition is given up: drop what was taken of it and not delivered yet, end a rate-limit
  // pause (librdkafka keeps an application pause across re-assignment).
  virtual void Forget(PartitionState* state) = 0;
  // A transient broker error: counted, logged (throttled); librdkafka retries.
  virtual void NoteBrokerError(std::string_view what) = 0;
  // An error for the next Poll to return; the first one wins.
  virtual void Defer(Status error) = 0;
};

class AssignmentController {
 public:
  // Everything is borrowed and must outlive the controller.
  AssignmentController(const KafkaSourceOptions* options, PartitionTable* table,
                       KafkaSourceStats* stats, AssignmentHost* host)
      : options_(options), resolver_(*options), table_(table), stats_(stats), host_(host) {}

  AssignmentController(const AssignmentController&) = delete;
  AssignmentController& operator=(const AssignmentController&) = delete;

  // REQUIRES: called once, before anything else but the constructor; `rk` outlives every call.
  void Bind(rd_kafka_t* rk) { rk_ = rk; }
  // The listener told of assignments and revocations. With Assignment::kManual, also finds the
  // topics' partitions and starts them (InvalidArgument for a bad topic pattern).
  Status Start(PartitionListener* listener);

  bool manual() const { return topic_matcher_.has_value(); }

  // Steps 2 and 3 for a group: librdkafka's rebalance callback, and the revocation events served
  // while closing.
  void OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);
  // At each Poll: with manual assignment, looks at the metadata when due; then tries the pending
  // partitions again.
  void Refresh();
  // Step 5 for a consumer error RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET: DataLoss naming the range
  // (gap_report.h), or OK after skipping a gap below the log start with on_gap = kContinue.
  Status OnOutOfRange(const rd_kafka_message_t& message);
  // Ranges skipped since the last call.
  std::vector<Gap> TakeGaps();
  // Manual assignment at Close: OnRevoked for every partition, then the assignment is cleared.
  void RevokeAll();

 private:
  void OnAssign(const rd_kafka_topic_partition_list_t* partitions);
  void OnRevoke(const rd_kafka_topic_partition_list_t* partitions);
  // Asks the listener and the resolver for the start of each state, then assigns the resolved
  // ones. Defers the first failure.
  void StartPartitions(const std::vector<PartitionState*>& states, bool from_callback);
  Status Assign(const std::vector<PartitionState*>& started);
  void Revoke(PartitionState* state);
  // Manual assignment: finds partitions of the topics not yet assigned and starts them. A
  // metadata failure is noted as a broker error and retried sooner; a refused topic is deferred.
  void DiscoverPartitions();
  // PermissionDenied if the broker, asked for the metadata of the named topic alone, refuses it
  // (the principal may not DESCRIBE it); OK otherwise, and always with security.protocol
  // PLAINTEXT (no request: see the .cc).
  Status RefusedTopic(const std::string& name, int timeout_ms);
  // on_gap = kContinue: records the range below the log start and restarts the partition there.
  Status SkipGap(PartitionState* s, const RefusedOffset& refused);
  // A partition the policy started at the log start or end, whose log moved under that offset
  // before anything was taken (OnOutOfRange): starts it again at the policy's position in the
  // log as the broker holds it now. No gap: the table holds no position for it.
  Status StartAgainAtPolicyStart(PartitionState* s, const RefusedOffset& refused);
  // Assigns `s` again from offset `low` (a refused fetch stopped it); RD_KAFKA_OFFSET_END lets
  // librdkafka look the log end up.
  Status StartAgainAt(PartitionState* s, int64_t low);

  const KafkaSourceOptions* options_;
  StartResolver resolver_;
  PartitionTable* table_;
  KafkaSourceStats* stats_;
  AssignmentHost* host_;
  rd_kafka_t* rk_ = nullptr;
  PartitionListener* listener_ = nullptr;
  bool cooperative_ = false;                   // decided by the group at the first rebalance
  std::optional<TopicMatcher> topic_matcher_;  // manual assignment only
  int64_t next_discovery_us_ = 0;
  int64_t discovery_retry_us_ = 0;  // after a failed metadata request, doubled up to the refresh
  std::set<std::string> missing_topics_;  // named topics the cluster did not know at last look
  std::vector<Gap> gaps_;                 // skipped, not yet taken by TakeGaps()
};

}  // namespace ferry::source::kafka
