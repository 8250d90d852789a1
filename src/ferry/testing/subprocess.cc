#include "ferry/testing/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

extern char** environ;

namespace ferry::testing {
namespace {

// The test's environment with `overrides` applied ("KEY=VALUE" sets KEY, "KEY" removes it; the
// last override of a key wins).
std::vector<std::string> BuildEnv(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& o : overrides) {
      replaced = replaced || o.substr(0, o.find('=')) == key;
    }
    if (!replaced) {
      env.push_back(std::move(entry));
    }
  }
  // A key given twice takes its last value (getenv would find the first of two entries).
  for (size_t i = 0; i < overrides.size(); ++i) {
    const std::string& o = overrides[i];
    const std::string key = o.substr(0, o.find('='));
    bool later = false;
    for (size_t j = i + 1; j < overrides.size(); ++j) {
      later = later || overrides[j].substr(0, overrides[j].find('=')) == key;
    }
    if (!later && o.find('=') != std::string::npos) {
      env.push_back(o);
    }
  }
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

// Forks and execs argv with stdin from /dev/null and stdout/stderr on the given descriptors
// (which the caller closes afterwards).
Result<pid_t> ForkExec(const std::vector<std::string>& argv, const ProgramOptions& options,
                       int out_fd, int err_fd) {
  if (argv.empty()) {
    return InvalidArgument("no program to run");
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = argv;
  std::vector<std::string> env = BuildEnv(options.env);
  std::vector<char*> arg_ptrs = Pointers(args);
  std::vector<char*> env_ptrs = Pointers(env);
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const bool die_with_parent = options.die_with_parent;
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    return ErrnoStatus(errno, "open", "/dev/null");
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(null_fd);
    return ErrnoStatus(err, "fork", argv[0]);
  }
  if (pid == 0) {
    if (die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) {
        _exit(127);  // the test died between fork and prctl
      }
    } else {
      setsid();  // out of the test's process group, so a Ctrl-C there leaves it running
    }
    dup2(null_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    if (cwd != nullptr && chdir(cwd) != 0) {
      _exit(126);
    }
    execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    _exit(127);
  }
  close(null_fd);
  return pid;
}

int ExitCode(int wstatus) {
  if (WIFEXITED(wstatus)) {
    return WEXITSTATUS(wstatus);
  }
  return WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : -1;
}

int WaitBlocking(pid_t pid) {
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      return -1;
    }
  }
  return ExitCode(wstatus);
}

}  // namespace

bool KeepTestServers() {
  const char* keep = getenv("FERRY_KEEP_TEST_SERVERS");
  return keep != nullptr && *keep != '\0' && std::string_view(keep) != "0";
}

Result<Subprocess> Subprocess::Start(const std::vector<std::string>& argv,
                                     const std::string& log_path, const ProgramOptions& options) {
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return ErrnoStatus(errno, "open", log_path);
  }
  Result<pid_t> pid = ForkExec(argv, options, log_fd, log_fd);
  close(log_fd);
  if (!pid.ok()) {
    return pid.status();
  }
  std::string name = argv[0].substr(argv[0].rfind('/') + 1);
  return Subprocess(*pid, std::move(name));
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(other.pid_), name_(std::move(other.name_)) {
  other.pid_ = -1;
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Kill().IgnoreError();
    pid_ = other.pid_;
    name_ = std::move(other.name_);
    other.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() {
  Kill().IgnoreError();
}

bool Subprocess::Alive() const {
  if (pid_ <= 0) {
    return false;
  }
  std::string state = ProcessState(pid_);
  return !state.empty() && state != "Z" && state != "X";
}

std::optional<int> Subprocess::TryWait() {
  if (pid_ <= 0) {
    return std::nullopt;
  }
  int wstatus = 0;
  if (waitpid(pid_, &wstatus, WNOHANG) != pid_) {
    return std::nullopt;
  }
  pid_ = -1;
  return ExitCode(wstatus);
}

Status Subprocess::Kill() {
  if (pid_ <= 0) {
    return Status::OK();
  }
  kill(pid_, SIGKILL);
  pid_t pid = pid_;
  pid_ = -1;
  if (WaitBlocking(pid) < 0 && errno != ECHILD) {
    return ErrnoStatus(errno, "waitpid", name_);
  }
  return Status::OK();
}

Status Subprocess::Terminate(std::chrono::milliseconds grace) {
  if (pid_ <= 0) {
    return Status::OK();
  }
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (TryWait().has_value()) {
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Kill();
}

Result<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout, const ProgramOptions& options) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return ErrnoStatus(errno, "pipe", argv.empty() ? "" : argv[0]);
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return ErrnoStatus(err, "pipe", argv.empty() ? "" : argv[0]);
  }
  Result<pid_t> pid = ForkExec(argv, options, out_pipe[1], err_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!pid.ok()) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return pid.status();
  }
  ProgramOutput output;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&output.out, &output.err};
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  char buffer[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      break;
    }
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  if (timed_out) {
    kill(*pid, SIGKILL);
  }
  for (pollfd& fd : fds) {
    if (fd.fd >= 0) {
      close(fd.fd);
    }
  }
  output.exit_code = WaitBlocking(*pid);
  if (timed_out) {
    return Unavailable("{} did not finish within {} ms; stdout:\n{}\nstderr:\n{}", argv[0],
                       timeout.count(), output.out, output.err);
  }
  return output;
}

Result<std::string> FindProgram(const std::string& name, const std::vector<std::string>& preferred,
                                const std::string& hint) {
  std::vector<std::string> candidates = preferred;
  if (const char* path = getenv("PATH"); path != nullptr) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (!dir.empty()) {
        candidates.push_back(dir + "/" + name);
      }
    }
  }
  for (const std::string& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return NotFound("{} not found ({})", name, hint);
}

std::string ProcessState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so look after the last ')'.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= stat.size()) {
    return "";
  }
  return stat.substr(close_paren + 2, 1);
}

std::optional<std::string> DescribeExit(pid_t pid) {
  siginfo_t info{};
  // WNOWAIT: look without reaping.
  if (pid <= 0 || waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid == 0) {
    return std::nullopt;
  }
  if (info.si_code == CLD_EXITED) {
    return "exited with status " + std::to_string(info.si_status);
  }
  return "was killed by signal " + std::to_string(info.si_status) + " (" +
         strsignal(info.si_status) + ")";
}

std::string TailOfFile(const std::string& path, int lines) {
  std::ifstream in(path);
  if (!in) {
    return "(" + path + ": cannot read)";
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t start = text.size();
  for (int n = 0; n <= lines && start > 0; ++n) {
    start = text.rfind('\n', start - 1);
    if (start == std::string::npos) {
      return text;
    }
  }
  return start == 0 ? text : text.substr(start + 1);
}

}  // namespace ferry::testing
