#include "ferry/app/mock_kafka_command.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "ferry/app/logging.h"
#include "ferry/base/log.h"
#include "ferry/base/status.h"
#include "ferry/source/kafka/mock_cluster.h"

namespace ferry::app {
namespace {

using source::kafka::MockCluster;

constexpr std::string_view kControlHelp = R"(
Prints the bootstrap servers ("127.0.0.1:PORT,...") as the first line on stdout, then serves until
SIGTERM or SIGINT (exit 0). The cluster lives in this process's memory: keep it running while
clients use it. librdkafka's mock keeps at most 5 MiB per partition and evicts older messages.

Control commands, one per line on stdin; each answers one line on stdout, "ok" or "error: ...":
  topic NAME PARTITIONS [REPLICAS]   create a topic
  down BROKER|all                    disconnect clients, refuse connections (leaders stay)
  up BROKER|all                      accept connections again
  rtt BROKER|all MS                  delay every response by MS milliseconds
  leader TOPIC PARTITION BROKER      move a partition's leader (-1: no leader)
  errors API COUNT CODE              fail the next COUNT requests of API (Fetch, OffsetCommit,
                                     Produce, Metadata, JoinGroup, ... or a number) with CODE
                                     (NOT_LEADER_FOR_PARTITION, _TRANSPORT = disconnect, ...)
  clear-errors API                   forget pending injected errors of API
  topic-error TOPIC CODE             make Metadata report CODE for TOPIC (NO_ERROR clears)
  coordinator GROUP BROKER           move the group coordinator of GROUP
  bootstrap                          answer "ok SERVERS"
  quit                               exit 0
Brokers are numbered 1..--brokers. librdkafka 2.0.2's mock cannot add partitions to a topic.)";

struct MockKafkaOptions {
  int brokers = 3;
  std::vector<std::string> topics;
  std::string bootstrap_file;
  bool exit_on_eof = false;
  std::string debug;
};

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
      ++i;
    }
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
      ++i;
    }
    if (i > start) {
      words.emplace_back(line.substr(start, i - start));
    }
  }
  return words;
}

template <typename T>
Result<T> Number(std::string_view s, std::string_view what) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    return InvalidArgument("{} '{}' is not a number", what, s);
  }
  return value;
}

Result<int32_t> Broker(std::string_view s) {
  if (s == "all") {
    return -1;
  }
  return Number<int32_t>(s, "broker");
}

// "NAME[:PARTITIONS[:REPLICAS]]"
Status CreateTopicFromSpec(MockCluster& mc, std::string_view spec) {
  std::string name(spec.substr(0, spec.find(':')));
  int partitions = 1;
  int replicas = 1;
  if (size_t colon = spec.find(':'); colon != std::string_view::npos) {
    std::string_view rest = spec.substr(colon + 1);
    size_t second = rest.find(':');
    FERRY_ASSIGN_OR_RETURN(partitions, Number<int>(rest.substr(0, second), "partition count"));
    if (second != std::string_view::npos) {
      FERRY_ASSIGN_OR_RETURN(replicas, Number<int>(rest.substr(second + 1), "replica count"));
    }
  }
  return mc.CreateTopic(name, partitions, replicas);
}

