#include "ferry/app/run_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ferry/app/logging.h"
#include "ferry/app/maintenance_scheduler.h"
#include "ferry/app/metrics_server.h"
#include "ferry/app/pipeline_factory.h"
#include "ferry/app/progress_reporter.h"
#include "ferry/app/routed_pipeline.h"
#include "ferry/app/table_location.h"
#include "ferry/base/failpoint.h"
#include "ferry/base/file.h"
#include "ferry/base/log.h"
#include "ferry/config/config.h"
#include "ferry/config/memory_budget.h"

namespace ferry::app {
namespace {

// Exit codes (documented in `ferry run --help` and docs/OPERATIONS.md).
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitAborted = 130;

// A `[[pipeline]]` ready to run: one table, or a router over many (routed_pipeline.h).
struct RunnablePipeline {
  std::unique_ptr<pipeline::Pipeline> single;
  std::unique_ptr<pipeline::Router> routed;

  Status Run(pipeline::StopSignal* stop) {
    return routed != nullptr ? routed->Run(stop) : single->Run(stop);
  }
};

struct RunArgs {
  std::string config;
  std::vector<std::string> pipelines;
  bool until_caught_up = false;
  std::string max_wait = "2m";
  std::vector<std::string> storage_options;
};

// The configuration, `--storage-option` flags applied over every pipeline's storage options.
Result<config::Config> LoadWithFlags(const std::string& path,
                                     const std::vector<std::string>& storage_flags) {
  FERRY_ASSIGN_OR_RETURN(storage::StorageOptions flags, StorageOptionsFromFlags(storage_flags));
  FERRY_ASSIGN_OR_RETURN(config::Config cfg, config::LoadConfig(path));
  for (config::PipelineConfig& p : cfg.pipelines) {
    p.storage = storage::MergeStorageOptions({&flags, &p.storage});
  }
  return cfg;
}

Result<config::Config> LoadAndSelect(const std::string& path, const std::vector<std::string>& only,
                                     const std::vector<std::string>& storage_flags) {
  FERRY_ASSIGN_OR_RETURN(config::Config cfg, LoadWithFlags(path, storage_flags));
  if (!only.empty()) {
    std::set<std::string> wanted(only.begin(), only.end());
    std::vector<config::PipelineConfig> kept;
    for (config::PipelineConfig& p : cfg.pipelines) {
      if (wanted.erase(p.id) != 0) {
        kept.push_back(std::move(p));
      }
    }
    if (!wanted.empty()) {
      return InvalidArgument("{}: no pipeline with id '{}'", path, *wanted.begin());
    }
    cfg.pipelines = std::move(kept);
    config::AssignMemory(&cfg);  // the budget is the process's: the kept pipelines share it
  }
  if (cfg.pipelines.empty()) {
    return InvalidArgument("{}: no [[pipeline]] to run", path);
  }
  return cfg;
}

// [metrics] linger_after_failure: the status page stays up to show why a pipeline failed, until
// the time is up or a signal comes.
void LingerAfterFailure(const std::string& url, std::chrono::milliseconds linger, int signal_fd) {
  FERRY_LOG_INFO("a pipeline failed: the status page stays up on {}/ for {} s (SIGTERM ends it)",
                 url, linger.count() / 1000);
  pollfd fd = {.fd = signal_fd, .events = POLLIN, .revents = 0};
  auto until = std::chrono::steady_clock::now() + linger;
  while (std::chrono::steady_clock::now() < until) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (poll(&fd, 1, static_cast<int>(std::clamp<int64_t>(left.count(), 1, 3600000))) > 0) {
      return;
    }
  }
}

int Run(const RunArgs& args) {
  if (const char* fp = std::getenv("FERRY_FAILPOINTS"); fp != nullptr && *fp != '\0') {
    Status st = failpoint::ArmFromString(fp);
    if (!st.ok()) {
      std::fprintf(stderr, "ferry run: FERRY_FAILPOINTS: %s\n", st.ToString().c_str());
      return kExitUsage;
    }
  }
  Result<config::Duration> max_wait = config::ParseDuration(args.max_wait);
  if (!max_wait.ok()) {
    std::fprintf(stderr, "ferry run: --max-wait: %s\n", max_wait.status().message().c_str());
    return kExitUsage;
  }
  Result<config::Config> cfg = LoadAndSelect(args.config, args.pipelines, args.storage_options);
  if (!cfg.ok()) {
    std::fprintf(stderr, "ferry run: %s\n", cfg.status().message().c_str());
    return kExitUsage;
  }
  Status logging =
      SetupLogging({.format = cfg->log.format, .level = cfg->log.level, .secrets = cfg->secrets});
  if (!logging.ok()) {
    std::fprintf(stderr, "ferry run: %s\n", logging.ToString().c_str());
    return kExitUsage;
  }

  for (const config::PipelineConfig& p : cfg->pipelines) {
    // Secret values in these are redacted by the logger (cfg->secrets).
    if (p.kafka) {
      std::string properties;
      for (const auto& [key, value] : p.kafka->properties) {
        properties += fmt::format("{}{}={}", properties.empty() ? "" : ", ", key, value);
      }
      FERRY_LOG_DEBUG("pipeline {}: table {}, kafka brokers {}, properties {{{}}}", p.id, p.table,
                      p.kafka->brokers, properties);
    } else if (p.jetstream) {
      FERRY_LOG_DEBUG("pipeline {}: table {}, jetstream stream {} on {}", p.id, p.table,
                      p.jetstream->stream, fmt::join(p.jetstream->servers, ","));
    }
  }

  // Signals go to one thread that turns them into stop requests (StopSignal is not
  // async-signal-safe). Block them before any thread starts so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  for (size_t i = 0; i < cfg->pipelines.size(); ++i) {
    FERRY_LOG_INFO("memory: {}", config::DescribeShare(*cfg, i));
  }
  for (const std::string& finding : config::MemoryFindings(*cfg)) {
    FERRY_LOG_WARN("memory: {}", finding);
  }
  metrics::Registry registry;
  std::vector<RunnablePipeline> pipelines;
  for (const config::PipelineConfig& p : cfg->pipelines) {
    RunnablePipeline runnable;
    BuildOptions build{.until_caught_up = args.until_caught_up, .max_wait = *max_wait};
    // A store that does not answer at start is waited for as the broker is (pipeline.h
    // StartSource): until a stop signal, or --max-wait with --until-caught-up.
    build.store_patience = args.until_caught_up && *max_wait > std::chrono::milliseconds(0)
                               ? std::chrono::milliseconds(*max_wait)
                               : std::chrono::milliseconds(std::chrono::hours(24 * 365));
    build.cancelled = [] {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1;
    };
    Status st;
    if (p.routing) {
      Result<std::unique_ptr<pipeline::Router>> built = BuildRoutedPipeline(p, &registry, build);
      st = built.status();
      if (built.ok()) {
        runnable.routed = std::move(*built);
      }
    } else {
      Result<std::unique_ptr<pipeline::Pipeline>> built = BuildPipeline(p, &registry, build);
      st = built.status();
      if (built.ok()) {
        runnable.single = std::move(*built);
      }
    }
    if (!st.ok()) {
      FERRY_LOG_ERROR("pipeline {}: {}", p.id, st.ToString());
      return st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kPermissionDenied
                 ? kExitUsage
                 : kExitFailed;
    }
    pipelines.push_back(std::move(runnable));
  }

