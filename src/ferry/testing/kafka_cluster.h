// KafkaCluster: a three-node Apache Kafka cluster in KRaft mode on one host, for failover tests
// (DESIGN.md, "Testing against the real thing"; docs/testing-servers.md has its start time and
// memory). Each node is a KafkaBroker (kafka_broker.h) running a combined broker and controller
// with node.id i + 1 on free loopback ports of its own; the three controllers form a static
// quorum (controller.quorum.voters names all three), so the cluster stays writable and elects
// new partition leaders while any two nodes run.
//
// Start-up:
//   1. Pick a client and a controller port per node and one cluster id.
//   2. Format each node's storage and spawn its JVM without waiting (a node's broker answers only
//      once a majority of the quorum has elected a leader and the broker has registered).
//   3. Wait until every node answers metadata. A node that lost a port to another process, or
//      did not come up, fails the whole attempt; the cluster is started again on new ports.
// Internal topics (__consumer_offsets, the transaction log) get three replicas and
// min.insync.replicas 2, like the topics tests create with CreateTopic.
//
// Nodes can be SIGKILLed, stopped (SIGSTOP: a stall), continued and restarted on their ports
// and data through node(i); the broker's session (3 s, kafka_broker.cc) fences a dead or
// stalled node quickly, and its partitions get new leaders among the in-sync replicas.
//
// Lifetime: the destructor SIGKILLs every node and removes their directories. Start (and so
// every JVM) from the thread that outlives the cluster (PR_SET_PDEATHSIG, kafka_broker.h).
//
// Thread-safety: Start and the nodes' Kill9/Stop/Restart from one thread; the const accessors
// and ExitReport from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/testing/kafka_broker.h"

namespace ferry::testing {

class KafkaCluster {
 public:
  struct Options {
    int nodes = 3;
    // As KafkaBroker::Options: the jars' folder or version (empty: the default 4.x), each
    // node's heap, more server.properties lines for every node.
    std::string home;
    std::string version;
    std::string heap = "320m";
    std::vector<std::string> properties;
    std::chrono::milliseconds ready_timeout{180000};
  };

  // NotFound when the jars or java are missing (naming `make setup-kafka`); Unavailable when a
  // node does not come up in kServerStartAttempts attempts (the message holds the logs).
  static Result<std::unique_ptr<KafkaCluster>> Start(Options options);
  static Result<std::unique_ptr<KafkaCluster>> Start() { return Start(Options{}); }
  ~KafkaCluster() = default;

  KafkaCluster(const KafkaCluster&) = delete;
  KafkaCluster& operator=(const KafkaCluster&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  KafkaBroker* node(int i) { return nodes_.at(static_cast<size_t>(i)).get(); }
  const KafkaBroker* node(int i) const { return nodes_.at(static_cast<size_t>(i)).get(); }
  // The node index of a Kafka node id (node.id = index + 1), or -1.
  int IndexOfNodeId(int32_t node_id) const;
  // Every node's PLAINTEXT listener, comma-separated.
  std::string bootstrap() const;
  // From the first JVM's spawn until every node answered metadata (formatting not included).
  std::chrono::milliseconds start_time() const { return start_time_; }
  // The sum of the running nodes' resident set sizes.
  int64_t RssBytes() const;

  // Creates a topic with `replication_factor` replicas (default: one per node) and
  // min.insync.replicas 2 unless `configs` says otherwise, through the first running node; waits
  // until every partition has a leader.
  Status CreateTopic(const std::string& name, int partitions,
                     std::map<std::string, std::string> configs = {},
                     int replication_factor = 0) const;
  // The topic's partitions as the first running node's metadata describes them.
  Result<std::vector<KafkaBroker::PartitionReplicas>> DescribeTopic(const std::string& name) const;
  // Waits (up to `limit`) until every partition of `topic` has a leader and all its replicas in
  // sync: after a node was restarted, before the next fault. Unavailable past the limit, naming
  // the partitions still short.
  Status WaitUntilInSync(const std::string& topic, std::chrono::milliseconds limit) const;

  // The logs of every node (their last `lines` lines), each under a header line.
  std::string Logs(int lines = 40) const;
  // nullopt while every node runs or was stopped by the test; else the first report of a node
  // that exited on its own (KafkaBroker::ExitReport). For a Watchdog.
  std::optional<std::string> ExitReport() const;

 private:
  KafkaCluster() = default;

  std::vector<std::unique_ptr<KafkaBroker>> nodes_;
  std::chrono::milliseconds start_time_{0};
};

}  // namespace ferry::testing
