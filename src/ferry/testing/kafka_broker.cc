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

#include "ferry/testing/loopback.h"

namespace ferry::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr char kSetupHint[] = "run `make setup-kafka` (tests/kafka/pom.xml, tools/setup_kafka.sh)";

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

// A producer handle (never used to produce) for metadata and admin requests.
Result<RdKafkaPtr> NewClient(const std::string& bootstrap) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, std::string>>{{"bootstrap.servers", bootstrap},
                                                        {"client.id", "ferry-test-kafka-broker"},
                                                        {"log_level", "0"},
                                                        {"reconnect.backoff.max.ms", "200"}}) {
    if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Internal("librdkafka {}: {}", key, err);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Internal("rd_kafka_new: {}", err);
  }
  return RdKafkaPtr(rk);
}

// Whether a metadata request answers and names at least one broker; with `topic`, whether that
// topic exists with `partitions` partitions, each with a leader.
bool MetadataAnswers(rd_kafka_t* rk, const char* topic = nullptr, int partitions = 0) {
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 1, nullptr, &md, 2000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return false;
  }
  bool ok = md->broker_cnt > 0;
  if (topic != nullptr) {
    ok = false;
    for (int t = 0; t < md->topic_cnt; ++t) {
      const rd_kafka_metadata_topic_t& mt = md->topics[t];
      if (strcmp(mt.topic, topic) != 0 || mt.err != RD_KAFKA_RESP_ERR_NO_ERROR ||
          mt.partition_cnt != partitions) {
        continue;
      }
      ok = true;
      for (int p = 0; p < mt.partition_cnt; ++p) {
        ok = ok && mt.partitions[p].leader >= 0 &&
             mt.partitions[p].err == RD_KAFKA_RESP_ERR_NO_ERROR;
      }
    }
  }
  rd_kafka_metadata_destroy(md);
  return ok;
}

// Runs one admin request (`send` enqueues it on the queue it is given) and waits up to 60 s for
// its result event, checked for a request-level error. The caller reads the per-item results
// from the event and destroys it.
template <typename Send>
Result<rd_kafka_event_t*> AdminRequest(rd_kafka_t* rk, rd_kafka_admin_op_t op,
                                       const std::string& what, const std::string& bootstrap,
                                       Send send) {
  char err[512];
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, op);
  rd_kafka_AdminOptions_set_operation_timeout(options, 30000, err, sizeof(err));
  send(options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 60000);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_queue_destroy(queue);
  if (event == nullptr) {
    return Unavailable("{} on {}: no answer within 60 s", what, bootstrap);
  }
  if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Status status =
        Unavailable("{} on {}: {}", what, bootstrap, rd_kafka_event_error_string(event));
    rd_kafka_event_destroy(event);
    return status;
  }
  return event;
}

// The first per-topic error of a CreatePartitions or DeleteTopics result.
Status TopicResults(const rd_kafka_topic_result_t** results, size_t n, const std::string& what,
                    const std::string& bootstrap) {
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* message = rd_kafka_topic_result_error_string(results[i]);
      return Unavailable("{} on {}: {}", what, bootstrap,
                         message != nullptr ? message : rd_kafka_err2str(code));
    }
  }
  return Status::OK();
}

// Whether metadata for all topics names `topic`.
bool TopicListed(rd_kafka_t* rk, const std::string& topic) {
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 1, nullptr, &md, 2000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return true;  // unknown: ask again
  }
  bool listed = false;
  for (int t = 0; t < md->topic_cnt; ++t) {
    listed = listed || (topic == md->topics[t].topic &&
                        md->topics[t].err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  }
  rd_kafka_metadata_destroy(md);
  return listed;
}

