// ChildProcess: runs a program (the real `ferry` binary) for the Kafka CLI tests, with pipes to
// its stdin and stdout, and never leaves it running: the destructor closes stdin, sends SIGTERM,
// and SIGKILLs it if it has not exited within a few seconds. StartMockKafka starts
// `ferry mock-kafka` in one and waits for its bootstrap servers.
//
// Thread-safety: one thread per object.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::source::kafka::testing {

class ChildProcess {
 public:
  // Starts argv[0] (a path) with stdin and stdout piped; stderr is inherited.
  static Result<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv);
  ~ChildProcess();

  // The next line of stdout without its newline; DeadlineExceeded-like Unavailable on timeout,
  // NotFound at end of output.
  Result<std::string> ReadLine(std::chrono::milliseconds timeout);
  Status WriteLine(std::string_view line);
  void CloseStdin();
  // Waits for exit; returns the exit code, or 128 + signal number.
  int Wait();
  pid_t pid() const { return pid_; }

 private:
  ChildProcess() = default;

  pid_t pid_ = -1;
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
// Runs argv to completion with stdout and stderr captured (through files).
CommandResult RunCommand(const std::vector<std::string>& argv);

}  // namespace ferry::source::kafka::testing
