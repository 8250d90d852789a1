// NatsServer: a real nats-server with JetStream, run as a child process for integration tests
// (DESIGN.md, "Testing against the real thing"). It listens on 127.0.0.1 on a free port and
// stores JetStream data in a fresh directory under /tmp; tests can SIGKILL it and start it again
// on the same port and store to exercise reconnects and server restarts.
//
// Which nats-server: Options::server names one of TestedNatsServers() (Debian's 2.9.10, the pinned
// current release `make setup-nats` builds) or a binary's path; left empty, the environment
// variable FERRY_NATS_SERVER (a name or a path) decides for the whole test run, and without it
// Debian's. Tests parameterised over TestedNatsServers() name their server themselves.
//
// Lifetime: the destructor always stops the server (SIGKILL) and removes the store, and the
// child is started with PR_SET_PDEATHSIG so it dies with the test process even if the test
// crashes. Never leaves a server running.
//
// Thread-safety: one thread, except ExitReport() (any thread).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::testing {

// The nats-server builds the JetStream tests run against (docs/testing-servers.md):
//   kDebianNatsServer   Debian 12's package (2.9.10): PATH, /usr/sbin, /usr/bin.
//   kCurrentNatsServer  the pinned current release, built by `make setup-nats` (`go install` from
//                       the Go module proxy) into ~/.cache/ferry/nats-server-<version>/; keep it in
//                       step with the Makefile's NATS_SERVER_VERSION.
inline constexpr char kDebianNatsServer[] = "debian";
inline constexpr char kCurrentNatsServer[] = "v2.15.3";

// {kDebianNatsServer, kCurrentNatsServer}: a fixed list, not what happens to be installed, so that
// a test parameterised over it FAILS naming `make setup-nats` when a server is missing instead of
// vanishing from the run.
std::vector<std::string> TestedNatsServers();

// The binary of `server`: a name of TestedNatsServers() or a path (anything with a '/'); empty
// means FERRY_NATS_SERVER, else kDebianNatsServer. NotFound saying how to install it.
Result<std::string> NatsServerBinary(const std::string& server);

// A test-name-safe form of a server name for INSTANTIATE_TEST_SUITE_P: "v2.15.3" -> "v2_15_3".
std::string NatsServerTestName(const std::string& server);

// INSTANTIATE_TEST_SUITE_P's name generator for suites parameterised over TestedNatsServers():
//   INSTANTIATE_TEST_SUITE_P(Servers, MyTest, ::testing::ValuesIn(TestedNatsServers()),
//                            NatsServerParamName());
struct NatsServerParamName {
  template <typename ParamInfo>
  std::string operator()(const ParamInfo& info) const {
    return NatsServerTestName(info.param);
  }
};

class NatsServer {
 public:
  struct Options {
    // A name of TestedNatsServers() or a path to a nats-server binary; empty: FERRY_NATS_SERVER,
    // else Debian's.
    std::string server;
    // Appended to `nats-server -js -sd DIR -a 127.0.0.1 -p PORT`, e.g. {"--user", "u", "--pass",
    // "p"} or a TLS setup.
    std::vector<std::string> extra_args;
    // How long Start/Restart wait for the port to accept connections.
    int ready_timeout_ms = 15000;
  };

  // Starts a server and waits until it accepts connections. NotFound when the chosen binary is
  // not installed (the message names `make setup-deb` or `make setup-nats`); Unavailable when it
  // exits or does not come up (the message holds its log).
  static Result<std::unique_ptr<NatsServer>> Start(Options options);
  static Result<std::unique_ptr<NatsServer>> Start() { return Start(Options{}); }
  ~NatsServer();

  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  // "nats://127.0.0.1:<port>" (tls:// is up to the test when it configured TLS).
  std::string url() const;
  int port() const { return port_; }
  const std::string& store_dir() const { return store_dir_; }
  // The binary this server runs.
  const std::string& binary() const { return binary_; }
  bool running() const { return pid_ > 0; }

  // SIGKILL, then reap. The store keeps whatever the server had fsync'd or written.
  Status Kill9();
  // SIGTERM (the server flushes and shuts down cleanly), then reap.
  Status Stop();
  // Starts again on the same port and store. REQUIRES: !running()
  Status Restart();
  // The server's combined stdout and stderr since the first start.
  std::string Log() const;
  // nullopt while the server runs or after the test stopped it; once it exited on its own
  // (without being reaped): how, and the end of its log. Thread-safe, for a watchdog thread.
  std::optional<std::string> ExitReport() const;

 private:
  NatsServer(Options options, std::string binary, std::string dir, int port);
  Status Spawn();
  Status WaitReady();
  Status Reap();

  const Options options_;
  const std::string binary_;
  const std::string dir_;  // temp root: store/ and server.log
  const std::string store_dir_;
  const std::string log_path_;
  const int port_;
  // Atomic for ExitReport(), which a watchdog thread calls; written by the owner's thread only.
  std::atomic<pid_t> pid_{-1};
  // Set before the owner kills the server on purpose, so that ExitReport() does not take that
  // exit for a crash.
  std::atomic<bool> stopping_{false};
};

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it back, close).
Result<int> PickFreePort();

}  // namespace ferry::testing