// A KRaft cluster id: 16 random bytes in unpadded URL-safe base64 (Kafka's Uuid.toString).
std::string NewClusterId() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 21; ++i) {
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
    std::string cache;
    if (const char* xdg = getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
      cache = xdg;
    } else if (const char* user_home = getenv("HOME"); user_home != nullptr) {
      cache = std::string(user_home) + "/.cache";
    }
    std::string version = options.version;
    if (const char* env = getenv("FERRY_KAFKA_VERSION"); version.empty() && env != nullptr) {
      version = env;
    }
    if (version.empty()) {
      version = KafkaBroker::DefaultVersion();
    }
    home = cache + "/ferry/kafka-" + version;
  }
  std::string libs = home + "/libs";
  if (JarVersion(libs).empty()) {
    return NotFound("no Apache Kafka jars in {} (FERRY_KAFKA_HOME or the cache): {}", libs,
                    kSetupHint);
  }
  return libs;
}

Result<std::pair<int, int>> TwoFreePorts() {
  FERRY_ASSIGN_OR_RETURN(int a, ListenOnLoopback(0));
  Result<int> b = ListenOnLoopback(0);
  Result<int> port_a = LocalPort(a);
  close(a);
  if (!b.ok()) {
    return b.status();
  }
  Result<int> port_b = LocalPort(*b);
  close(*b);
  FERRY_RETURN_IF_ERROR(port_a.status());
  FERRY_RETURN_IF_ERROR(port_b.status());
  return std::make_pair(*port_a, *port_b);
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

}  // namespace

std::string KafkaBroker::DefaultVersion() {
  return FERRY_KAFKA_VERSION;
}

std::string KafkaBroker::Kafka3Version() {
  return FERRY_KAFKA3_VERSION;
}

Result<std::unique_ptr<KafkaBroker>> KafkaBroker::Start(Options options) {
  FERRY_ASSIGN_OR_RETURN(std::string libs, FindLibs(options));
  FERRY_ASSIGN_OR_RETURN(
      std::string java,
      FindProgram("java", {"/usr/lib/jvm/java-17-openjdk-amd64/bin/java"},
                  "Debian package openjdk-17-jre-headless; `make setup` installs it"));
  std::string version = JarVersion(libs);
  Status last;
  for (int attempt = 1; attempt <= kServerStartAttempts; ++attempt) {
    char tmpl[] = "/tmp/ferry-kafka-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return ErrnoStatus(errno, "mkdtemp", tmpl);
    }
    Result<std::pair<int, int>> ports = TwoFreePorts();
    if (!ports.ok()) {
      std::filesystem::remove_all(tmpl);
      return ports.status();
    }
    std::unique_ptr<KafkaBroker> broker(
        new KafkaBroker(options, java, libs, version, tmpl, ports->first, ports->second));
    last = broker->WriteConfig();
    if (last.ok()) {
      last = broker->Format();
    }
    if (last.ok()) {
      last = broker->Spawn();
    }
    if (last.ok()) {
      return broker;
    }
    if (!broker->PortRace()) {
      return last;
    }
    // A port was taken between picking it and the JVM binding it: again with new ports.
  }
  return last.WithContext("Kafka broker: {} attempts lost a port to another process",
                          kServerStartAttempts);
}

Result<KafkaBroker*> KafkaBroker::Shared() {
  static std::mutex mu;
  static std::unique_ptr<KafkaBroker> broker;  // destroyed at exit: JVM killed, dir removed
  static Status failure;
  static bool started = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!started) {
    started = true;
    Result<std::unique_ptr<KafkaBroker>> result = Start();
    if (result.ok()) {
      broker = std::move(result).value();
    } else {
      failure = result.status();
    }
  }
  if (!failure.ok()) {
    return failure;
  }
  if (!broker->Alive()) {
    return Unavailable("the shared Kafka broker at {} has died; log:\n{}", broker->bootstrap(),
                       broker->Log());
  }
  return broker.get();
}

KafkaBroker::KafkaBroker(Options options, std::string java, std::string libs, std::string version,
                         std::string dir, int port, int controller_port)
    : options_(std::move(options)),
      java_(std::move(java)),
      libs_(std::move(libs)),
      version_(std::move(version)),
      dir_(std::move(dir)),
      log_path_(dir_ + "/server.log"),
      port_(port),
      controller_port_(controller_port) {}

