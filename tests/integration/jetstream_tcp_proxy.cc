#include "jetstream_tcp_proxy.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "ferry/testing/loopback.h"

namespace ferry::testing {
namespace {

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<TcpProxy>> TcpProxy::Start(int upstream_port) {
  FERRY_ASSIGN_OR_RETURN(int listener, ListenOnLoopback(0));
  Result<int> port = LocalPort(listener);
  if (!port.ok()) {
    close(listener);
    return port.status();
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    close(listener);
    return ErrnoStatus(errno, "pipe", "proxy");
  }
  std::unique_ptr<TcpProxy> proxy(
      new TcpProxy(upstream_port, *port, listener, pipe_fds[0], pipe_fds[1]));
  proxy->thread_ = std::thread([p = proxy.get()] { p->Run(); });
  return proxy;
}

TcpProxy::TcpProxy(int upstream_port, int port, int listener, int wake_read, int wake_write)
    : upstream_port_(upstream_port),
      port_(port),
      listener_(listener),
      wake_read_(wake_read),
      wake_write_(wake_write) {}

TcpProxy::~TcpProxy() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    command_ = Command::kStop;
  }
  char byte = 0;
  (void)!write(wake_write_, &byte, 1);
  thread_.join();
  close(wake_read_);
  close(wake_write_);
}

void TcpProxy::Cut() {
  std::unique_lock<std::mutex> lock(mu_);
  command_ = Command::kCut;
  char byte = 0;
  (void)!write(wake_write_, &byte, 1);
  done_.wait(lock, [this] { return command_ == Command::kNone; });
}

Status TcpProxy::Restore() {
  std::lock_guard<std::mutex> lock(mu_);
  if (listener_ >= 0) {
    return Status::OK();
  }
  FERRY_ASSIGN_OR_RETURN(listener_, ListenOnLoopback(port_));
  char byte = 0;
  (void)!write(wake_write_, &byte, 1);  // poll the new listener
  return Status::OK();
}

void TcpProxy::CloseAll() {
  for (auto [client, upstream] : pairs_) {
    close(client);
    close(upstream);
  }
  pairs_.clear();
  if (listener_ >= 0) {
    close(listener_);
    listener_ = -1;
  }
}

bool TcpProxy::Relay(int from, int to) {
  char buffer[64 * 1024];
  ssize_t n = recv(from, buffer, sizeof(buffer), 0);
  if (n < 0 && errno == EINTR) {
    return true;
  }
  return n > 0 && WriteAll(to, buffer, static_cast<size_t>(n));
}

void TcpProxy::Run() {
  while (true) {
    std::vector<pollfd> fds;
    int listener;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (command_ == Command::kStop) {
        CloseAll();
        return;
      }
      if (command_ == Command::kCut) {
        CloseAll();
        command_ = Command::kNone;
        done_.notify_all();
      }
      listener = listener_;
    }
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listener, POLLIN, 0});  // ignored by poll() while -1
    for (auto [client, upstream] : pairs_) {
      fds.push_back({client, POLLIN, 0});
      fds.push_back({upstream, POLLIN, 0});
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      continue;
    }
    if (fds[0].revents != 0) {
      char drain[16];
      (void)!read(wake_read_, drain, sizeof(drain));
      continue;  // re-read the command and the listener first
    }
    // Relay first, over the pairs that were polled; a connection accepted below joins the next
    // round.
    std::vector<std::pair<int, int>> alive;
    for (size_t i = 0; i < pairs_.size(); ++i) {
      auto [client, upstream] = pairs_[i];
      short client_events = fds[2 + 2 * i].revents;
      short upstream_events = fds[3 + 2 * i].revents;
      bool ok = (client_events == 0 || Relay(client, upstream)) &&
                (upstream_events == 0 || Relay(upstream, client));
      if (ok) {
        alive.emplace_back(client, upstream);
      } else {
        close(client);
        close(upstream);
      }
    }
    pairs_ = std::move(alive);
    if (listener >= 0 && (fds[1].revents & POLLIN) != 0) {
      int client = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) {
        int upstream = ConnectToLoopback(upstream_port_);
        if (upstream >= 0) {
          pairs_.emplace_back(client, upstream);
        } else {
          close(client);
        }
      }
    }
  }
}

}  // namespace ferry::testing
