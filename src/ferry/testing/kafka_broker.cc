#include "ferry/testing/kafka_broker.h"

#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "ferry/testing/cache_dir.h"
#include "ferry/testing/kafka_broker_internal.h"
#include "ferry/testing/loopback.h"
#include "ferry/testing/test_server.h"

namespace ferry::testing {
namespace {

using kafka_internal::MetadataAnswers;
using kafka_internal::NewClient;
using kafka_internal::RdKafkaPtr;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr char kSetupHint[] = "run `make setup-kafka` (tests/kafka/pom.xml, tools/setup_kafka.sh)";

// A KRaft cluster id: 16 random bytes in unpadded URL-safe base64 (Kafka's Uuid.toString).
std::string NewClusterId() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::random_device rd;
  std::string id;
  // Like Kafka's Uuid.randomUuid, never one that starts with '-': kafka-storage's argument
  // parser would read it as an option ("argument --cluster-id/-t: expected one argument").
  id += kAlphabet[rd() % 62];
  for (int i = 1; i < 21; ++i) {
    id += kAlphabet[rd() % 64];
  }
  id += kAlphabet[(rd() % 4) * 16];  // the last character carries 2 of the 128 bits
  return id;
}

// The version in libs/kafka_2.13-<version>.jar; empty when there is none.
std::string JarVersion(const std::string& libs) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(libs, ec)) {
    std::string name = entry.path().filename().string();
    const std::string prefix = "kafka_2.13-";
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 4 &&
        name.substr(name.size() - 4) == ".jar" && name.find("-test") == std::string::npos) {
      return name.substr(prefix.size(), name.size() - prefix.size() - 4);
    }
  }
  return "";
}

Result<std::string> FindLibs(const KafkaBroker::Options& options) {
  std::string home = options.home;
  if (home.empty()) {
    if (const char* env = getenv("FERRY_KAFKA_HOME"); env != nullptr && *env != '\0') {
      home = env;
    }
  }
  if (home.empty()) {
    std::string version = options.version;
    if (const char* env = getenv("FERRY_KAFKA_VERSION"); version.empty() && env != nullptr) {
      version = env;
    }
    if (version.empty()) {
      version = KafkaBroker::DefaultVersion();
    }
    home = FerryCacheDir() + "/kafka-" + version;
  }
  std::string libs = home + "/libs";
  if (JarVersion(libs).empty()) {
    return NotFound("no Apache Kafka jars in {} (FERRY_KAFKA_HOME or the cache): {}", libs,
                    kSetupHint);
  }
  return libs;
}

// `n` distinct free loopback ports, none equal to `taken` (all sockets are open at once, so the
// kernel hands out distinct ones).
Result<std::vector<int>> FreePorts(size_t n, int taken) {
  std::vector<int> fds;
  std::vector<int> ports;
  Status status;
  while (ports.size() < n && status.ok()) {
    Result<int> fd = ListenOnLoopback(0);
    if (!fd.ok()) {
      status = fd.status();
      break;
    }
    fds.push_back(*fd);
    Result<int> port = LocalPort(*fd);
    if (!port.ok()) {
      status = port.status();
    } else if (*port != taken) {
      ports.push_back(*port);
    }
  }
  for (int fd : fds) {
    close(fd);
  }
  FERRY_RETURN_IF_ERROR(status);
  return ports;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    return ErrnoStatus(errno, "write", path);
  }
  return Status::OK();
}

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    return ErrnoStatus(errno, "read", path);
  }
  return text;
}

// Logging to stdout (server.log), INFO for the broker and WARN for the format tool; log4j 2
// for Kafka 4, reload4j (log4j 1 syntax) for Kafka 3.
std::string Log4j2Config(const char* level) {
  return fmt::format(
      "rootLogger.level = {}\n"
      "rootLogger.appenderRef.stdout.ref = STDOUT\n"
      "appender.stdout.type = Console\n"
      "appender.stdout.name = STDOUT\n"
      "appender.stdout.layout.type = PatternLayout\n"
      "appender.stdout.layout.pattern = [%d] %p %m (%c)%n\n",
      level);
}
std::string Log4j1Config(const char* level) {
  return fmt::format(
      "log4j.rootLogger={}, stdout\n"
      "log4j.appender.stdout=org.apache.log4j.ConsoleAppender\n"
      "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\n"
      "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n\n",
      level);
}