Status Execute(MockCluster& mc, const std::vector<std::string>& w, std::string* reply, bool* quit) {
  const std::string& cmd = w[0];
  const size_t n = w.size();
  auto usage = [&](std::string_view form) { return InvalidArgument("usage: {}", form); };
  if (cmd == "quit" || cmd == "exit") {
    *quit = true;
    return Status::OK();
  }
  if (cmd == "bootstrap") {
    *reply = mc.bootstrap_servers();
    return Status::OK();
  }
  if (cmd == "topic" || cmd == "create-topic") {
    if (n < 3 || n > 4) {
      return usage("topic NAME PARTITIONS [REPLICAS]");
    }
    FERRY_ASSIGN_OR_RETURN(int partitions, Number<int>(w[2], "partition count"));
    int replicas = 1;
    if (n == 4) {
      FERRY_ASSIGN_OR_RETURN(replicas, Number<int>(w[3], "replica count"));
    }
    return mc.CreateTopic(w[1], partitions, replicas);
  }
  if (cmd == "down" || cmd == "up") {
    if (n != 2) {
      return usage(cmd + " BROKER|all");
    }
    FERRY_ASSIGN_OR_RETURN(int32_t broker, Broker(w[1]));
    return cmd == "down" ? mc.SetBrokerDown(broker) : mc.SetBrokerUp(broker);
  }
  if (cmd == "rtt") {
    if (n != 3) {
      return usage("rtt BROKER|all MS");
    }
    FERRY_ASSIGN_OR_RETURN(int32_t broker, Broker(w[1]));
    FERRY_ASSIGN_OR_RETURN(int ms, Number<int>(w[2], "rtt"));
    return mc.SetBrokerRtt(broker, ms);
  }
  if (cmd == "leader") {
    if (n != 4) {
      return usage("leader TOPIC PARTITION BROKER");
    }
    FERRY_ASSIGN_OR_RETURN(int32_t partition, Number<int32_t>(w[2], "partition"));
    FERRY_ASSIGN_OR_RETURN(int32_t broker, Number<int32_t>(w[3], "broker"));
    return mc.SetPartitionLeader(w[1], partition, broker);
  }
  if (cmd == "errors") {
    if (n != 4) {
      return usage("errors API COUNT CODE");
    }
    FERRY_ASSIGN_OR_RETURN(int16_t api, source::kafka::ParseApiKey(w[1]));
    FERRY_ASSIGN_OR_RETURN(int count, Number<int>(w[2], "count"));
    FERRY_ASSIGN_OR_RETURN(rd_kafka_resp_err_t code, source::kafka::ParseErrorCode(w[3]));
    if (count < 1 || count > 100000) {
      return InvalidArgument("count {} is outside 1..100000", count);
    }
    std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(count), code);
    mc.PushRequestErrors(api, errors);
    return Status::OK();
  }
  if (cmd == "clear-errors") {
    if (n != 2) {
      return usage("clear-errors API");
    }
    FERRY_ASSIGN_OR_RETURN(int16_t api, source::kafka::ParseApiKey(w[1]));
    mc.ClearRequestErrors(api);
    return Status::OK();
  }
  if (cmd == "topic-error") {
    if (n != 3) {
      return usage("topic-error TOPIC CODE");
    }
    FERRY_ASSIGN_OR_RETURN(rd_kafka_resp_err_t code, source::kafka::ParseErrorCode(w[2]));
    mc.SetTopicError(w[1], code);
    return Status::OK();
  }
  if (cmd == "coordinator") {
    if (n != 3) {
      return usage("coordinator GROUP BROKER");
    }
    FERRY_ASSIGN_OR_RETURN(int32_t broker, Number<int32_t>(w[2], "broker"));
    return mc.SetGroupCoordinator(w[1], broker);
  }
  return InvalidArgument("unknown command '{}' (see ferry mock-kafka --help)", cmd);
}

// Runs one control line; prints "ok" or "error: ...".
void Serve(MockCluster& mc, std::string_view line, bool* quit) {
  std::vector<std::string> words = Words(line);
  if (words.empty() || words[0].starts_with('#')) {
    return;
  }
  std::string reply;
  Status st = Execute(mc, words, &reply, quit);
  if (st.ok()) {
    if (reply.empty()) {
      std::printf("ok\n");
    } else {
      std::printf("ok %s\n", reply.c_str());
    }
  } else {
    std::printf("error: %s\n", st.message().c_str());
  }
  std::fflush(stdout);
  FERRY_LOG_INFO("mock-kafka: {} -> {}", line, st.ok() ? "ok" : st.message());
}

Status WriteBootstrapFile(const std::string& path, const std::string& servers) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    return ErrnoStatus(errno, "open", tmp);
  }
  const bool written = std::fprintf(f, "%s\n", servers.c_str()) > 0;
  if (std::fclose(f) != 0 || !written) {
    return IOError("writing {}", tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return ErrnoStatus(errno, "rename", path);
  }
  return Status::OK();
}

