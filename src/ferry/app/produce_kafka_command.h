// `ferry produce kafka`: publishes generated messages (MessageTemplate) to a Kafka topic with an
// idempotent producer, for demos, tests and benchmarks; waits for every delivery and exits
// non-zero if any failed.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

// Adds `produce kafka` to `app` (creating `produce` if no other command has); when it runs, its
// exit code goes to *exit_code.
void RegisterProduceKafkaCommand(CLI::App& app, int* exit_code);

}  // namespace ferry::app
