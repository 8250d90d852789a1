#include "torture_support.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "ferry/testing/wait_until.h"

extern char** environ;

namespace ferry::fault {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    return fallback;
  }
  return std::strtoll(v, nullptr, 10);
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// The parent's environment with `overrides` ("NAME=value") replacing or adding entries.
std::vector<std::string> MergedEnv(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> entries;
  std::vector<std::string> order;
  auto put = [&](const std::string& entry) {
    std::string name = entry.substr(0, entry.find('='));
    if (entries.find(name) == entries.end()) {
      order.push_back(name);
    }
    entries[name] = entry;
  };
  for (char** e = environ; *e != nullptr; ++e) {
    put(*e);
  }
  for (const std::string& o : overrides) {
    put(o);
  }
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const std::string& name : order) {
    out.push_back(entries[name]);
  }
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

TortureSettings TortureSettings::FromEnv(int64_t default_messages, int default_kills) {
  TortureSettings s;
  const bool long_form = std::getenv("FERRY_TORTURE_MESSAGES") != nullptr;
  s.seed = static_cast<uint64_t>(
      EnvInt("FERRY_TORTURE_SEED",
             static_cast<int64_t>(std::chrono::system_clock::now().time_since_epoch().count() %
                                  1000000007)));
  s.messages = EnvInt("FERRY_TORTURE_MESSAGES", default_messages);
  s.kills = static_cast<int>(EnvInt("FERRY_TORTURE_KILLS", default_kills));
  s.full_matrix = EnvInt("FERRY_TORTURE_FULL_MATRIX", long_form ? 1 : 0) != 0;
  s.keep = EnvInt("FERRY_TORTURE_KEEP", 0) != 0;
  if (const char* level = std::getenv("FERRY_TORTURE_LOG_LEVEL"); level != nullptr) {
    s.log_level = level;
  }
  return s;
}

TortureSettings TortureSettings::ForObjectStore() const {
  TortureSettings s = *this;
  if (std::getenv("FERRY_TORTURE_MESSAGES") == nullptr &&
      std::getenv("FERRY_TORTURE_KILLS") == nullptr) {
    s.kills = std::max(1, kills / 2);
  }
  return s;
}

TortureSettings TortureSettings::ForAnotherServer() const {
  TortureSettings s = *this;
  if (std::getenv("FERRY_TORTURE_MESSAGES") == nullptr &&
      std::getenv("FERRY_TORTURE_KILLS") == nullptr) {
    s.messages = std::max<int64_t>(1000, messages / 3);
    s.kills = std::max(1, kills / 4);
    s.failpoint_steps = false;
  }
  return s;
}

std::string TortureSettings::Describe() const {
  return fmt::format(
      "seed={} messages={} kills={} full_matrix={}{} (rerun with FERRY_TORTURE_SEED={})", seed,
      messages, kills, full_matrix ? 1 : 0, failpoint_steps ? "" : " failpoint_steps=0", seed);
}

Result<std::unique_ptr<Process>> Process::Start(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& env,
                                                const std::string& log_path,
                                                const std::string& cwd) {
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls (the test may have other threads).
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  std::vector<char*> arg_ptrs = Pointers(args);
  std::vector<char*> env_ptrs = Pointers(envs);
  const std::string target = log_path.empty() ? "/dev/null" : log_path;
  int log_fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return ErrnoStatus(errno, "open", target);
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(log_fd);
    ::close(null_fd);
    return ErrnoStatus(err, "fork", argv[0]);
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127);
    }
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      ::_exit(127);
    }
    ::execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    ::_exit(127);
  }
  ::close(log_fd);
  ::close(null_fd);
  std::unique_ptr<Process> p(new Process());
  p->pid_ = pid;
  p->log_path_ = log_path;
  p->deadline_ = std::chrono::steady_clock::now() + ChildLimit();
  for (const std::string& a : argv) {
    p->name_ += (p->name_.empty() ? "" : " ") + a;
  }
  return p;
}

std::chrono::seconds ChildLimit() {
  return std::chrono::seconds(EnvInt("FERRY_TORTURE_CHILD_LIMIT_S", 300));
}

Process::~Process() {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    Wait();
  }
}

bool Process::Running() {
  if (exited_) {
    return false;
  }
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    exit_code_ = DecodeStatus(status);
    return false;
  }
  return true;
}

void Process::Signal(int sig) {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, sig);
  }
}

