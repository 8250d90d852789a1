// KafkaBroker: a real Apache Kafka broker for integration tests (DESIGN.md, "Testing against the
// real thing"): one JVM running a combined broker and controller in KRaft mode, on free loopback
// ports, with a PLAINTEXT listener for clients and a CONTROLLER listener for its own quorum of
// one; with Options::security also SASL_PLAINTEXT, SSL, mutual TLS and SASL_SSL listeners and
// the ACL authorizer (below). The jars come from `make setup-kafka` (tests/kafka/pom.xml,
// ~/.cache/ferry/kafka-<version>); Java is Debian's OpenJDK 17. Tests create their topics
// (auto-creation is off) with CreateTopic, which uses librdkafka's admin API as an independent
// client would.
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
// A start whose port another process took meanwhile is retried from step 1 with new ports
// (StartOnFreePort, test_server.h).
//
// Security (Options::security; docs/testing-servers.md): one listener per kind, each on a port
// of its own (bootstrap(Listener)):
//   - SASL_PLAINTEXT and SASL_SSL with the mechanisms PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512.
//     Every user of Options::sasl_users gets a PLAIN password (the listeners' JAAS
//     configuration) and SCRAM-SHA-256/512 credentials (written at format time, StorageTool's
//     --add-scram), all with the same password.
//   - SSL (the broker's certificate only) and MTLS (SSL with `ssl.client.auth=required`).
//     Certificates come from a TestCa made in dir()/tls at start (ca()); the broker's keystore
//     and truststore are PEM files. A client certificate's CN is its principal (User:<cn>,
//     through ssl.principal.mapping.rules).
//   - The StandardAuthorizer with no ACL allowing nothing (allow.everyone.if.no.acl.found is
//     false): AllowRead grants READ on a topic or a group. super.users is User:ANONYMOUS, the
//     principal of the PLAINTEXT and CONTROLLER listeners, so the broker itself, CreateTopic,
//     AllowRead and any PLAINTEXT client may do anything.
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
#include "ferry/testing/test_ca.h"

namespace ferry::testing {

class KafkaBroker {
 public:
  enum class Listener { kPlaintext, kSaslPlaintext, kSsl, kMutualTls, kSaslSsl };
  enum class AclResource { kTopic, kGroup };

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

    // A node of a KafkaCluster (kafka_cluster.h) rather than a broker of its own. The cluster
    // picks every node's ports and formats them all with one cluster id; node.id and
    // controller.quorum.voters come in `properties`. No node answers metadata before a majority
    // of the quorum runs, so Start only spawns the JVM when `wait_until_ready` is false and the
    // cluster calls WaitUntilReady once every node runs (Restart always waits). Defaults: free
    // ports, a new cluster id, Start waits.
    std::string cluster_id;
    int port = 0;
    int controller_port = 0;
    bool wait_until_ready = true;
    // The security listeners, a test CA and the ACL authorizer (above).
    bool security = false;
    // With `security`: SASL users, name -> password (letters, digits, '-' and '_' only).
    std::map<std::string, std::string> sasl_users;
  };

  // Formats the storage and starts the broker (steps above). NotFound, naming `make
  // setup-kafka`, when the jars or java are missing; Unavailable when the JVM exits or does not
  // answer in time (the message holds the end of its log).
  static Result<std::unique_ptr<KafkaBroker>> Start(Options options);
  static Result<std::unique_ptr<KafkaBroker>> Start() { return Start(Options{}); }
  // One broker for the whole test binary (SharedServer, test_server.h), started on the first
  // call and stopped when the process exits; later calls return it, or the first call's error
  // again. Unavailable when it has died since (a test that kills the broker must Start its own).
  // The first call's options hold for the whole binary.
  static Result<KafkaBroker*> Shared();
  static Result<KafkaBroker*> Shared(const Options& options);
  ~KafkaBroker();

  KafkaBroker(const KafkaBroker&) = delete;
  KafkaBroker& operator=(const KafkaBroker&) = delete;

