#include "ferry/testing/kafka_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <thread>

#include "ferry/testing/nats_server.h"
#include "ferry/testing/subprocess.h"

namespace ferry::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// 2 * nodes distinct free loopback ports.
Result<std::vector<int>> FreePorts(int count) {
  std::set<int> seen;
  std::vector<int> ports;
  for (int tries = 0; static_cast<int>(ports.size()) < count && tries < 10 * count; ++tries) {
    FERRY_ASSIGN_OR_RETURN(int port, PickFreePort());
    if (seen.insert(port).second) {
      ports.push_back(port);
    }
  }
  if (static_cast<int>(ports.size()) < count) {
    return Unavailable("could not pick {} distinct free loopback ports", count);
  }
  return ports;
}

}  // namespace

Result<std::unique_ptr<KafkaCluster>> KafkaCluster::Start(Options options) {
  if (options.nodes < 1) {
    return InvalidArgument("a Kafka cluster needs at least one node, not {}", options.nodes);
  }
  const int replicas = std::min(3, options.nodes);
  const int min_isr = std::min(2, replicas);
  Status last;
  for (int attempt = 1; attempt <= kServerStartAttempts; ++attempt) {
    // 1. Ports and the cluster id.
    FERRY_ASSIGN_OR_RETURN(std::vector<int> ports, FreePorts(2 * options.nodes));
    std::string voters;
    for (int i = 0; i < options.nodes; ++i) {
      voters += fmt::format("{}{}@127.0.0.1:{}", voters.empty() ? "" : ",", i + 1,
                            ports[static_cast<size_t>(2 * i + 1)]);
    }
    const std::string cluster_id = KafkaBroker::NewClusterId();
    std::unique_ptr<KafkaCluster> cluster(new KafkaCluster());
    // 2. Format and spawn each node.
    const auto start = steady_clock::now();
    last = Status::OK();
    for (int i = 0; i < options.nodes && last.ok(); ++i) {
      KafkaBroker::Options node{.home = options.home,
                                .version = options.version,
                                .heap = options.heap,
                                .properties = {},
                                .ready_timeout = options.ready_timeout,
                                .cluster_id = cluster_id,
                                .port = ports[static_cast<size_t>(2 * i)],
                                .controller_port = ports[static_cast<size_t>(2 * i + 1)],
                                .wait_until_ready = false};
      node.properties = {
          fmt::format("node.id={}", i + 1),
          "controller.quorum.voters=" + voters,
          fmt::format("default.replication.factor={}", replicas),
          fmt::format("min.insync.replicas={}", min_isr),
          fmt::format("offsets.topic.replication.factor={}", replicas),
          fmt::format("transaction.state.log.replication.factor={}", replicas),
          fmt::format("transaction.state.log.min.isr={}", min_isr),
          // A restarted node takes back the leaderships it prefers within seconds, not minutes:
          // a leader kill then moves leadership twice.
          "leader.imbalance.check.interval.seconds=5",
      };
      node.properties.insert(node.properties.end(), options.properties.begin(),
                             options.properties.end());
      Result<std::unique_ptr<KafkaBroker>> started = KafkaBroker::Start(std::move(node));
      if (!started.ok()) {
        last = started.status().WithContext("Kafka cluster node {}", i + 1);
        break;
      }
      cluster->nodes_.push_back(std::move(*started));
    }
    // 3. Every node answers.
    for (int i = 0; i < cluster->size() && last.ok(); ++i) {
      last = cluster->node(i)->WaitUntilReady().WithContext("Kafka cluster node {}", i + 1);
    }
    if (last.ok()) {
      cluster->start_time_ = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
      return cluster;
    }
    last = last.WithContext("attempt {} of {}; the nodes' logs:\n{}", attempt, kServerStartAttempts,
                            cluster->Logs(20));
    // The destructor kills the nodes that run; again on new ports.
  }
  return last;
}

int KafkaCluster::IndexOfNodeId(int32_t node_id) const {
  return node_id >= 1 && node_id <= size() ? node_id - 1 : -1;
}

std::string KafkaCluster::bootstrap() const {
  std::string list;
  for (const auto& node : nodes_) {
    list += (list.empty() ? "" : ",") + node->bootstrap();
  }
  return list;
}

int64_t KafkaCluster::RssBytes() const {
  int64_t sum = 0;
  for (const auto& node : nodes_) {
    if (node->Alive()) {
      sum += node->RssBytes().value_or(0);
    }
  }
  return sum;
}

Status KafkaCluster::CreateTopic(const std::string& name, int partitions,
                                 std::map<std::string, std::string> configs,
                                 int replication_factor) const {
  if (replication_factor <= 0) {
    replication_factor = size();
  }
  configs.emplace("min.insync.replicas", std::to_string(std::min(2, replication_factor)));
  Status last = Unavailable("no node of the Kafka cluster runs");
  for (const auto& node : nodes_) {
    if (node->Alive()) {
      last = node->CreateTopic(name, partitions, configs, replication_factor);
      if (last.ok() || last.code() == StatusCode::kAlreadyExists) {
        return last;
      }
    }
  }
  return last;
}

Result<std::vector<KafkaBroker::PartitionReplicas>> KafkaCluster::DescribeTopic(
    const std::string& name) const {
  Status last = Unavailable("no node of the Kafka cluster runs");
  for (const auto& node : nodes_) {
    if (node->Alive()) {
      auto described = node->DescribeTopic(name);
      if (described.ok()) {
        return described;
      }
      last = described.status();
    }
  }
  return last;
}

Status KafkaCluster::WaitUntilInSync(const std::string& topic, milliseconds limit) const {
  const auto deadline = steady_clock::now() + limit;
  std::string short_of;
  while (true) {
    auto described = DescribeTopic(topic);
    if (described.ok()) {
      short_of.clear();
      for (size_t p = 0; p < described->size(); ++p) {
        const KafkaBroker::PartitionReplicas& r = (*described)[p];
        if (r.leader < 0 || r.in_sync.size() < r.replicas.size()) {
          short_of += fmt::format(" {} (leader {}, {} of {} in sync)", p, r.leader,
                                  r.in_sync.size(), r.replicas.size());
        }
      }
      if (short_of.empty()) {
        return Status::OK();
      }
    } else {
      short_of = described.status().ToString();
    }
    if (steady_clock::now() > deadline) {
      return Unavailable("topic {}: replicas not in sync after {} ms:{}", topic, limit.count(),
                         short_of);
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
}

std::string KafkaCluster::Logs(int lines) const {
  std::string logs;
  for (int i = 0; i < size(); ++i) {
    logs += fmt::format("==== Kafka node {} ({})\n{}\n", i + 1, node(i)->bootstrap(),
                        node(i)->Log(lines));
  }
  return logs;
}

std::optional<std::string> KafkaCluster::ExitReport() const {
  for (const auto& node : nodes_) {
    if (std::optional<std::string> report = node->ExitReport()) {
      return report;
    }
  }
  return std::nullopt;
}

}  // namespace ferry::testing
