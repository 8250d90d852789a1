#include "ferry/testing/nats_server.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ferry/testing/cache_dir.h"
#include "ferry/testing/loopback.h"

namespace ferry::testing {
namespace {

constexpr char kServerEnv[] = "FERRY_NATS_SERVER";

Result<std::string> FindDebianNatsServer() {
  std::vector<std::string> candidates;
  if (const char* path = getenv("PATH"); path != nullptr) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (!dir.empty()) {
        candidates.push_back(dir + "/nats-server");
      }
    }
  }
  candidates.push_back("/usr/sbin/nats-server");
  candidates.push_back("/usr/bin/nats-server");
  for (const std::string& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return NotFound(
      "nats-server not found on PATH or in /usr/sbin (Debian package nats-server: make setup-deb)");
}

Result<std::string> FindCurrentNatsServer() {
  std::string binary =
      FerryCacheDir() + "/nats-server-" + std::string(kCurrentNatsServer) + "/nats-server";
  if (access(binary.c_str(), X_OK) != 0) {
    return NotFound(
        "nats-server {} is not installed at {}: run `make setup-nats` (part of `make setup`; it "
        "builds the pinned release with `go install` from the Go module proxy)",
        kCurrentNatsServer, binary);
  }
  return binary;
}

bool Accepts(int port) {
  int fd = ConnectToLoopback(port);
  if (fd < 0) {
    return false;
  }
  close(fd);
  return true;
}

}  // namespace

std::vector<std::string> TestedNatsServers() {
  return {kDebianNatsServer, kCurrentNatsServer};
}

Result<std::string> NatsServerBinary(const std::string& server) {
  std::string choice = server;
  if (choice.empty()) {
    const char* env = getenv(kServerEnv);
    choice = env != nullptr && *env != '\0' ? env : kDebianNatsServer;
  }
  if (choice == kDebianNatsServer) {
    return FindDebianNatsServer();
  }
  if (choice == kCurrentNatsServer) {
    return FindCurrentNatsServer();
  }
  if (choice.find('/') != std::string::npos) {
    if (access(choice.c_str(), X_OK) != 0) {
      return NotFound("nats-server binary {} does not exist or is not executable{}", choice,
                      server.empty() ? " (from FERRY_NATS_SERVER)" : "");
    }
    return choice;
  }
  return InvalidArgument("unknown nats-server '{}'{}: name '{}', '{}' or a path to a binary",
                         choice, server.empty() ? " (from FERRY_NATS_SERVER)" : "",
                         kDebianNatsServer, kCurrentNatsServer);
}

std::string NatsServerTestName(const std::string& server) {
  std::string name;
  for (char c : server) {
    name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  }
  return name;
}

Result<int> PickFreePort() {
  FERRY_ASSIGN_OR_RETURN(int fd, ListenOnLoopback(0));
  Result<int> port = LocalPort(fd);
  close(fd);
  return port;
}

Result<std::unique_ptr<NatsServer>> NatsServer::Start(Options options) {
  FERRY_ASSIGN_OR_RETURN(std::string binary, NatsServerBinary(options.server));
  char tmpl[] = "/tmp/ferry-nats-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    return ErrnoStatus(errno, "mkdtemp", tmpl);
  }
  FERRY_ASSIGN_OR_RETURN(int port, PickFreePort());
  std::unique_ptr<NatsServer> server(
      new NatsServer(std::move(options), std::move(binary), tmpl, port));
  FERRY_RETURN_IF_ERROR(server->Spawn());
  return server;
}

NatsServer::NatsServer(Options options, std::string binary, std::string dir, int port)
    : options_(std::move(options)),
      binary_(std::move(binary)),
      dir_(std::move(dir)),
      store_dir_(dir_ + "/store"),
      log_path_(dir_ + "/server.log"),
      port_(port) {}

NatsServer::~NatsServer() {
  Kill9().IgnoreError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string NatsServer::url() const {
  return "nats://127.0.0.1:" + std::to_string(port_);
}

Status NatsServer::Spawn() {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = {binary_, "-js",       "-sd", store_dir_,
                                   "-a",    "127.0.0.1", "-p",  std::to_string(port_)};
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return ErrnoStatus(errno, "open", log_path_);
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(log_fd);
    return ErrnoStatus(err, "fork", binary_);
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
      _exit(127);  // the test died between fork and prctl
    }
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  stopping_ = false;
  return WaitReady();
}

Status NatsServer::WaitReady() {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.ready_timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Unavailable("nats-server on port {} exited during startup; log:\n{}", port_, Log());
    }
    if (Accepts(port_)) {
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill9().IgnoreError();
  return Unavailable("nats-server on port {} did not accept connections within {} ms; log:\n{}",
                     port_, options_.ready_timeout_ms, Log());
}

Status NatsServer::Reap() {
  int wstatus = 0;
  while (waitpid(pid_, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      int err = errno;
      pid_ = -1;
      return ErrnoStatus(err, "waitpid", binary_);
    }
  }
  pid_ = -1;
  return Status::OK();
}

Status NatsServer::Kill9() {
  if (pid_ <= 0) {
    return Status::OK();
  }
  stopping_ = true;
  kill(pid_, SIGKILL);
  return Reap();
}

Status NatsServer::Stop() {
  if (pid_ <= 0) {
    return Status::OK();
  }
  stopping_ = true;
  kill(pid_, SIGTERM);
  return Reap();
}

Status NatsServer::Restart() {
  if (pid_ > 0) {
    return Internal("nats-server on port {} is still running", port_);
  }
  return Spawn();
}

std::string NatsServer::Log() const {
  std::ifstream in(log_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::string> NatsServer::ExitReport() const {
  const pid_t pid = pid_;
  siginfo_t info{};
  // WNOWAIT: look without reaping (the owner's thread reaps).
  if (pid <= 0 || waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid == 0 || stopping_) {
    return std::nullopt;
  }
  std::string how = info.si_code == CLD_EXITED
                        ? "exited with status " + std::to_string(info.si_status)
                        : "was killed by signal " + std::to_string(info.si_status) + " (" +
                              strsignal(info.si_status) + ")";
  std::string log = Log();
  if (log.size() > 4096) {
    log = "..." + log.substr(log.size() - 4096);
  }
  return "nats-server on port " + std::to_string(port_) + " (pid " + std::to_string(pid) + ") " +
         how + "; the end of its log:\n" + log;
}

}  // namespace ferry::testing
