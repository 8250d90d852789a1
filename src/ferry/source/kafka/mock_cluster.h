// MockCluster: librdkafka's in-process mock Kafka cluster (rdkafka_mock.h) behind a ferry-style
// API. It speaks the real protocol on localhost ports (producers, idempotence, consumer groups,
// offset commits, metadata) and injects faults: brokers down and up, round-trip delays, request
// errors per API, leader moves. It keeps everything in memory and evicts the oldest message sets
// of a partition beyond 5 MiB (FIELD-NOTES.md), so the process that owns it must outlive the
// clients under test. Used by `ferry mock-kafka` and by the Kafka tests.
//
// Not supported by librdkafka 2.0.2's mock: adding partitions to an existing topic, SSL/SASL,
// the CreateTopics admin call (use CreateTopic), timestamp lookups (offsetsForTimes answers -1).
//
// Thread-safety: all methods may be called from any thread (librdkafka serializes them on the
// cluster's own thread).
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/kafka/kafka_handles.h"

namespace ferry::source::kafka {

class MockCluster {
 public:
  // A cluster of `brokers` brokers with ids 1..brokers, listening on free localhost ports.
  // `debug`: librdkafka debug contexts for the cluster's own log ("mock,cgrp" shows the group
  // coordinator's state machine), empty for none.
  static Result<std::unique_ptr<MockCluster>> Create(int brokers, const std::string& debug = "");
  ~MockCluster();

  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // "127.0.0.1:port,..." for bootstrap.servers.
  const std::string& bootstrap_servers() const { return bootstraps_; }
  int broker_count() const { return brokers_; }

  // AlreadyExists if the topic exists.
  Status CreateTopic(std::string_view topic, int partitions, int replication_factor = 1);
  // broker -1 means every broker. Down disconnects clients and refuses new connections; it does
  // not move partition leadership (SetPartitionLeader does).
  Status SetBrokerDown(int32_t broker);
  Status SetBrokerUp(int32_t broker);
  Status SetBrokerRtt(int32_t broker, int rtt_ms);
  Status SetPartitionLeader(std::string_view topic, int32_t partition, int32_t broker);
  // The next errors.size() requests with `api_key` (cluster-wide) fail with these codes in
  // order. RD_KAFKA_RESP_ERR__TRANSPORT makes the broker drop the connection instead.
  void PushRequestErrors(int16_t api_key, std::span<const rd_kafka_resp_err_t> errors);
  void ClearRequestErrors(int16_t api_key);
  // The error Metadata requests report for `topic` (NO_ERROR clears it).
  void SetTopicError(std::string_view topic, rd_kafka_resp_err_t err);
  // Moves the group coordinator of `group` to `broker`.
  Status SetGroupCoordinator(std::string_view group, int32_t broker);

  rd_kafka_mock_cluster_t* get() const { return cluster_.get(); }

 private:
  struct ClusterDeleter {
    void operator()(rd_kafka_mock_cluster_t* c) const { rd_kafka_mock_cluster_destroy(c); }
  };
  MockCluster() = default;

  // Destruction order: the cluster borrows rk_ for its bookkeeping, so rk_ is declared first and
  // destroyed last.
  KafkaPtr rk_;
  std::unique_ptr<rd_kafka_mock_cluster_t, ClusterDeleter> cluster_;
  std::string bootstraps_;
  int brokers_ = 0;
};

// Kafka protocol API keys by name ("Produce", "Fetch", "ListOffsets", "Metadata",
// "OffsetCommit", "OffsetFetch", "FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup",
// "SyncGroup", "ApiVersion", "InitProducerId", ...) or number.
Result<int16_t> ParseApiKey(std::string_view name);
// A librdkafka error code by name ("NOT_LEADER_FOR_PARTITION", "_TRANSPORT", with or without the
// RD_KAFKA_RESP_ERR_ prefix) or number.
Result<rd_kafka_resp_err_t> ParseErrorCode(std::string_view name);

}  // namespace ferry::source::kafka
