#include "kafka_child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ferry/base/clock.h"

extern char** environ;

namespace ferry::source::kafka::testing {
namespace {

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  out.reserve(argv.size() + 1);
  for (const std::string& a : argv) {
    out.push_back(const_cast<char*>(a.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Describe(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) {
    return fmt::format("exited with status {}", info.si_status);
  }
  return fmt::format("was killed by signal {} ({}){}", info.si_status, strsignal(info.si_status),
                     info.si_code == CLD_DUMPED ? ", core dumped" : "");
}

// Waits for `pid` until `limit` passes; then SIGKILLs it, reaps it, records a test failure
// naming `name`, and returns the status of the kill. Every child of these tests has a deadline
// (a hung child fails its test in minutes, not at the CTest TIMEOUT).
int WaitWithDeadline(pid_t pid, const std::string& name, std::chrono::seconds limit) {
  const int64_t deadline = MonotonicMicros() + limit.count() * 1'000'000;
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      return r == pid ? status : 0;
    }
    if (MonotonicMicros() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "`" << name << "` (pid " << pid << ") ran past its deadline of "
                    << limit.count() << " s (FERRY_TEST_CHILD_LIMIT_S) and was killed";
      return status;
    }
    usleep(20'000);
  }
}

std::string DescribeCode(int code) {
  return code >= 128
             ? fmt::format("was killed by signal {} ({})", code - 128, strsignal(code - 128))
             : fmt::format("exited with status {}", code);
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(const std::vector<std::string>& argv) {
  // A write to a child that died must fail with EPIPE (WriteLine reports how it died), not kill
  // the test with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  char log_template[] = "/tmp/ferry-child-stderr-XXXXXX";
  const int log_fd = mkostemp(log_template, O_CLOEXEC);
  if (log_fd < 0) {
    return ErrnoStatus(errno, "mkostemp", log_template);
  }
  int in[2];
  int out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    close(log_fd);
    unlink(log_template);
    return ErrnoStatus(errno, "pipe", argv[0]);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->log_path_ = log_template;
  for (const std::string& a : argv) {
    child->name_ += (child->name_.empty() ? "" : " ") + a;
  }
  std::vector<char*> args = Argv(argv);
  int err = posix_spawn(&child->pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  close(log_fd);
  child->stdin_fd_ = in[1];
  child->stdout_fd_ = out[0];
  if (err != 0) {
    child->pid_ = -1;
    return ErrnoStatus(err, "spawn", argv[0]);
  }
  return child;
}

ChildProcess::~ChildProcess() {
  CloseStdin();
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGTERM);
    const int64_t deadline = MonotonicMicros() + 5'000'000;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (MonotonicMicros() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      usleep(10'000);
    }
  }
  if (stdout_fd_ >= 0) {
    close(stdout_fd_);
  }
  if (!log_path_.empty()) {
    unlink(log_path_.c_str());
  }
}

std::optional<std::string> ChildProcess::ExitReport() const {
  std::string how;
  if (exited_) {
    how = DescribeCode(exit_code_);
  } else {
    // WNOWAIT: look without reaping, so that this is safe beside the owner's Wait().
    siginfo_t info{};
    if (pid_ <= 0 ||
        waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid == 0) {
      return std::nullopt;
    }
    how = Describe(info);
  }
  return fmt::format("`{}` (pid {}) {}; the end of its stderr ({}):\n{}", name_, pid_, how,
                     log_path_, Log(4096));
}

std::string ChildProcess::Log(size_t max_bytes) const {
  std::string text = Slurp(log_path_);
  return text.size() > max_bytes ? "..." + text.substr(text.size() - max_bytes) : text;
}

Result<int> ChildProcess::WaitFor(std::chrono::milliseconds limit) {
  const int64_t deadline = MonotonicMicros() + limit.count() * 1000;
  while (!exited_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      exit_code_ = DecodeStatus(status);
      break;
    }
    if (MonotonicMicros() > deadline) {
      kill(pid_, SIGKILL);
      Wait();
      return Unavailable(
          "`{}` (pid {}) did not exit within {} ms; killed. The end of its stderr:\n{}", name_,
          pid_, limit.count(), Log(4096));
    }
    usleep(20'000);
  }
  return exit_code_;
}

Result<std::string> ChildProcess::ReadLine(std::chrono::milliseconds timeout) {
  const int64_t deadline = MonotonicMicros() + timeout.count() * 1000;
  while (true) {
    size_t eol = buffer_.find('\n');
    if (eol != std::string::npos) {
      std::string line = buffer_.substr(0, eol);
      buffer_.erase(0, eol + 1);
      return line;
    }
    const int64_t left_ms = (deadline - MonotonicMicros()) / 1000;
    if (left_ms <= 0) {
      std::optional<std::string> report = ExitReport();
      return Unavailable("no line from child {} within {} ms{}", pid_, timeout.count(),
                         report ? "; " + *report : std::string());
    }
    pollfd fd = {stdout_fd_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left_ms)) <= 0) {
      continue;
    }
    char chunk[4096];
    ssize_t got = read(stdout_fd_, chunk, sizeof(chunk));
    if (got <= 0) {
      std::optional<std::string> report = ExitReport();
      return NotFound("child {} closed its stdout{}", pid_,
                      report ? "; " + *report : std::string());
    }
    buffer_.append(chunk, static_cast<size_t>(got));
  }
}

Status ChildProcess::WriteLine(std::string_view line) {
  std::string text = std::string(line) + "\n";
  if (stdin_fd_ < 0 ||
      write(stdin_fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    std::optional<std::string> report = ExitReport();
    return IOError("writing to child {}{}", pid_, report ? ": " + *report : std::string());
  }
  return Status::OK();
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) {
    close(stdin_fd_);
    stdin_fd_ = -1;
  }
}

int ChildProcess::Wait() {
  if (!exited_ && pid_ > 0) {
    const int status = WaitWithDeadline(pid_, name_, ChildLimit());
    exited_ = true;
    exit_code_ = DecodeStatus(status);
  }
  return exit_code_;
}

std::chrono::seconds ChildLimit() {
  const char* v = std::getenv("FERRY_TEST_CHILD_LIMIT_S");
  const long long limit = v == nullptr ? 0 : std::strtoll(v, nullptr, 10);
  return std::chrono::seconds(limit > 0 ? limit : 300);
}

Result<MockKafka> StartMockKafka(const std::string& ferry, int brokers,
                                 const std::vector<std::string>& topics) {
  std::vector<std::string> argv = {ferry, "mock-kafka", "--brokers", std::to_string(brokers)};
  for (const std::string& topic : topics) {
    argv.push_back("--topic");
    argv.push_back(topic);
  }
  argv.push_back("--exit-on-eof");
  // FERRY_MOCK_KAFKA_DEBUG=mock,cgrp: the cluster logs its group coordinator's states to its
  // stderr (ChildProcess::Log, and the report when it dies).
  if (const char* debug = std::getenv("FERRY_MOCK_KAFKA_DEBUG"); debug != nullptr && *debug) {
    argv.push_back("--debug");
    argv.push_back(debug);
  }
  MockKafka mock;
  FERRY_ASSIGN_OR_RETURN(mock.child, ChildProcess::Start(argv));
  FERRY_ASSIGN_OR_RETURN(mock.bootstrap, mock.child->ReadLine(std::chrono::milliseconds(20000)));
  return mock;
}

CommandResult RunCommand(const std::vector<std::string>& argv) {
  CommandResult result;
  char dir_template[] = "/tmp/ferry_kafka_cmd_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    result.err = "mkdtemp failed";
    return result;
  }
  const std::string out_path = std::string(dir) + "/out";
  const std::string err_path = std::string(dir) + "/err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT, 0600);
  std::vector<char*> args = Argv(argv);
  pid_t pid = -1;
  int err = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err == 0) {
    std::string name;
    for (const std::string& a : argv) {
      name += (name.empty() ? "" : " ") + a;
    }
    result.exit_code = DecodeStatus(WaitWithDeadline(pid, name, ChildLimit()));
  }
  result.out = Slurp(out_path);
  result.err = Slurp(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  rmdir(dir);
  return result;
}

}  // namespace ferry::source::kafka::testing
