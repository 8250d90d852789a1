// test_object_server: starts one of the tests' servers (object stores, the Kafka broker) by hand,
// for debugging and for measuring them (docs/testing-servers.md). Prints the start-up time, the
// servers' resident memory, and `export` lines that point ferry, the awscli or the Azure SDKs at
// it (for Kafka: the bootstrap servers); then runs until Ctrl-C (or at once stops with --exit),
// and cleans up as the tests do.
//
//   test_object_server radosgw|azurite|gcs|kafka|kafka-cluster [--exit] [--memstore-mib N]
//
// gcs: fake-gcs-server (FakeGcs, objects in memory); prints its pid (benchmarks read its CPU time
// from /proc) and `export STORAGE_EMULATOR_HOST=...`; buckets are created with
// `curl -X POST $STORAGE_EMULATOR_HOST/storage/v1/b -d '{"name":"BUCKET"}'`.
//
// --memstore-mib: radosgw's OSD capacity (memstore keeps every object in memory; default
// RadosGw::Options'), for benchmarks that write more than a test does.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/testing/azurite.h"
#include "ferry/testing/fake_gcs.h"
#include "ferry/testing/kafka_broker.h"
#include "ferry/testing/kafka_cluster.h"
#include "ferry/testing/radosgw.h"

namespace {

long RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return strtol(line.c_str() + 6, nullptr, 10);
    }
  }
  return 0;
}

void Report(std::string_view what, std::chrono::steady_clock::duration took,
            const std::vector<pid_t>& pids) {
  long rss = 0;
  std::string each;
  for (pid_t pid : pids) {
    rss += RssKb(pid);
    each += " " + std::to_string(RssKb(pid) / 1024);
  }
  printf("# %.*s up in %.2f s, RSS %ld MiB (per process:%s MiB)\n", static_cast<int>(what.size()),
         what.data(), std::chrono::duration<double>(took).count(), rss / 1024, each.c_str());
}

void WaitForSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  printf("# running; Ctrl-C stops it and removes its directory\n");
  fflush(stdout);
  int sig = 0;
  sigwait(&set, &sig);
}

}  // namespace

int main(int argc, char** argv) {
  bool exit_at_once = false;
  ferry::testing::RadosGw::Options rgw_options;
  const std::string_view which = argc < 2 ? "" : argv[1];
  bool usage = which != "radosgw" && which != "azurite" && which != "gcs" && which != "kafka" &&
               which != "kafka-cluster";
  for (int i = 2; i < argc && !usage; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--exit") {
      exit_at_once = true;
    } else if (arg == "--memstore-mib" && i + 1 < argc) {
      rgw_options.memstore_bytes = strtoll(argv[++i], nullptr, 10) << 20;
      usage = rgw_options.memstore_bytes <= 0;
    } else {
      usage = true;
    }
  }
  if (usage) {
    fprintf(stderr,
            "usage: %s radosgw|azurite|gcs|kafka|kafka-cluster [--exit] [--memstore-mib N]\n",
            argv[0]);
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  if (which == "kafka") {
    auto server = ferry::testing::KafkaBroker::Start();
    if (!server.ok()) {
      fprintf(stderr, "%s\n", server.status().ToString().c_str());
      return 1;
    }
    auto took = std::chrono::steady_clock::now() - start;
    const ferry::testing::KafkaBroker& s = **server;
    Report("Kafka " + s.version() + " (format and start)", took, {s.pid()});
    printf("# bootstrap servers (PLAINTEXT): %s; data and log (server.log) in %s\n",
           s.bootstrap().c_str(), s.dir().c_str());
    if (!exit_at_once) {
      WaitForSignal();
    }
  } else if (which == "kafka-cluster") {
    auto cluster = ferry::testing::KafkaCluster::Start();
    if (!cluster.ok()) {
      fprintf(stderr, "%s\n", cluster.status().ToString().c_str());
      return 1;
    }
    auto took = std::chrono::steady_clock::now() - start;
    ferry::testing::KafkaCluster& c = **cluster;
    std::vector<pid_t> pids;
    for (int i = 0; i < c.size(); ++i) {
      pids.push_back(c.node(i)->pid());
    }
    Report("Kafka " + c.node(0)->version() + " cluster of " + std::to_string(c.size()) +
               " (format and start)",
           took, pids);
    printf("# bootstrap servers (PLAINTEXT): %s\n", c.bootstrap().c_str());
    if (!exit_at_once) {
      WaitForSignal();
    }
  } else if (which == "radosgw") {
    auto server = ferry::testing::RadosGw::Start(rgw_options);
    if (!server.ok()) {
      fprintf(stderr, "%s\n", server.status().ToString().c_str());
      return 1;
    }
    auto took = std::chrono::steady_clock::now() - start;
    const ferry::testing::RadosGw& s = **server;
    Report("radosgw", took, s.pids());
    printf(
        "export AWS_ENDPOINT_URL=%s AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s "
        "AWS_REGION=%s AWS_ALLOW_HTTP=true\n# data and logs: %s\n",
        s.endpoint().c_str(), s.access_key().c_str(), s.secret_key().c_str(), s.region().c_str(),
        s.dir().c_str());
    if (!exit_at_once) {
      WaitForSignal();
    }
  } else if (which == "gcs") {
    auto server = ferry::testing::FakeGcs::Start();
    if (!server.ok()) {
      fprintf(stderr, "%s\n", server.status().ToString().c_str());
      return 1;
    }
    auto took = std::chrono::steady_clock::now() - start;
    const ferry::testing::FakeGcs& s = **server;
    Report(std::string("fake-gcs-server ") + ferry::testing::FakeGcs::Version(), took, {s.pid()});
    printf("export STORAGE_EMULATOR_HOST=%s\n# pid %d, log in %s\n", s.endpoint().c_str(),
           static_cast<int>(s.pid()), s.dir().c_str());
    if (!exit_at_once) {
      WaitForSignal();
    }
  } else {
    auto server = ferry::testing::Azurite::Start();
    if (!server.ok()) {
      fprintf(stderr, "%s\n", server.status().ToString().c_str());
      return 1;
    }
    auto took = std::chrono::steady_clock::now() - start;
    const ferry::testing::Azurite& s = **server;
    Report("azurite", took, {s.pid()});
    printf(
        "export AZURE_STORAGE_CONNECTION_STRING='%s' AZURE_STORAGE_ACCOUNT_NAME=%s "
        "AZURE_STORAGE_ACCOUNT_KEY=%s\n# endpoint %s, log in %s\n# pid %d\n",
        s.connection_string().c_str(), s.account().c_str(), s.account_key().c_str(),
        s.endpoint().c_str(), s.dir().c_str(), static_cast<int>(s.pid()));
    if (!exit_at_once) {
      WaitForSignal();
    }
  }
  return 0;
}