  // The newest 4.x and the last 3.x pinned in tests/kafka/pom.xml.
  static std::string DefaultVersion();
  static std::string Kafka3Version();
  // A new KRaft cluster id (Kafka's Uuid.toString), for Options::cluster_id.
  static std::string NewClusterId();

  // "127.0.0.1:PORT", the PLAINTEXT listener.
  std::string bootstrap() const;
  std::string endpoint() const { return bootstrap(); }
  // "127.0.0.1:PORT" of a listener; REQUIRES: options.security, or kPlaintext.
  std::string bootstrap(Listener listener) const;
  int port() const { return port_; }
  // The test CA that signed the broker's certificate; nullptr without options.security.
  const TestCa* ca() const { return ca_ ? &*ca_ : nullptr; }
  // The broker's log file (stdout and stderr of every start).
  const std::string& log_path() const { return log_path_; }
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
  // `replication_factor` > 1 on a KafkaCluster's node.
  Status CreateTopic(const std::string& name, int partitions,
                     const std::map<std::string, std::string>& configs = {},
                     int replication_factor = 1) const;

  // A partition as this broker's metadata describes it: its leader's and the in-sync replicas'
  // node ids (-1: no leader).
  struct PartitionReplicas {
    int32_t leader = -1;
    std::vector<int32_t> replicas;
    std::vector<int32_t> in_sync;
  };
  // Every partition of `topic`, indexed by partition. Unavailable when metadata does not
  // answer within 5 s or names no such topic.
  Result<std::vector<PartitionReplicas>> DescribeTopic(const std::string& name) const;
  // After Start with `wait_until_ready` false: waits until metadata answers (Start's step 3).
  Status WaitUntilReady();
  // An ACL: ALLOW READ (which implies DESCRIBE) on the topic or group `name` (literal) to
  // `principal` ("User:alice") from any host; returns once the broker's authorizer has it
  // (DescribeAcls lists it), so a client started next is allowed. REQUIRES: options.security.
  Status AllowRead(const std::string& principal, AclResource resource,
                   const std::string& name) const;
  // Removes that ACL (DeleteAcls) and returns once DescribeAcls no longer lists it, so the
  // principal's next request on the resource is refused. REQUIRES: options.security.
  Status RevokeRead(const std::string& principal, AclResource resource,
                    const std::string& name) const;

  // Grows `topic` to `total` partitions (CreatePartitions), then waits until every partition has
  // a leader.
  Status AddPartitions(const std::string& topic, int total) const;
  // Deletes `topic` (DeleteTopics) and waits until metadata no longer names it.
  Status DeleteTopic(const std::string& topic) const;
  // DeleteRecords: moves the log start of topic/partition to `before_offset` (the records
  // below it are gone at once, as retention would remove them). Returns the new log start.
  Result<int64_t> DeleteRecords(const std::string& topic, int32_t partition,
                                int64_t before_offset) const;

  // Sets `topic`'s configurations to exactly `configs` (AlterConfigs: every topic configuration
  // not named returns to the broker's default), as retention.ms changed while a consumer is away.
  Status SetTopicConfigs(const std::string& topic,
                         const std::map<std::string, std::string>& configs) const;

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
              std::string dir, int port, std::vector<int> more_ports);
  // Writes the configuration, formats the storage and starts the JVM (steps 1 to 3).
  Status FirstStart();
  Status MakeTls();
  Status WriteConfig() const;
  Status Format() const;
  Status Spawn(bool wait);
  Status WaitReady();
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
  // With security: the ports of kSaslPlaintext, kSsl, kMutualTls and kSaslSsl, in this order.
  const std::vector<int> secure_ports_;
  std::optional<TestCa> ca_;
  Subprocess process_;
  // Copies of the running JVM's pid and of "the test stopped it", for the thread-safe
  // accessors (ExitReport from a watchdog thread).
  std::atomic<pid_t> pid_{-1};
  std::atomic<bool> stopping_{false};
  std::chrono::milliseconds last_start_time_{0};
  std::chrono::steady_clock::time_point spawned_at_;
};

}  // namespace ferry::testing
