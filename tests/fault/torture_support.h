// The torture harness's parts shared by the Kafka and JetStream runs (docs/RELIABILITY.md):
// settings from the environment (seed, message count, kill count), child processes with their
// own environment (FERRY_FAILPOINTS) and log file that die with the test, the failpoint plan,
// a `ferry optimize` loop beside the ingestion, `ferry verify` run and parsed, and the figures
// line `make torture` prints.
//
// Thread-safety: Process and the free functions may be used from any thread, one object per
// thread; OptimizeLoop and Watchdog run their own threads.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "torture_table.h"

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::fault {

inline constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";

// FERRY_TORTURE_SEED (default: from the clock), FERRY_TORTURE_MESSAGES, FERRY_TORTURE_KILLS,
// FERRY_TORTURE_FULL_MATRIX=1 (every failpoint with every action; default only in the long
// form, i.e. when FERRY_TORTURE_MESSAGES is set), FERRY_TORTURE_KEEP=1 (keep the temp dir),
// FERRY_TORTURE_LOG_LEVEL (the ferry processes' [log] level, e.g. "debug" for the commit
// attempts' trace; only the elastic scenario uses it so far).
struct TortureSettings {
  uint64_t seed = 0;
  int64_t messages = 0;
  int kills = 0;
  bool full_matrix = false;
  bool keep = false;
  std::string log_level;  // empty: ferry's default
  // The scenario's step 3 (every failpoint in turn); off in ForAnotherServer()'s short form.
  bool failpoint_steps = true;

  static TortureSettings FromEnv(int64_t default_messages, int default_kills);
  // The settings of a scenario whose tables live in an object store: in the short form (no
  // FERRY_TORTURE_MESSAGES or FERRY_TORTURE_KILLS set) half the kills, as every ferry start
  // there costs more (the store's probe, slower requests), so that each test stays within a few
  // minutes; otherwise unchanged.
  TortureSettings ForObjectStore() const;
  // The settings of the scenario run again on another broker version (the current nats-server
  // beside Debian's): in the short form a third of the ids, a quarter of the kills and no
  // failpoint steps (they exercise ferry's own steps and ran on the first server), so that the
  // kill loop and the broker faults run in well under a minute. Otherwise (make torture)
  // unchanged.
  TortureSettings ForAnotherServer() const;
  // "seed=... messages=... kills=..." and how to rerun with the same seed.
  std::string Describe() const;
};

// A child process with extra environment entries ("NAME=value", overriding the inherited
// ones), stdout and stderr appended to `log_path` (or /dev/null when empty), in the working
// directory `cwd` (the test's when empty). It is killed with
// SIGKILL when the test process dies (PR_SET_PDEATHSIG) and by the destructor if still running.
// Every child has a deadline, ChildLimit() after its start: Wait() past it SIGKILLs the child
// and fails the test naming it, so a hung child fails the test in minutes, not at the CTest
// TIMEOUT.
class Process {
 public:
  static Result<std::unique_ptr<Process>> Start(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& env = {},
                                                const std::string& log_path = "",
                                                const std::string& cwd = "");
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // True while the child has not exited (reaps it when it has).
  bool Running();
  // Sends `sig`; OK even if the child already exited.
  void Signal(int sig);
  // Waits for exit; the exit code, or 128 + signal number. Past the deadline: SIGKILL, a test
  // failure naming the command and its log, and the code of the kill (128 + 9).
  int Wait();

 private:
  Process() = default;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
  std::string name_;  // argv joined
  std::string log_path_;
  std::chrono::steady_clock::time_point deadline_;
};

// How long a child of Process may run: FERRY_TORTURE_CHILD_LIMIT_S, default 300 s (the short
// form's longest child runs about a minute; `make torture` sets an hour).
std::chrono::seconds ChildLimit();

// Watchdog: checks, every `period`, a process the test cannot go on without (the mock cluster,
// nats-server). `check` returns nullopt while it is alive and a report (exit status, the end of
// its output) once it died unexpectedly. Then the test fails at once with that report: the
// watchdog records the failure and ends the test process (its children die with it through
// PR_SET_PDEATHSIG), instead of letting every later step retry a dead broker until the CTest
// TIMEOUT.
class Watchdog {
 public:
  using Check = std::function<std::optional<std::string>()>;
  Watchdog(std::string what, Check check,
           std::chrono::milliseconds period = std::chrono::milliseconds(200));
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void Loop();

  const std::string what_;
  const Check check_;
  const std::chrono::milliseconds period_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

// The producers of ids every torture test runs, one per source: ids first..first+count-1, each
// message `templ` with {{seq}} the id, at `rate` per second (0: as fast as the broker acks).
// Kafka: `ferry produce kafka` to `topic`, key "k<id>" (keyed messages spread over the
// partitions), `extra` more arguments (-X settings).
std::vector<std::string> KafkaProducerArgs(const std::string& brokers, const std::string& topic,
                                           int64_t first, int64_t count, int64_t rate,
                                           const std::string& templ,
                                           const std::vector<std::string>& extra = {});
// JetStream: `ferry produce nats` to `subject` of `stream`, Nats-Msg-Id "<subject>-<id>" (a
// publish retried after a server restart is dropped by the server's duplicate window instead of
// stored twice).
std::vector<std::string> NatsProducerArgs(const std::string& server, const std::string& stream,
                                          const std::string& subject, int64_t first, int64_t count,
                                          int64_t rate, const std::string& templ);

// Runs argv to completion (env and log as for Process); the exit code or 128 + signal.
int RunToExit(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
              const std::string& log_path = "");

std::string ReadFile(const std::string& path);
// The last `lines` lines of a file (for failure messages).
std::string Tail(const std::string& path, int lines = 30);

// Waits (up to `limit`, polling its log every 50 ms) until the `ferry run` `ferry` logs that it
// reads a partition (" starts at "), or it exits; whether it logged so. Past that point its
// group's rebalance is over and it blocks SIGTERM.
bool WaitUntilReading(Process* ferry, const std::string& log, std::chrono::milliseconds limit);

// Every failpoint name compiled into ferry, with what a test must do to reach it.
struct FailpointSite {
  const char* name;
  // Reached by every run that commits a few batches; false for sites that need a commit
  // conflict (another writer) or a bad record, which the harness arranges but cannot force.
  bool always_reached;
};
const std::vector<FailpointSite>& FailpointSites();
// crash, error(EIO), error(ENOSPC), error(FSYNC), sleep(MS)
const std::vector<std::string>& FailpointActions();

struct ArmedFailpoint {
  std::string name;
  std::string action;  // as in FailpointActions()
  bool must_fire = false;
};
// One `ferry run --until-caught-up` with FERRY_FAILPOINTS = spec.
struct FailpointStep {
  std::vector<ArmedFailpoint> armed;
  std::string spec;  // e.g. "delta.commit.before_put=crash@3" or several joined by ';'
  bool crash = false;
  bool needs_bad_records = false;  // pipeline.after_dead_letter_commit is armed
};
// The full matrix: every site with every action, one run each. The short form: every site
// crashes once (one run each), and every site meets one of the other actions in turn, about
// six sites armed together in one run (ferry must retry each error and sit out each stall).
// Triggers (the N-th hit) are drawn from `rng`. `local_store`: the table is a local directory;
// otherwise the sites of the local store (storage.local.*) are left out, as nothing reaches
// them (an object store's faults come from the network: the store-fault phase).
std::vector<FailpointStep> FailpointPlan(bool full_matrix, bool local_store, std::mt19937_64* rng);
// Whether a run's log shows that `name` fired (crash line or an error naming it).
bool Fired(const std::string& log, const std::string& name);

// `ferry optimize TABLE` in a loop on its own thread, a pause between runs, until Stop().
class OptimizeLoop {
 public:
  OptimizeLoop(TableLocation table, std::string log_path, std::chrono::milliseconds pause);
  ~OptimizeLoop();
  // Joins the thread; returns the number of runs.
  int Stop();
  // While paused, no `ferry optimize` runs; Pause(true) returns once a run in progress ended.
  // A failpoint step arming a checkpoint site pauses the loop: a version committed by optimize
  // can take the checkpoint interval's turn from the armed process.
  void Pause(bool paused);
  int runs() const { return runs_.load(); }
  int failures() const { return failures_.load(); }

 private:
  const TableLocation table_;
  const std::string log_path_;
  const std::chrono::milliseconds pause_;
  std::atomic<bool> stop_{false};
  std::mutex run_mu_;    // held while `ferry optimize` runs
  bool paused_ = false;  // guarded by run_mu_
  std::atomic<int> runs_{0};
  std::atomic<int> failures_{0};
  std::thread thread_;
};

// One line per scenario for `make torture`:
// "TORTURE kafka: kills=.. failpoint_runs=.. messages=.. rows=.. duplicates=.. missing=..
//  wall=..s seed=.." (source "kafka-s3" for a table on S3, with store_faults=..).
struct Figures {
  std::string source;
  int kills = 0;
  int failpoint_runs = 0;
  int broker_faults = 0;
  // Faults between ferry and an object store (proxy faults, gateway outages); -1: none (local).
  int store_faults = -1;
  int optimize_runs = 0;
  int64_t messages = 0;
  VerifyResult verify;
  double wall_seconds = 0;
  uint64_t seed = 0;
};
std::string FiguresLine(const Figures& f);

}  // namespace ferry::fault