// Waits for signals and control lines until a signal, `quit`, or (with exit_on_eof) stdin EOF.
void ServeUntilStopped(MockCluster& mc, int signal_fd, bool exit_on_eof) {
  std::string buffer;
  bool stdin_open = true;
  bool quit = false;
  while (!quit) {
    pollfd fds[2] = {{signal_fd, POLLIN, 0}, {stdin_open ? 0 : -1, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      FERRY_LOG_ERROR("mock-kafka: poll: {}", std::strerror(errno));
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) {
      signalfd_siginfo info{};
      if (read(signal_fd, &info, sizeof(info)) == sizeof(info)) {
        FERRY_LOG_INFO("mock-kafka: signal {}, stopping", info.ssi_signo);
      }
      return;
    }
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      char chunk[4096];
      ssize_t got = read(0, chunk, sizeof(chunk));
      if (got <= 0) {
        stdin_open = false;
        if (exit_on_eof) {
          FERRY_LOG_INFO("mock-kafka: stdin closed, stopping");
          return;
        }
        continue;
      }
      buffer.append(chunk, static_cast<size_t>(got));
      size_t eol;
      while (!quit && (eol = buffer.find('\n')) != std::string::npos) {
        Serve(mc, std::string_view(buffer).substr(0, eol), &quit);
        buffer.erase(0, eol + 1);
      }
    }
  }
}

int RunMockKafka(const MockKafkaOptions& o) {
  // librdkafka's debug lines are logged at debug level: shown only when asked for.
  LogOptions log;
  if (!o.debug.empty()) {
    log.level = "debug";
  }
  if (Status st = SetupLogging(log); !st.ok()) {
    std::fprintf(stderr, "ferry mock-kafka: %s\n", st.ToString().c_str());
    return 1;
  }
  // Block the stop signals before librdkafka starts its threads (they inherit the mask), so that
  // they reach only the signalfd.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  const int signal_fd = signalfd(-1, &stop, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::fprintf(stderr, "ferry mock-kafka: signalfd: %s\n", std::strerror(errno));
    return 1;
  }
  Result<std::unique_ptr<MockCluster>> mc = MockCluster::Create(o.brokers, o.debug);
  if (!mc.ok()) {
    std::fprintf(stderr, "ferry mock-kafka: %s\n", mc.status().ToString().c_str());
    return 1;
  }
  for (const std::string& spec : o.topics) {
    Status st = CreateTopicFromSpec(**mc, spec);
    if (!st.ok()) {
      std::fprintf(stderr, "ferry mock-kafka: --topic %s: %s\n", spec.c_str(),
                   st.ToString().c_str());
      return 2;
    }
  }
  std::printf("%s\n", (*mc)->bootstrap_servers().c_str());
  std::fflush(stdout);
  if (!o.bootstrap_file.empty()) {
    Status st = WriteBootstrapFile(o.bootstrap_file, (*mc)->bootstrap_servers());
    if (!st.ok()) {
      std::fprintf(stderr, "ferry mock-kafka: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  FERRY_LOG_INFO("mock-kafka: {} broker(s) at {}", o.brokers, (*mc)->bootstrap_servers());
  ServeUntilStopped(**mc, signal_fd, o.exit_on_eof);
  if (!o.bootstrap_file.empty()) {
    std::remove(o.bootstrap_file.c_str());
  }
  mc->reset();
  close(signal_fd);
  return 0;
}

}  // namespace

void RegisterMockKafkaCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<MockKafkaOptions>();
  CLI::App* cmd = app.add_subcommand("mock-kafka", "Run an embedded mock Kafka cluster");
  cmd->footer(std::string(kControlHelp));
  cmd->add_option("--brokers", options->brokers, "Number of brokers (ids 1..N)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--topic", options->topics,
                  "Create a topic: NAME[:PARTITIONS[:REPLICAS]] (repeatable; default 1 partition)");
  cmd->add_option("--bootstrap-file", options->bootstrap_file,
                  "Also write the bootstrap servers to this file (removed on exit)");
  cmd->add_flag("--exit-on-eof", options->exit_on_eof,
                "Exit when stdin closes (so a test's cluster never outlives the test)");
  cmd->add_option("--debug", options->debug,
                  "librdkafka debug contexts for the cluster's log on stderr, e.g. mock,cgrp "
                  "(the group coordinator's states)");
  cmd->callback([options, exit_code] { *exit_code = RunMockKafka(*options); });
}

}  // namespace ferry::app