  MetricsServer server(&registry, *cfg);
  if (!cfg->metrics.listen.empty()) {
    Status st = server.Start(cfg->metrics);
    if (!st.ok()) {
      FERRY_LOG_ERROR("{}", st.ToString());
      return kExitUsage;
    }
    FERRY_LOG_INFO("metrics on {}/metrics{}", server.url(),
                   cfg->metrics.status_page ? fmt::format(", status page on {}/", server.url())
                                            : std::string());
  }

  // The main thread sleeps in poll() on two descriptors: SIGTERM/SIGINT (blocked above, so they
  // queue on the signalfd) and an eventfd each pipeline thread bumps when it returns, so that the
  // process exits as soon as the last pipeline is done.
  FileDescriptor signal_fd(signalfd(-1, &signals, SFD_CLOEXEC));
  FileDescriptor done_fd(eventfd(0, EFD_CLOEXEC));
  if (!signal_fd.valid() || !done_fd.valid()) {
    FERRY_LOG_ERROR("cannot create the signalfd/eventfd the main thread waits on: {}",
                    std::strerror(errno));
    return kExitFailed;
  }

  std::vector<std::unique_ptr<pipeline::StopSignal>> stops;
  std::vector<Status> results(pipelines.size());
  std::vector<std::thread> threads;
  std::atomic<size_t> running{pipelines.size()};
  std::atomic<bool> any_failed{false};
  auto drain_all = [&](const char* why) {
    for (size_t i = 0; i < stops.size(); ++i) {
      stops[i]->RequestDrain(cfg->pipelines[i].drain_timeout);
    }
    FERRY_LOG_INFO("{}: committing open batches, then exiting", why);
  };
  for (size_t i = 0; i < pipelines.size(); ++i) {
    stops.push_back(std::make_unique<pipeline::StopSignal>());
  }
  for (size_t i = 0; i < pipelines.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = pipelines[i].Run(stops[i].get());
      if (!results[i].ok() && results[i].code() != StatusCode::kCancelled) {
        FERRY_LOG_ERROR("{}", results[i].ToString());
        if (!any_failed.exchange(true)) {
          // One pipeline failed: the others stop cleanly, and the process reports it.
          for (size_t j = 0; j < stops.size(); ++j) {
            stops[j]->RequestDrain(cfg->pipelines[j].drain_timeout);
          }
        }
      }
      running.fetch_sub(1);
      uint64_t one = 1;
      [[maybe_unused]] ssize_t n = write(done_fd.get(), &one, sizeof(one));
    });
  }

  // [pipeline.maintenance]: optimize and vacuum on a schedule, beside the pipelines.
  MaintenanceScheduler maintenance(&registry);
  maintenance.Start(cfg->pipelines);

  // --until-caught-up: a progress bar on a terminal, a log line every 5 s otherwise.
  std::unique_ptr<ProgressReporter> progress;
  if (args.until_caught_up) {
    bool terminal = isatty(STDERR_FILENO) == 1;
    progress = std::make_unique<ProgressReporter>(&registry, terminal,
                                                  std::chrono::milliseconds(terminal ? 250 : 5000));
    progress->Start();
  }

  int signals_seen = 0;
  while (running.load() > 0) {
    pollfd fds[2] = {{.fd = signal_fd.get(), .events = POLLIN, .revents = 0},
                     {.fd = done_fd.get(), .events = POLLIN, .revents = 0}};
    if (poll(fds, 2, -1) < 0) {
      continue;  // EINTR
    }
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      [[maybe_unused]] ssize_t n = read(done_fd.get(), &count, sizeof(count));
    }
    if ((fds[0].revents & POLLIN) == 0) {
      continue;
    }
    signalfd_siginfo info{};
    if (read(signal_fd.get(), &info, sizeof(info)) != static_cast<ssize_t>(sizeof(info))) {
      continue;
    }
    int sig = static_cast<int>(info.ssi_signo);
    if (++signals_seen == 1) {
      drain_all(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    } else {
      FERRY_LOG_WARN(
          "second signal: exiting now; open batches are not committed (they are read "
          "again at the next start)");
      for (auto& stop : stops) {
        stop->RequestAbort();
      }
    }
  }
  for (std::thread& t : threads) {
    t.join();
  }
  if (any_failed.load() && signals_seen == 0 && server.port() > 0 &&
      cfg->metrics.linger_after_failure.count() > 0) {
    LingerAfterFailure(server.url(), cfg->metrics.linger_after_failure, signal_fd.get());
  }
  maintenance.Stop();
  if (progress) {
    progress->Stop();
  }
  server.Stop();

  int code = 0;
  bool refused = false;
  for (const Status& st : results) {
    if (!st.ok()) {
      code = std::max(code, st.code() == StatusCode::kCancelled ? kExitAborted : kExitFailed);
      refused = refused || st.code() == StatusCode::kPermissionDenied;
    }
  }
  if (code == kExitAborted && any_failed.load()) {
    code = kExitFailed;
  }
  // A broker refused the credentials, certificate or an ACL: a restart cannot help until the
  // configuration or the grants change, as with bad configuration.
  if (refused && code == kExitFailed) {
    code = kExitUsage;
  }
  return code;
}