// The server.properties lines of Options::security (kafka_broker.h).
std::string SecurityProperties(const std::string& tls,
                               const std::map<std::string, std::string>& users) {
  std::string plain = "org.apache.kafka.common.security.plain.PlainLoginModule required";
  for (const auto& [name, password] : users) {
    plain += fmt::format(" user_{}=\"{}\"", name, password);
  }
  plain += ";";
  const std::string scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
  std::string text = "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512\n";
  for (const char* listener : {"sasl_plaintext", "sasl_ssl"}) {
    text += fmt::format("listener.name.{}.plain.sasl.jaas.config={}\n", listener, plain);
    for (const char* mechanism : {"scram-sha-256", "scram-sha-512"}) {
      text += fmt::format("listener.name.{}.{}.sasl.jaas.config={}\n", listener, mechanism, scram);
    }
  }
  text += fmt::format(
      "ssl.keystore.type=PEM\n"
      "ssl.keystore.location={0}/broker-keystore.pem\n"
      "ssl.truststore.type=PEM\n"
      "ssl.truststore.location={0}/ferry-ca.pem\n"
      "listener.name.mtls.ssl.client.auth=required\n"
      // CN=carol -> User:carol; any other subject stays its whole DN.
      "ssl.principal.mapping.rules=RULE:^CN=([^,]*)$/$1/,DEFAULT\n"
      "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
      "allow.everyone.if.no.acl.found=false\n"
      "super.users=User:ANONYMOUS\n",
      tls);
  return text;
}

}  // namespace

std::string KafkaBroker::DefaultVersion() {
  return FERRY_KAFKA_VERSION;
}

std::string KafkaBroker::Kafka3Version() {
  return FERRY_KAFKA3_VERSION;
}

std::string KafkaBroker::NewClusterId() {
  return ::ferry::testing::NewClusterId();
}

Result<std::unique_ptr<KafkaBroker>> KafkaBroker::Start(Options options) {
  FERRY_ASSIGN_OR_RETURN(std::string libs, FindLibs(options));
  FERRY_ASSIGN_OR_RETURN(
      std::string java,
      FindProgram("java", {"/usr/lib/jvm/java-17-openjdk-amd64/bin/java"},
                  "Debian package openjdk-17-jre-headless; `make setup` installs it"));
  std::string version = JarVersion(libs);
  // The CONTROLLER port, and one per security listener.
  const size_t more = options.security ? 5 : 1;
  return StartOnFreePort<KafkaBroker>(
      "kafka", "Address already in use",
      [&](std::string dir, int port) {
        // A cluster's node: the ports the cluster picked (the other nodes' configurations name
        // them); its own port race is the cluster's to retry.
        if (options.port != 0) {
          std::vector<int> given(more, -1);
          given[0] = options.controller_port;
          return std::unique_ptr<KafkaBroker>(new KafkaBroker(
              options, java, libs, version, std::move(dir), options.port, std::move(given)));
        }
        Result<std::vector<int>> ports = FreePorts(more, port);
        // Without ports the start fails in WriteConfig, naming the reason.
        return std::unique_ptr<KafkaBroker>(
            new KafkaBroker(options, java, libs, version, std::move(dir), port,
                            ports.ok() ? *ports : std::vector<int>(more, -1)));
      },
      [](KafkaBroker& broker) { return broker.FirstStart(); });
}

Result<KafkaBroker*> KafkaBroker::Shared() {
  return Shared(Options{});
}

Result<KafkaBroker*> KafkaBroker::Shared(const Options& options) {
  return SharedServer<KafkaBroker>("Kafka broker", [&] { return Start(options); });
}

