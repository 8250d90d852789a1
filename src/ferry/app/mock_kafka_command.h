// `ferry mock-kafka`: runs librdkafka's embedded mock Kafka cluster for demos and tests, prints
// its bootstrap servers as the first line on stdout, and takes fault-injection commands on stdin
// (see --help and docs/kafka.md). Composition root only: the cluster is
// ferry::source::kafka::MockCluster.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

// Adds the subcommand to `app`; when it runs, its exit code goes to *exit_code.
void RegisterMockKafkaCommand(CLI::App& app, int* exit_code);

}  // namespace ferry::app
