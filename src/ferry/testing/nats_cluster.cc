#include "ferry/testing/nats_cluster.h"

namespace ferry::testing {

Result<std::unique_ptr<NatsCluster>> NatsCluster::Start(Options options) {
  if (options.nodes < 1) {
    return InvalidArgument("a nats cluster needs at least one node, not {}", options.nodes);
  }
  std::vector<int> route_ports;
  std::string routes;
  for (int i = 0; i < options.nodes; ++i) {
    FERRY_ASSIGN_OR_RETURN(int port, PickFreePort());
    route_ports.push_back(port);
    routes += (routes.empty() ? "" : ",") + ("nats://127.0.0.1:" + std::to_string(port));
  }
  std::unique_ptr<NatsCluster> cluster(new NatsCluster());
  for (int i = 0; i < options.nodes; ++i) {
    NatsServer::Options node;
    node.server = options.server;
    // A node's own address in --routes is recognised and skipped by the server.
    node.extra_args = {
        "--server_name",  cluster->node_name(i),
        "--cluster_name", options.cluster_name,
        "--cluster",      "nats://127.0.0.1:" + std::to_string(route_ports[static_cast<size_t>(i)]),
        "--routes",       routes};
    auto started = NatsServer::Start(std::move(node));
    if (!started.ok()) {
      return started.status().WithContext("nats cluster node {}", cluster->node_name(i));
    }
    cluster->nodes_.push_back(std::move(*started));
  }
  return cluster;
}

int NatsCluster::IndexOf(std::string_view name) const {
  for (int i = 0; i < size(); ++i) {
    if (node_name(i) == name) {
      return i;
    }
  }
  return -1;
}

std::string NatsCluster::urls() const {
  std::string list;
  for (const auto& node : nodes_) {
    list += (list.empty() ? "" : ",") + node->url();
  }
  return list;
}

std::string NatsCluster::Logs() const {
  std::string logs;
  for (int i = 0; i < size(); ++i) {
    logs += "==== " + node_name(i) + " (" + nodes_[static_cast<size_t>(i)]->url() + ")\n" +
            nodes_[static_cast<size_t>(i)]->Log();
  }
  return logs;
}

}  // namespace ferry::testing