KafkaBroker::KafkaBroker(Options options, std::string java, std::string libs, std::string version,
                         std::string dir, int port, std::vector<int> more_ports)
    : options_(std::move(options)),
      java_(std::move(java)),
      libs_(std::move(libs)),
      version_(std::move(version)),
      dir_(std::move(dir)),
      log_path_(dir_ + "/server.log"),
      port_(port),
      controller_port_(more_ports.at(0)),
      secure_ports_(more_ports.begin() + 1, more_ports.end()) {}

KafkaBroker::~KafkaBroker() {
  Kill9().IgnoreError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string KafkaBroker::bootstrap() const {
  return "127.0.0.1:" + std::to_string(port_);
}

std::string KafkaBroker::bootstrap(Listener listener) const {
  const size_t index = static_cast<size_t>(listener);
  if (index == 0 || index > secure_ports_.size()) {
    return bootstrap();
  }
  return "127.0.0.1:" + std::to_string(secure_ports_[index - 1]);
}

Status KafkaBroker::FirstStart() {
  if (port_ <= 0 || controller_port_ <= 0) {
    return Unavailable("Kafka broker: no free loopback ports");
  }
  if (options_.security) {
    FERRY_RETURN_IF_ERROR(MakeTls());
  }
  FERRY_RETURN_IF_ERROR(WriteConfig());
  FERRY_RETURN_IF_ERROR(Format());
  return Spawn(options_.wait_until_ready);
}

Status KafkaBroker::MakeTls() {
  const std::string tls = dir_ + "/tls";
  std::error_code ec;
  std::filesystem::create_directories(tls, ec);
  if (ec) {
    return IOError("mkdir {}: {}", tls, ec.message());
  }
  FERRY_ASSIGN_OR_RETURN(TestCa ca, TestCa::Create(tls, "ferry"));
  FERRY_ASSIGN_OR_RETURN(TestCa::Files server, ca.IssueServer("broker"));
  // Kafka's PEM keystore: the private key (unencrypted PKCS#8) and then the certificate chain.
  FERRY_ASSIGN_OR_RETURN(std::string key, ReadWhole(server.key));
  FERRY_ASSIGN_OR_RETURN(std::string cert, ReadWhole(server.cert));
  std::string keystore = key + cert;
  FERRY_RETURN_IF_ERROR(WriteFile(tls + "/broker-keystore.pem", keystore));
  ca_ = std::move(ca);
  return Status::OK();
}

Status KafkaBroker::WriteConfig() const {
  const std::string host = "127.0.0.1:";
  const std::string controller = host + std::to_string(controller_port_);
  std::string listeners = "PLAINTEXT://" + bootstrap();
  std::string map = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT";
  if (options_.security) {
    for (int port : secure_ports_) {
      if (port <= 0) {
        return Unavailable("Kafka broker: no free loopback ports");
      }
    }
    listeners += ",SASL_PLAINTEXT://" + bootstrap(Listener::kSaslPlaintext) + ",SSL://" +
                 bootstrap(Listener::kSsl) + ",MTLS://" + bootstrap(Listener::kMutualTls) +
                 ",SASL_SSL://" + bootstrap(Listener::kSaslSsl);
    map += ",SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_SSL:SASL_SSL";
  }
  std::string text = fmt::format(
      "process.roles=broker,controller\n"
      "node.id=1\n"
      "controller.quorum.voters=1@{1}\n"
      "listeners={0},CONTROLLER://{1}\n"
      "advertised.listeners={0}\n"
      "controller.listener.names=CONTROLLER\n"
      "inter.broker.listener.name=PLAINTEXT\n"
      "listener.security.protocol.map={3}\n"
      "log.dirs={2}/data\n",
      listeners, controller, dir_, map);
  if (options_.security) {
    text += SecurityProperties(dir_ + "/tls", options_.sasl_users);
  }
  // One broker: every internal topic with one replica and one partition (a consumer group's
  // first FindCoordinator would otherwise create the 50 partitions of __consumer_offsets).
  text +=
      "num.partitions=1\n"
      "default.replication.factor=1\n"
      "min.insync.replicas=1\n"
      "offsets.topic.replication.factor=1\n"
      "offsets.topic.num.partitions=1\n"
      "transaction.state.log.replication.factor=1\n"
      "transaction.state.log.min.isr=1\n"
      "transaction.state.log.num.partitions=1\n"
      "share.coordinator.state.topic.replication.factor=1\n"
      "share.coordinator.state.topic.min.isr=1\n"
      "group.initial.rebalance.delay.ms=0\n"
      "auto.create.topics.enable=false\n"
      // After a SIGKILL the restarted controller holds the old broker registration until its
      // session times out (9 s by default) and refuses the new one (DUPLICATE_BROKER_REGISTRATION).
      "broker.heartbeat.interval.ms=500\n"
      "broker.session.timeout.ms=3000\n"
      // Fewer threads than a production broker: two cores shared with the tests.
      "num.network.threads=2\n"
      "num.io.threads=2\n"
      "background.threads=2\n"
      "num.recovery.threads.per.data.dir=1\n"
      "log.cleaner.threads=1\n"
      // Compaction and retention act within seconds when a topic's own settings ask for it.
      "log.retention.check.interval.ms=1000\n"
      "log.cleaner.backoff.ms=1000\n";
  for (const std::string& line : options_.properties) {
    text += line + "\n";
  }
  FERRY_RETURN_IF_ERROR(WriteFile(dir_ + "/server.properties", text));
  FERRY_RETURN_IF_ERROR(WriteFile(dir_ + "/log4j2.properties", Log4j2Config("INFO")));
  FERRY_RETURN_IF_ERROR(WriteFile(dir_ + "/log4j.properties", Log4j1Config("INFO")));
  FERRY_RETURN_IF_ERROR(WriteFile(dir_ + "/tool-log4j2.properties", Log4j2Config("WARN")));
  return WriteFile(dir_ + "/tool-log4j.properties", Log4j1Config("WARN"));
}

std::vector<std::string> KafkaBroker::JavaCommand(const std::string& main_class,
                                                  const std::vector<std::string>& args) const {
  const bool tool = main_class != "kafka.Kafka";
  const std::string prefix = dir_ + (tool ? "/tool-" : "/");
  // Serial GC and the C1 compiler only: less memory and less CPU at start on two shared cores.
  std::vector<std::string> cmd = {java_,
                                  "-Xmx" + (tool ? std::string("128m") : options_.heap),
                                  "-Xms32m",
                                  "-XX:+UseSerialGC",
                                  "-XX:TieredStopAtLevel=1",
                                  "-XX:-UsePerfData",
                                  "-Djava.awt.headless=true",
                                  "-Dlog4j2.configurationFile=" + prefix + "log4j2.properties",
                                  "-Dlog4j.configuration=file:" + prefix + "log4j.properties",
                                  "-cp",
                                  libs_ + "/*",
                                  main_class};
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

Status KafkaBroker::Format() const {
  std::vector<std::string> args = {
      "format", "-t", options_.cluster_id.empty() ? NewClusterId() : options_.cluster_id, "-c",
      dir_ + "/server.properties"};
  if (options_.security) {
    for (const auto& [name, password] : options_.sasl_users) {
      for (const char* mechanism : {"SCRAM-SHA-256", "SCRAM-SHA-512"}) {
        args.push_back("--add-scram");
        args.push_back(fmt::format("{}=[name={},password={}]", mechanism, name, password));
      }
    }
  }
  std::vector<std::string> cmd = JavaCommand("kafka.tools.StorageTool", args);
  FERRY_ASSIGN_OR_RETURN(ProgramOutput out, RunProgram(cmd, milliseconds(120000)));
  if (out.exit_code != 0) {
    return Unavailable("Kafka {} StorageTool format exited with {}:\n{}{}", version_, out.exit_code,
                       out.out, out.err);
  }
  return Status::OK();
}

Status KafkaBroker::Spawn(bool wait) {
  std::vector<std::string> cmd = JavaCommand("kafka.Kafka", {dir_ + "/server.properties"});
  spawned_at_ = steady_clock::now();
  FERRY_ASSIGN_OR_RETURN(process_, Subprocess::Start(cmd, log_path_));
  pid_ = process_.pid();
  stopping_ = false;
  return wait ? WaitUntilReady() : Status::OK();
}

Status KafkaBroker::WaitUntilReady() {
  Status ready = WaitReady();
  last_start_time_ = std::chrono::duration_cast<milliseconds>(steady_clock::now() - spawned_at_);
  return ready;
}

Status KafkaBroker::WaitReady() {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  const auto deadline = steady_clock::now() + options_.ready_timeout;
  while (steady_clock::now() < deadline) {
    if (!process_.Alive()) {
      std::optional<int> code = process_.TryWait();
      pid_ = -1;
      return Unavailable("Kafka broker {} on {} exited during start-up ({}); log:\n{}", version_,
                         bootstrap(), code ? std::to_string(*code) : "?", Log());
    }
    if (MetadataAnswers(client.get())) {
      return Status::OK();
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  Kill9().IgnoreError();
  return Unavailable("Kafka broker {} on {} did not answer metadata within {} ms; log:\n{}",
                     version_, bootstrap(), options_.ready_timeout.count(), Log());
}

bool KafkaBroker::Alive() const {
  return process_.Alive();
}

Result<int64_t> KafkaBroker::RssBytes() const {
  const pid_t pid = pid_;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return int64_t{std::stoll(line.substr(6))} * 1024;
    }
  }
  return Unavailable("no VmRSS for the Kafka broker (pid {})", pid);
}

Status KafkaBroker::Kill9() {
  stopping_ = true;
  Status s = process_.Kill();
  pid_ = -1;
  return s;
}

Status KafkaBroker::Stop() {
  stopping_ = true;
  Status s = process_.Terminate(milliseconds(30000));
  pid_ = -1;
  return s;
}

Status KafkaBroker::Restart() {
  if (process_.Alive()) {
    return Internal("Kafka broker on {} is still running", bootstrap());
  }
  return Spawn(/*wait=*/true);
}

Result<std::vector<KafkaBroker::PartitionReplicas>> KafkaBroker::DescribeTopic(
    const std::string& name) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(client.get(), name.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(client.get(), 0, rkt, &md, 5000);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable("metadata of {} from {}: {}", name, bootstrap(), rd_kafka_err2str(err));
  }
  std::vector<PartitionReplicas> out;
  Status status = Unavailable("metadata from {} names no topic {}", bootstrap(), name);
  for (int t = 0; t < md->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& mt = md->topics[t];
    if (strcmp(mt.topic, name.c_str()) != 0) {
      continue;
    }
    if (mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status =
          Unavailable("metadata of {} from {}: {}", name, bootstrap(), rd_kafka_err2str(mt.err));
      continue;
    }
    status = Status::OK();
    out.resize(static_cast<size_t>(mt.partition_cnt));
    for (int p = 0; p < mt.partition_cnt; ++p) {
      const rd_kafka_metadata_partition_t& mp = mt.partitions[p];
      if (mp.id < 0 || mp.id >= mt.partition_cnt) {
        continue;
      }
      PartitionReplicas& r = out[static_cast<size_t>(mp.id)];
      r.leader = mp.leader;
      r.replicas.assign(mp.replicas, mp.replicas + mp.replica_cnt);
      r.in_sync.assign(mp.isrs, mp.isrs + mp.isr_cnt);
    }
  }
  rd_kafka_metadata_destroy(md);
  FERRY_RETURN_IF_ERROR(status);
  return out;
}

std::string KafkaBroker::Log(int lines) const {
  return TailOfFile(log_path_, lines);
}

std::optional<std::string> KafkaBroker::ExitReport() const {
  const pid_t pid = pid_;
  if (pid <= 0 || stopping_) {
    return std::nullopt;
  }
  std::optional<std::string> how = DescribeExit(pid);
  if (!how) {
    return std::nullopt;
  }
  return fmt::format("Kafka broker {} on {} (pid {}) {}; the end of its log:\n{}", version_,
                     bootstrap(), pid, *how, Log(40));
}

}  // namespace ferry::testing
