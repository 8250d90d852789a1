// Child processes for the test servers (radosgw.h, azurite.h) and the command-line clients the
// tests check them with (curl, aws, node): a long-running Subprocess whose output goes to a log
// file, and RunProgram for a command run to completion with its output captured.
//
// Lifetime: a Subprocess is started with PR_SET_PDEATHSIG(SIGKILL), so it dies with the thread
// that started it even if the test crashes, and its destructor SIGKILLs and reaps it. Liveness is
// read from /proc/PID/stat, not `kill -0`: a killed child that was not reaped yet is a zombie and
// `kill -0` still succeeds on it.
//
// Thread-safety: a Subprocess is used from one thread at a time; RunProgram may be called from
// several threads at once (argv and environment are built before fork, the child only calls
// async-signal-safe functions).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::testing {

struct ProgramOptions {
  // Changes to the test's environment: "KEY=VALUE" sets KEY, "KEY" (no '=') removes it; of two
  // changes to one key, the later wins.
  std::vector<std::string> env;
  // The child's working directory; empty: the test's.
  std::string cwd;
  // false: the child outlives the test (FERRY_KEEP_TEST_SERVERS); only for debugging.
  bool die_with_parent = true;
};

// FERRY_KEEP_TEST_SERVERS is set (and not "0"): test servers outlive their test, for debugging.
bool KeepTestServers();

// How many times a test server's start is tried when another process takes one of its ports
// between the port being picked and the server binding it.
inline constexpr int kServerStartAttempts = 3;

class Subprocess {
 public:
  // Starts argv[0] (an absolute path, see FindProgram) with stdin from /dev/null and stdout and
  // stderr appended to `log_path`.
  static Result<Subprocess> Start(const std::vector<std::string>& argv, const std::string& log_path,
                                  const ProgramOptions& options = {});
  Subprocess() = default;
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  // Running and not a zombie (state from /proc/PID/stat).
  bool Alive() const;
  // Reaps the child if it has exited and returns its exit code (128 + signal when killed);
  // nullopt while it runs. Also nullopt after it was reaped by Kill/Release.
  std::optional<int> TryWait();
  // SIGKILL, then reap. OK when it was not running.
  Status Kill();
  // SIGTERM, up to `grace` for it to exit, then SIGKILL; reaps it.
  Status Terminate(std::chrono::milliseconds grace);
  // Forgets the child without stopping it (FERRY_KEEP_TEST_SERVERS).
  void Release() { pid_ = -1; }

 private:
  Subprocess(pid_t pid, std::string name) : pid_(pid), name_(std::move(name)) {}

  pid_t pid_ = -1;
  std::string name_;
};

struct ProgramOutput {
  int exit_code = -1;  // 128 + signal number when it was killed
  std::string out;
  std::string err;
};

// Runs argv to completion with stdout and stderr captured. Unavailable (naming the program and
// holding what it printed) when it is still running after `timeout`; it is killed then.
Result<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout,
                                 const ProgramOptions& options = {});

// The absolute path of `name`: the first of `preferred` that is executable, else the first
// executable `name` on PATH. NotFound naming `hint` (e.g. the Debian package) otherwise.
Result<std::string> FindProgram(const std::string& name, const std::vector<std::string>& preferred,
                                const std::string& hint);

// How a child that exited but was not reaped yet ended ("exited with status N", "was killed by
// signal N (name)"), without reaping it; nullopt while it runs or when it is not our child. For
// a watchdog thread, while the owner's thread reaps.
std::optional<std::string> DescribeExit(pid_t pid);

// "R", "S", "Z", ... from /proc/PID/stat; empty when there is no such process.
std::string ProcessState(pid_t pid);

// The last `lines` lines of a text file, or "(FILE: cannot read)"; for failure messages.
std::string TailOfFile(const std::string& path, int lines);

}  // namespace ferry::testing
