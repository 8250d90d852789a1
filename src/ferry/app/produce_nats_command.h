// `ferry produce nats`: publishes N templated messages to a JetStream subject for demos, tests
// and benchmarks, asynchronously, and checks every PubAck before it reports success.
//
//   ferry produce nats --server nats://127.0.0.1:4222 --stream newstream --subject newsub
//       --count 10000 --template 'test #{{seq}}' [--rate 5000] [--msg-id] [--create-stream]
//
// Exit code 0 when every message was acknowledged by the stream (duplicates dropped by the
// server's Nats-Msg-Id window count as acknowledged and are reported), 1 otherwise.
//
// Thread-safety: the command runs on the main thread; PubAcks arrive on a nats.c thread and are
// only counted there.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

// Adds `produce nats` under the `produce` command (created if no other command added it yet).
// The command stores its exit code in *exit_code. REQUIRES: exit_code outlives app.
void RegisterProduceNatsCommand(CLI::App& app, int* exit_code);

}  // namespace ferry::app
