// ChildProcess: runs a program (the real `ferry` binary) for the Kafka CLI tests, with pipes to
// its stdin and stdout and its stderr in a log file of its own, and never leaves it running: the
// destructor closes stdin, sends SIGTERM, and SIGKILLs it if it has not exited within a few
// seconds. StartMockKafka starts `ferry mock-kafka` in one and waits for its bootstrap servers.
//
// A child that dies while the test still needs it (the mock cluster) is reported with its exit
// status and the tail of its stderr: ExitReport() tells, without reaping it, so a watchdog thread
// may ask while the test's thread uses the object.
//
// Thread-safety: one thread per object, except ExitReport() and Log(), which any thread may call.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::source::kafka::testing {

class ChildProcess {
 public:
  // Starts argv[0] (a path) with stdin and stdout piped, stderr to a log file (Log()).
  static Result<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv);
  ~ChildProcess();

  // The next line of stdout without its newline; DeadlineExceeded-like Unavailable on timeout,
  // NotFound at end of output.
  // When the child has exited, the error says how, with the tail of its stderr.
  Result<std::string> ReadLine(std::chrono::milliseconds timeout);
  Status WriteLine(std::string_view line);
  void CloseStdin();
  // Waits for exit, at most ChildLimit() (then SIGKILL and a test failure naming the child);
  // returns the exit code, or 128 + signal number.
  int Wait();
  // Waits at most `limit`; then SIGKILLs the child, reaps it, and returns DeadlineExceeded-like
  // Unavailable naming it.
  Result<int> WaitFor(std::chrono::milliseconds limit);
  pid_t pid() const { return pid_; }

  // nullopt while the child runs; once it has exited (reaped or not): "<argv> (pid N) exited
  // with status S | was killed by signal S (name)", and the last lines of its stderr.
  std::optional<std::string> ExitReport() const;
  // The last `max_bytes` of its stderr.
  std::string Log(size_t max_bytes = 16384) const;

 private:
  ChildProcess() = default;

  pid_t pid_ = -1;
  std::string name_;      // argv joined, for reports
  std::string log_path_;  // its stderr; removed by the destructor
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool exited_ = false;
  int exit_code_ = -1;
};

// A `ferry mock-kafka` child (control commands on its stdin, answers on its stdout) and the
// bootstrap servers it printed.
struct MockKafka {
  std::unique_ptr<ChildProcess> child;
  std::string bootstrap;
};
// Starts `FERRY mock-kafka --brokers BROKERS --topic T ... --exit-on-eof` (each topic as
// "NAME:PARTITIONS") and reads its first line, the bootstrap servers (20 s at most).
Result<MockKafka> StartMockKafka(const std::string& ferry, int brokers,
                                 const std::vector<std::string>& topics);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs argv to completion with stdout and stderr captured (through files), at most
// ChildLimit() (then SIGKILL and a test failure naming the command).
CommandResult RunCommand(const std::vector<std::string>& argv);

// How long a child of these tests may run: FERRY_TEST_CHILD_LIMIT_S, default 300 s.
std::chrono::seconds ChildLimit();

}  // namespace ferry::source::kafka::testing