int Process::Wait() {
  bool killed = false;
  while (!exited_ && pid_ > 0) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      exited_ = true;
      exit_code_ = r == pid_ ? DecodeStatus(status) : -1;
      break;
    }
    if (!killed && std::chrono::steady_clock::now() > deadline_) {
      ::kill(pid_, SIGKILL);
      killed = true;
      ADD_FAILURE() << "`" << name_ << "` (pid " << pid_ << ") ran past its deadline of "
                    << ChildLimit().count()
                    << " s (FERRY_TORTURE_CHILD_LIMIT_S) and was killed; the end of its log:\n"
                    << (log_path_.empty() ? std::string("(no log)") : Tail(log_path_, 40));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exit_code_;
}

Watchdog::Watchdog(std::string what, Check check, std::chrono::milliseconds period)
    : what_(std::move(what)), check_(std::move(check)), period_(period) {
  thread_ = std::thread([this] { Loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period_, [this] { return stop_; })) {
    std::optional<std::string> report = check_();
    if (!report) {
      continue;
    }
    // The test's thread may be blocked in a wait on a child that retries the dead broker: fail
    // here, loudly, and end the process.
    ADD_FAILURE() << what_ << " died while the test still needed it: " << *report;
    std::fprintf(stderr, "watchdog: %s died; ending the test process\n", what_.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
}

int RunToExit(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const std::string& log_path) {
  auto p = Process::Start(argv, env, log_path);
  if (!p.ok()) {
    return -1;
  }
  return (*p)->Wait();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Tail(const std::string& path, int lines) {
  std::string text = ReadFile(path);
  if (text.empty()) {
    return "(" + path + " is empty)";
  }
  size_t at = text.size();
  for (int i = 0; i <= lines && at != std::string::npos && at > 0; ++i) {
    at = text.rfind('\n', at - 1);
  }
  return at == std::string::npos ? text : text.substr(at + 1);
}

namespace {

// `ferry produce KIND TARGET...` of `count` messages `templ`, the first id given by `first_flag`.
std::vector<std::string> ProduceArgs(const char* kind, const std::vector<std::string>& target,
                                     const char* first_flag, int64_t first, int64_t count,
                                     const std::string& templ) {
  std::vector<std::string> args = {kFerry, "produce", kind};
  args.insert(args.end(), target.begin(), target.end());
  args.insert(args.end(), {"--count", std::to_string(count), first_flag, std::to_string(first),
                           "--template", templ});
  return args;
}

}  // namespace

std::vector<std::string> KafkaProducerArgs(const std::string& brokers, const std::string& topic,
                                           int64_t first, int64_t count, int64_t rate,
                                           const std::string& templ,
                                           const std::vector<std::string>& extra) {
  std::vector<std::string> args = ProduceArgs("kafka", {"--brokers", brokers, "--topic", topic},
                                              "--start", first, count, templ);
  args.insert(args.end(), {"--rate", std::to_string(rate), "--key", "k{{seq}}"});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> NatsProducerArgs(const std::string& server, const std::string& stream,
                                          const std::string& subject, int64_t first, int64_t count,
                                          int64_t rate, const std::string& templ) {
  std::vector<std::string> args =
      ProduceArgs("nats", {"--server", server, "--stream", stream, "--subject", subject}, "--first",
                  first, count, templ);
  args.push_back("--msg-id");
  if (rate > 0) {
    args.insert(args.end(), {"--rate", std::to_string(rate)});
  }
  return args;
}

bool WaitUntilReading(Process* ferry, const std::string& log, std::chrono::milliseconds limit) {
  bool reading = false;
  testing::WaitUntil(
      [&] {
        reading = ReadFile(log).find(" starts at ") != std::string::npos;
        return reading || !ferry->Running();
      },
      limit, std::chrono::milliseconds(50));
  return reading;
}

const std::vector<FailpointSite>& FailpointSites() {
  // parquet.atomic_file.before_rename is not here: only `ferry parquet from-json` writes
  // through AtomicFileOutputStream (its unit test arms it); `ferry run` writes data files
  // through the object store (storage.local.*_rename).
  static const std::vector<FailpointSite> sites = {
      {"pipeline.after_poll", true},
      {"pipeline.before_write", true},
      {"delta.write.after_file", true},
      {"storage.local.before_fsync", true},
      {"storage.local.after_fsync", true},
      {"storage.local.before_rename", true},
      {"storage.local.after_rename", true},
      {"pipeline.before_commit", true},
      {"delta.commit.before_put", true},
      {"storage.local.before_link", true},
      {"storage.local.after_link", true},
      {"delta.commit.after_put", true},
      {"delta.commit.on_conflict", false},
      {"delta.commit.before_checkpoint", true},
      {"delta.checkpoint.before_write", true},
      {"delta.checkpoint.before_last_checkpoint", true},
      {"delta.checkpoint.after_last_checkpoint", true},
      {"pipeline.after_commit", true},
      {"pipeline.after_dead_letter_commit", true},
      {"pipeline.before_ack", true},
      {"pipeline.after_ack", true},
  };
  return sites;
}

const std::vector<std::string>& FailpointActions() {
  static const std::vector<std::string> actions = {"crash", "error(EIO)", "error(ENOSPC)",
                                                   "error(FSYNC)", "sleep(1500)"};
  return actions;
}

std::vector<FailpointStep> FailpointPlan(bool full_matrix, bool local_store, std::mt19937_64* rng) {
  const auto& actions = FailpointActions();
  auto arm = [&](const FailpointSite& site, const std::string& action, FailpointStep* step) {
    // Checkpoint sites are hit once per checkpoint and the dead-letter site once per batch
    // with bad records: their first hit. The others: one of the first three.
    const std::string name = site.name;
    const bool once = name.starts_with("delta.checkpoint.") ||
                      name == "delta.commit.before_checkpoint" ||
                      name == "pipeline.after_dead_letter_commit";
    const int64_t nth = once ? 1 : 1 + static_cast<int64_t>((*rng)() % 3);
    step->armed.push_back({.name = name, .action = action, .must_fire = site.always_reached});
    step->spec += fmt::format("{}{}={}@{}", step->spec.empty() ? "" : ";", name, action, nth);
    step->crash = step->crash || action == "crash";
    step->needs_bad_records =
        step->needs_bad_records || name == "pipeline.after_dead_letter_commit";
  };
  std::vector<FailpointStep> plan;
  std::vector<FailpointSite> sites;
  for (const FailpointSite& site : FailpointSites()) {
    if (local_store || !std::string_view(site.name).starts_with("storage.local.")) {
      sites.push_back(site);
    }
  }
  if (full_matrix) {
    for (const FailpointSite& site : sites) {
      for (const std::string& action : actions) {
        arm(site, action, &plan.emplace_back());
      }
    }
    return plan;
  }
  for (const FailpointSite& site : sites) {
    arm(site, actions[0], &plan.emplace_back());
  }
  // Neighbouring sites go to different runs: the checkpoint sites follow one another, and a
  // checkpoint that failed at one of them is retried only at the next commit, so two of them in
  // one run might not both be reached in a step's few commits.
  constexpr size_t kSitesPerRun = 6;
  const size_t runs = (sites.size() + kSitesPerRun - 1) / kSitesPerRun;
  const size_t first = plan.size();
  plan.resize(first + runs);
  for (size_t i = 0; i < sites.size(); ++i) {
    // Run i % runs; the action turns with each site a run receives, so every run mixes them.
    arm(sites[i], actions[1 + (i / runs) % (actions.size() - 1)], &plan[first + i % runs]);
  }
  return plan;
}

bool Fired(const std::string& log, const std::string& name) {
  return log.find("failpoint " + name + ": ") != std::string::npos;
}

OptimizeLoop::OptimizeLoop(TableLocation table, std::string log_path,
                           std::chrono::milliseconds pause)
    : table_(std::move(table)), log_path_(std::move(log_path)), pause_(pause) {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      {
        std::lock_guard lock(run_mu_);
        if (!paused_ && table_.LatestVersion() >= 0) {
          int code = RunToExit(table_.WithFlags({kFerry, "optimize", table_.uri()}), table_.env(),
                               log_path_);
          runs_.fetch_add(1);
          if (code != 0) {
            failures_.fetch_add(1);
          }
        }
      }
      for (auto left = pause_; left.count() > 0 && !stop_.load();
           left -= std::chrono::milliseconds(50)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  });
}

OptimizeLoop::~OptimizeLoop() {
  Stop();
}

void OptimizeLoop::Pause(bool paused) {
  std::lock_guard lock(run_mu_);
  paused_ = paused;
}

int OptimizeLoop::Stop() {
  stop_.store(true);
  if (thread_.joinable()) {
    thread_.join();
  }
  return runs_.load();
}

std::string FiguresLine(const Figures& f) {
  return fmt::format(
      "TORTURE {}: kills={} failpoint_runs={} broker_faults={}{} optimize_runs={} messages={} "
      "rows={} distinct={} duplicates={} missing={} verify_exit={} wall={:.1f}s seed={}",
      f.source, f.kills, f.failpoint_runs, f.broker_faults,
      f.store_faults >= 0 ? fmt::format(" store_faults={}", f.store_faults) : "", f.optimize_runs,
      f.messages, f.verify.rows, f.verify.distinct, f.verify.duplicates, f.verify.missing,
      f.verify.exit_code, f.wall_seconds, f.seed);
}

}  // namespace ferry::fault
