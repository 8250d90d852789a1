// KafkaBroker: a real Apache Kafka broker for integration tests (DESIGN.md, "Testing against the
// real thing"): one JVM running a combined broker and controller in KRaft mode, on free loopback
// ports, with a PLAINTEXT listener for clients and a CONTROLLER listener for its own quorum of
// one. The jars come from `make setup-kafka` (tests/kafka/pom.xml, ~/.cache/ferry/kafka-<version>);
// Java is Debian's OpenJDK 17. Tests create their topics (auto-creation is off) with
// CreateTopic, which uses librdkafka's admin API as an independent client would.
//
// Start-up (numbered as in Start(); docs/testing-servers.md has the figures):
//   1. A temp dir /tmp/ferry-kafka-XXXXXX holds server.properties, the log4j configurations,
//      data/ (the log dir, which also holds the KRaft metadata log) and server.log.
//   2. `kafka.tools.StorageTool format -t <cluster id> -c server.properties` writes
//      meta.properties and the bootstrap checkpoint (a static quorum, controller.quorum.voters,
//      so the same configuration formats and runs on 3.x and 4.x).
//   3. `java -cp 'libs/*' kafka.Kafka server.properties`, then wait until a metadata request
//      through librdkafka names the broker (the port accepting connections is not enough: the
//      broker listener answers only once the broker has registered with the controller).
// A start whose port another process took meanwhile is retried from step 1 with new ports.
//
// Lifetime: the JVM is started with PR_SET_PDEATHSIG(SIGKILL) from the thread that called Start
// (it must outlive the broker: the main thread, or Shared()); the destructor SIGKILLs it, reaps
// it and removes the temp dir. Kill9/Stop and Restart keep the ports and the data.
//
// Thread-safety: Start, Kill9, Stop, Restart from one thread; the accessors, Alive, Log,
// ExitReport, RssBytes and CreateTopic from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/testing/subprocess.h"

namespace ferry::testing {

class KafkaBroker {
 public:
  struct Options {
    // The folder holding libs/ (the jars). Empty: $FERRY_KAFKA_HOME, else
    // ~/.cache/ferry/kafka-<version> (`make setup-kafka`).
    std::string home;
    // Which cached version when `home` and $FERRY_KAFKA_HOME are empty; empty:
    // $FERRY_KAFKA_VERSION, else the newest 4.x pinned in tests/kafka/pom.xml (DefaultVersion()).
    // The environment variable runs a whole test binary on another version (Kafka3Version()).
    std::string version;
    // The JVM's heap limit (-Xmx).
    std::string heap = "384m";
    // More lines of server.properties ("key=value"); a later key overrides an earlier one.
    std::vector<std::string> properties;
    // How long the broker may take from process start until metadata answers.
    std::chrono::milliseconds ready_timeout{120000};
  };

  // Formats the storage and starts the broker (steps above). NotFound, naming `make
  // setup-kafka`, when the jars or java are missing; Unavailable when the JVM exits or does not
  // answer in time (the message holds the end of its log).
  static Result<std::unique_ptr<KafkaBroker>> Start(Options options);
  static Result<std::unique_ptr<KafkaBroker>> Start() { return Start(Options{}); }
  // One broker for the whole test binary, started on the first call and stopped when the
  // process exits; later calls return it, or the first call's error again. Unavailable when it
  // has died since (a test that kills the broker must Start its own).
  static Result<KafkaBroker*> Shared();
  ~KafkaBroker();

  KafkaBroker(const KafkaBroker&) = delete;
  KafkaBroker& operator=(const KafkaBroker&) = delete;

  // The newest 4.x and the last 3.x pinned in tests/kafka/pom.xml.
  static std::string DefaultVersion();
  static std::string Kafka3Version();

  // "127.0.0.1:PORT", the PLAINTEXT listener.
  std::string bootstrap() const;
  int port() const { return port_; }
  int controller_port() const { return controller_port_; }
  // The Kafka version of the jars (from the kafka_2.13-<version>.jar name).
  const std::string& version() const { return version_; }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  // From the last (re)start of the JVM until metadata answered; the format step not included.
  std::chrono::milliseconds last_start_time() const { return last_start_time_; }

  // Running (not exited, not a zombie).
  bool Alive() const;
  // The broker's resident set size now (VmRSS).
  Result<int64_t> RssBytes() const;

  // Creates a topic with replication factor 1 and the given topic configurations
  // (e.g. {"segment.bytes", "65536"}), then waits until every partition has a leader.
  // AlreadyExists when the topic exists.
  Status CreateTopic(const std::string& name, int partitions,
                     const std::map<std::string, std::string>& configs = {}) const;

  // Grows `topic` to `total` partitions (CreatePartitions), then waits until every partition has
  // a leader.
  Status AddPartitions(const std::string& topic, int total) const;
  // Deletes `topic` (DeleteTopics) and waits until metadata no longer names it.
  Status DeleteTopic(const std::string& topic) const;
  // DeleteRecords: moves the log start of topic/partition to `before_offset` (the records
  // below it are gone at once, as retention would remove them). Returns the new log start.
  Result<int64_t> DeleteRecords(const std::string& topic, int32_t partition,
                                int64_t before_offset) const;

  // SIGKILL, then reap; the data stays.
  Status Kill9();
  // SIGTERM (a controlled shutdown), up to 30 s, then SIGKILL; reaps it.
  Status Stop();
  // Starts the JVM again on the same ports and data and waits until metadata answers.
  // REQUIRES: !Alive()
  Status Restart();
  // The end of the broker's log (stdout and stderr of every start), for failure messages.
  std::string Log(int lines = 80) const;
  // nullopt while the broker runs or after the test stopped it; once it exited on its own
  // (without being reaped): how, and the end of its log. For a watchdog thread.
  std::optional<std::string> ExitReport() const;

 private:
  KafkaBroker(Options options, std::string java, std::string libs, std::string version,
              std::string dir, int port, int controller_port);
  Status WriteConfig() const;
  Status Format() const;
  Status Spawn();
  Status WaitReady();
  bool PortRace() const;
  std::vector<std::string> JavaCommand(const std::string& main_class,
                                       const std::vector<std::string>& args) const;

  const Options options_;
  const std::string java_;
  const std::string libs_;  // the folder of jars
  const std::string version_;
  const std::string dir_;
  const std::string log_path_;
  const int port_;
  const int controller_port_;
  Subprocess process_;
  // Copies of the running JVM's pid and of "the test stopped it", for the thread-safe
  // accessors (ExitReport from a watchdog thread).
  std::atomic<pid_t> pid_{-1};
  std::atomic<bool> stopping_{false};
  std::chrono::milliseconds last_start_time_{0};
};

}  // namespace ferry::testing
