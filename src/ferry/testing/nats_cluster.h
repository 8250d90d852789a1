// NatsCluster: a JetStream cluster of nats-server processes on one host for failover tests
// (DESIGN.md, "Testing against the real thing"; docs/testing-servers.md). Each node is a
// NatsServer (nats_server.h) with its own free client port, free route port and store directory,
// a server name ("n1", "n2", ...) and the cluster name; every node lists every route port, so the
// nodes find each other whatever order they start in. Nodes can be SIGKILLed and restarted on
// their port, route port and store, and rejoin.
//
// Start() returns once every node accepts client connections; JetStream answers only after the
// nodes elected a meta leader, so a test waits for that with its client before creating streams
// (JetStreamTestClient::WaitForJetStream in tests/integration).
//
// Lifetime: the destructor stops every node (SIGKILL) and removes their stores.
//
// Thread-safety: one thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/testing/nats_server.h"

namespace ferry::testing {

class NatsCluster {
 public:
  struct Options {
    // A name of TestedNatsServers() or a binary's path (NatsServer::Options::server). JetStream
    // clustering is tested on every tested server (jetstream_cluster_test).
    std::string server = kCurrentNatsServer;
    int nodes = 3;
    std::string cluster_name = "ferry";
  };

  // NotFound when the binary is missing (the message names `make setup-nats`); Unavailable when
  // a node does not come up (the message holds its log).
  static Result<std::unique_ptr<NatsCluster>> Start(Options options);
  static Result<std::unique_ptr<NatsCluster>> Start() { return Start(Options{}); }

  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  NatsServer* node(int i) { return nodes_.at(static_cast<size_t>(i)).get(); }
  // The server name of node i ("n1" for i = 0), as stream info names a stream's leader.
  std::string node_name(int i) const { return "n" + std::to_string(i + 1); }
  // The index of the node whose server name is `name`, or -1.
  int IndexOf(std::string_view name) const;
  // Every node's client URL, comma-separated (nats.c and ferry's `servers` accept the list).
  std::string urls() const;
  // The log of every node, each under a header line.
  std::string Logs() const;

 private:
  NatsCluster() = default;

  std::vector<std::unique_ptr<NatsServer>> nodes_;
};

}  // namespace ferry::testing