KafkaBroker::~KafkaBroker() {
  Kill9().IgnoreError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string KafkaBroker::bootstrap() const {
  return "127.0.0.1:" + std::to_string(port_);
}

Status KafkaBroker::WriteConfig() const {
  const std::string listener = "127.0.0.1:" + std::to_string(port_);
  const std::string controller = "127.0.0.1:" + std::to_string(controller_port_);
  std::string text = fmt::format(
      "process.roles=broker,controller\n"
      "node.id=1\n"
      "controller.quorum.voters=1@{1}\n"
      "listeners=PLAINTEXT://{0},CONTROLLER://{1}\n"
      "advertised.listeners=PLAINTEXT://{0}\n"
      "controller.listener.names=CONTROLLER\n"
      "inter.broker.listener.name=PLAINTEXT\n"
      "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
      "log.dirs={2}/data\n",
      listener, controller, dir_);
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
  std::vector<std::string> cmd =
      JavaCommand("kafka.tools.StorageTool",
                  {"format", "-t", NewClusterId(), "-c", dir_ + "/server.properties"});
  FERRY_ASSIGN_OR_RETURN(ProgramOutput out, RunProgram(cmd, milliseconds(120000)));
  if (out.exit_code != 0) {
    return Unavailable("Kafka {} StorageTool format exited with {}:\n{}{}", version_, out.exit_code,
                       out.out, out.err);
  }
  return Status::OK();
}

Status KafkaBroker::Spawn() {
  std::vector<std::string> cmd = JavaCommand("kafka.Kafka", {dir_ + "/server.properties"});
  const auto start = steady_clock::now();
  FERRY_ASSIGN_OR_RETURN(process_, Subprocess::Start(cmd, log_path_));
  pid_ = process_.pid();
  stopping_ = false;
  Status ready = WaitReady();
  last_start_time_ = std::chrono::duration_cast<milliseconds>(steady_clock::now() - start);
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

bool KafkaBroker::PortRace() const {
  std::ifstream in(log_path_);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find("Address already in use") != std::string::npos;
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

Status KafkaBroker::CreateTopic(const std::string& name, int partitions,
                                const std::map<std::string, std::string>& configs) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  char err[512];
  rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(name.c_str(), partitions, 1, err, sizeof(err));
  if (topic == nullptr) {
    return InvalidArgument("topic {}: {}", name, err);
  }
  for (const auto& [key, value] : configs) {
    rd_kafka_NewTopic_set_config(topic, key.c_str(), value.c_str());
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client.get());
  rd_kafka_AdminOptions_t* options =
      rd_kafka_AdminOptions_new(client.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(options, 30000, err, sizeof(err));
  rd_kafka_CreateTopics(client.get(), &topic, 1, options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 60000);
  Status status;
  if (event == nullptr) {
    status = Unavailable("CreateTopics {} on {}: no answer within 60 s", name, bootstrap());
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = Unavailable("CreateTopics {} on {}: {}", name, bootstrap(),
                         rd_kafka_event_error_string(event));
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &n);
    for (size_t i = 0; i < n; ++i) {
      rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
      const char* message = rd_kafka_topic_result_error_string(results[i]);
      if (code == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        status = AlreadyExists("topic {} exists on {}", name, bootstrap());
      } else if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        status = Unavailable("CreateTopics {} on {}: {}", name, bootstrap(),
                             message != nullptr ? message : rd_kafka_err2str(code));
      }
    }
  }
  if (event != nullptr) {
    rd_kafka_event_destroy(event);
  }
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(topic);
  FERRY_RETURN_IF_ERROR(status);
  // The controller has committed the topic; the broker learns its leadership a moment later.
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (!MetadataAnswers(client.get(), name.c_str(), partitions)) {
    if (steady_clock::now() > deadline) {
      return Unavailable("topic {} on {}: partitions without a leader after 30 s", name,
                         bootstrap());
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status::OK();
}

Status KafkaBroker::AddPartitions(const std::string& topic, int total) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  char err[512];
  rd_kafka_NewPartitions_t* request =
      rd_kafka_NewPartitions_new(topic.c_str(), static_cast<size_t>(total), err, sizeof(err));
  if (request == nullptr) {
    return InvalidArgument("partitions of {}: {}", topic, err);
  }
  const std::string what = fmt::format("CreatePartitions {} to {}", topic, total);
  Result<rd_kafka_event_t*> event =
      AdminRequest(client.get(), RD_KAFKA_ADMIN_OP_CREATEPARTITIONS, what, bootstrap(),
                   [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                     rd_kafka_CreatePartitions(client.get(), &request, 1, options, queue);
                   });
  rd_kafka_NewPartitions_destroy(request);
  FERRY_RETURN_IF_ERROR(event.status());
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(*event), &n);
  Status status = TopicResults(results, n, what, bootstrap());
  rd_kafka_event_destroy(*event);
  FERRY_RETURN_IF_ERROR(status);
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (!MetadataAnswers(client.get(), topic.c_str(), total)) {
    if (steady_clock::now() > deadline) {
      return Unavailable("topic {} on {}: not {} partitions with leaders after 30 s", topic,
                         bootstrap(), total);
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status::OK();
}

Status KafkaBroker::DeleteTopic(const std::string& topic) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  rd_kafka_DeleteTopic_t* request = rd_kafka_DeleteTopic_new(topic.c_str());
  const std::string what = "DeleteTopics " + topic;
  Result<rd_kafka_event_t*> event =
      AdminRequest(client.get(), RD_KAFKA_ADMIN_OP_DELETETOPICS, what, bootstrap(),
                   [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                     rd_kafka_DeleteTopics(client.get(), &request, 1, options, queue);
                   });
  rd_kafka_DeleteTopic_destroy(request);
  FERRY_RETURN_IF_ERROR(event.status());
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(*event), &n);
  Status status = TopicResults(results, n, what, bootstrap());
  rd_kafka_event_destroy(*event);
  FERRY_RETURN_IF_ERROR(status);
  const auto deadline = steady_clock::now() + milliseconds(30000);
  while (TopicListed(client.get(), topic)) {
    if (steady_clock::now() > deadline) {
      return Unavailable("topic {} on {}: still listed 30 s after its deletion", topic,
                         bootstrap());
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status::OK();
}

Result<int64_t> KafkaBroker::DeleteRecords(const std::string& topic, int32_t partition,
                                           int64_t before_offset) const {
  FERRY_ASSIGN_OR_RETURN(RdKafkaPtr client, NewClient(bootstrap()));
  rd_kafka_topic_partition_list_t* offsets = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(offsets, topic.c_str(), partition)->offset = before_offset;
  rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(offsets);
  rd_kafka_topic_partition_list_destroy(offsets);
  const std::string what =
      fmt::format("DeleteRecords {}/{} before {}", topic, partition, before_offset);
  Result<rd_kafka_event_t*> event =
      AdminRequest(client.get(), RD_KAFKA_ADMIN_OP_DELETERECORDS, what, bootstrap(),
                   [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
                     rd_kafka_DeleteRecords(client.get(), &request, 1, options, queue);
                   });
  rd_kafka_DeleteRecords_destroy(request);
  FERRY_RETURN_IF_ERROR(event.status());
  const rd_kafka_topic_partition_list_t* result =
      rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(*event));
  Result<int64_t> low = Unavailable("{} on {}: no partition in the answer", what, bootstrap());
  if (result != nullptr && result->cnt == 1) {
    const rd_kafka_topic_partition_t& e = result->elems[0];
    low = e.err == RD_KAFKA_RESP_ERR_NO_ERROR
              ? Result<int64_t>(e.offset)
              : Result<int64_t>(
                    Unavailable("{} on {}: {}", what, bootstrap(), rd_kafka_err2str(e.err)));
  }
  rd_kafka_event_destroy(*event);
  return low;
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
  return Spawn();
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