int Check(const std::string& path, const std::vector<std::string>& storage_flags) {
  Result<config::Config> cfg = LoadWithFlags(path, storage_flags);
  if (!cfg.ok()) {
    std::fprintf(stderr, "%s\n", cfg.status().message().c_str());
    return 1;
  }
  // The budget's division, then what in the configuration does not fit it (naming the keys).
  for (size_t i = 0; i < cfg->pipelines.size(); ++i) {
    std::printf("memory: %s\n", config::DescribeShare(*cfg, i).c_str());
  }
  for (const std::string& finding : config::MemoryFindings(*cfg)) {
    std::printf("memory: warning: %s\n", finding.c_str());
  }
  metrics::Registry registry;
  int failures = 0;
  for (const config::PipelineConfig& p : cfg->pipelines) {
    std::string report;
    BuildOptions check{.check_only = true, .report = &report};
    Status built = p.routing ? BuildRoutedPipeline(p, &registry, check).status()
                             : BuildPipeline(p, &registry, check).status();
    if (!built.ok()) {
      std::fprintf(stderr, "pipeline %s: %s\n", p.id.c_str(),
                   Redact(built.message(), cfg->secrets).c_str());
      ++failures;
    } else {
      // What schema evolution will do to the existing table.
      std::printf("%s", Redact(report, cfg->secrets).c_str());
    }
  }
  if (failures == 0) {
    std::printf("%s: OK (%zu pipeline%s)\n", path.c_str(), cfg->pipelines.size(),
                cfg->pipelines.size() == 1 ? "" : "s");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

void RegisterRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Run the pipelines of a configuration file until SIGTERM/SIGINT.\n"
      "The first signal commits the open batches and exits 0 (within each pipeline's\n"
      "drain_timeout); a second one exits at once with 130, still exactly-once.\n"
      "Exit codes: 0 stopped cleanly, 1 a pipeline failed, 2 bad configuration or a\n"
      "broker refused the credentials, certificate or ACLs (do not restart until fixed),\n"
      "130 stopped before open batches were committed.");
  run->add_option("-c,--config", args->config, "The TOML configuration (docs/configuration.md)")
      ->required();
  run->add_option("-p,--pipeline", args->pipelines,
                  "Run only the pipeline with this id (repeatable)");
  run->add_flag("--until-caught-up", args->until_caught_up,
                "Ingest up to the broker heads seen at start, commit, and exit 0 (like Spark's "
                "Trigger.AvailableNow); shows a progress bar on a terminal, a progress log line "
                "every 5 s otherwise");
  run->add_option("--max-wait", args->max_wait,
                  "With --until-caught-up: exit 1, saying why, after this long without contact "
                  "with the broker (no partition assigned, no head read, no message), with a "
                  "table's store that does not answer at start, or with "
                  "messages waiting that long for the schema registry (routed pipelines too), "
                  "e.g. 30s, 5m; 0 waits forever. Without --until-caught-up ferry retries forever")
      ->capture_default_str();
  AddStorageOptionFlag(run, &args->storage_options);
  run->callback([args, exit_code] { *exit_code = Run(*args); });
}

void RegisterConfigCommands(CLI::App& app, int* exit_code) {
  CLI::App* config = app.add_subcommand("config", "Work with configuration files");
  config->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  CLI::App* check = config->add_subcommand(
      "check",
      "Validate a configuration without running it: syntax, keys, schemas, source options, and "
      "compatibility with tables that exist (nothing is created)");
  check->add_option("file", *path, "The TOML configuration")->required();
  auto storage_flags = std::make_shared<std::vector<std::string>>();
  AddStorageOptionFlag(check, storage_flags.get());
  check->callback([path, storage_flags, exit_code] { *exit_code = Check(*path, *storage_flags); });
}

}  // namespace ferry::app
