#include "store_fault_proxy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>

#include "ferry/testing/loopback.h"

namespace ferry::fault {
namespace {

constexpr size_t kMaxHead = 64 * 1024;

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Closes with an RST instead of a FIN: the peer sees "connection reset".
void Reset(int fd) {
  linger l{.l_onoff = 1, .l_linger = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

// A socket with a read buffer: HTTP heads, exact byte counts, chunked bodies.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}

  // Reads up to and including the blank line that ends a head; nullopt at EOF or on an error.
  std::optional<std::string> Head() {
    while (true) {
      size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::string head = buffer_.substr(0, end + 4);
        buffer_.erase(0, end + 4);
        return head;
      }
      if (buffer_.size() > kMaxHead || !Fill()) {
        return std::nullopt;
      }
    }
  }
  // Passes `n` bytes to `sink` as they arrive; false on EOF, an error or a sink that refused.
  bool Copy(uint64_t n, const std::function<bool(std::string_view)>& sink) {
    while (n > 0) {
      if (buffer_.empty() && !Fill()) {
        return false;
      }
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n, buffer_.size()));
      if (!sink(std::string_view(buffer_).substr(0, take))) {
        return false;
      }
      buffer_.erase(0, take);
      n -= take;
    }
    return true;
  }
  // One line ending in CRLF (chunk sizes, trailers), CRLF included.
  std::optional<std::string> Line() {
    while (true) {
      size_t end = buffer_.find("\r\n");
      if (end != std::string::npos) {
        std::string line = buffer_.substr(0, end + 2);
        buffer_.erase(0, end + 2);
        return line;
      }
      if (buffer_.size() > kMaxHead || !Fill()) {
        return std::nullopt;
      }
    }
  }
  // Everything until EOF.
  bool CopyToEof(const std::function<bool(std::string_view)>& sink) {
    while (true) {
      if (!buffer_.empty()) {
        if (!sink(buffer_)) {
          return false;
        }
        buffer_.clear();
      }
      if (!Fill()) {
        return true;
      }
    }
  }

 private:
  bool Fill() {
    char chunk[64 * 1024];
    while (true) {
      ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return false;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
  }

  const int fd_;
  std::string buffer_;
};

// The value of a header in a head ("" when absent), by case-insensitive name.
std::string HeaderValue(std::string_view head, std::string_view name) {
  size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    const size_t start = at + 2;
    const size_t end = head.find("\r\n", start);
    std::string_view line = head.substr(start, end - start);
    const size_t colon = line.find(':');
    if (colon == name.size() && ::strncasecmp(line.data(), name.data(), name.size()) == 0) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
      }
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
        value.remove_suffix(1);
      }
      return std::string(value);
    }
    at = end;
  }
  return "";
}

bool HasToken(std::string value, std::string_view token) {
  std::transform(value.begin(), value.end(), value.begin(), ::tolower);
  return value.find(token) != std::string::npos;
}

uint64_t ContentLength(std::string_view head) {
  std::string v = HeaderValue(head, "Content-Length");
  return v.empty() ? 0 : std::strtoull(v.c_str(), nullptr, 10);
}

// Relays one response from `upstream` to `sink`; false when the exchange broke. `keep` says
// whether the connection may carry another request.
bool RelayResponse(Reader* upstream, std::string_view method,
                   const std::function<bool(std::string_view)>& sink, bool* keep) {
  while (true) {
    std::optional<std::string> head = upstream->Head();
    if (!head || head->size() < 12 || !sink(*head)) {
      return false;
    }
    const int status = std::atoi(head->c_str() + 9);
    if (status >= 100 && status < 200) {
      continue;  // 100 Continue: the final answer follows
    }
    *keep = !HasToken(HeaderValue(*head, "Connection"), "close");
    if (method == "HEAD" || status == 204 || status == 304) {
      return true;
    }
    if (HasToken(HeaderValue(*head, "Transfer-Encoding"), "chunked")) {
      while (true) {
        std::optional<std::string> size_line = upstream->Line();
        if (!size_line || !sink(*size_line)) {
          return false;
        }
        const uint64_t size = std::strtoull(size_line->c_str(), nullptr, 16);
        if (size == 0) {
          // Trailers, up to the blank line.
          while (true) {
            std::optional<std::string> line = upstream->Line();
            if (!line || !sink(*line)) {
              return false;
            }
            if (*line == "\r\n") {
              return true;
            }
          }
        }
        if (!upstream->Copy(size + 2, sink)) {
          return false;
        }
      }
    }
    std::string length = HeaderValue(*head, "Content-Length");
    if (!length.empty()) {
      return upstream->Copy(std::strtoull(length.c_str(), nullptr, 10), sink);
    }
    *keep = false;
    return upstream->CopyToEof(sink);
  }
}

// `head` with the query parameter `name` (and its value) removed from the request target.
std::string WithoutQueryParameter(const std::string& head, const std::string& name) {
  const size_t target_start = head.find(' ') + 1;
  const size_t target_end = head.find(' ', target_start);
  const size_t query = head.find('?', target_start);
  if (name.empty() || query == std::string::npos || query > target_end) {
    return head;
  }
  std::string kept;
  size_t at = query + 1;
  while (at < target_end) {
    size_t amp = head.find('&', at);
    if (amp == std::string::npos || amp > target_end) {
      amp = target_end;
    }
    const std::string pair = head.substr(at, amp - at);
    if (pair.substr(0, pair.find('=')) != name) {
      kept += (kept.empty() ? "" : "&") + pair;
    }
    at = amp + 1;
  }
  return head.substr(0, query) + (kept.empty() ? "" : "?" + kept) + head.substr(target_end);
}

std::string SlowDownResponse(StoreDialect dialect, std::string_view target) {
  if (dialect == StoreDialect::kGcs) {
    const std::string body =
        R"({"error":{"code":503,"message":"Backend Error","errors":[{"domain":"global",)"
        R"("reason":"backendError","message":"Backend Error"}]}})";
    return fmt::format(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=UTF-8\r\n"
        "Content-Length: {}\r\nConnection: keep-alive\r\n\r\n{}",
        body.size(), body);
  }
  if (dialect == StoreDialect::kAzure) {
    // As Azure Storage throttles: 503 with the code in the body and in x-ms-error-code.
    const std::string body =
        "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>ServerBusy</Code>"
        "<Message>The server is busy.\nRequestId:ferry-fault-proxy</Message></Error>";
    return fmt::format(
        "HTTP/1.1 503 The server is busy.\r\nContent-Type: application/xml\r\n"
        "x-ms-error-code: ServerBusy\r\nx-ms-request-id: ferry-fault-proxy\r\n"
        "Content-Length: {}\r\nConnection: keep-alive\r\n\r\n{}",
        body.size(), body);
  }
  const std::string body = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please "
      "reduce your request rate.</Message><Resource>{}</Resource><RequestId>ferry-fault-proxy"
      "</RequestId></Error>",
      target);
  return fmt::format(
      "HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n"
      "Connection: keep-alive\r\n\r\n{}",
      body.size(), body);
}

}  // namespace

Result<std::unique_ptr<StoreFaultProxy>> StoreFaultProxy::Start(int upstream_port, uint64_t seed,
                                                                StoreDialect dialect) {
  FERRY_ASSIGN_OR_RETURN(int listener, testing::ListenOnLoopback(0));
  Result<int> port = testing::LocalPort(listener);
  int pipe_fds[2];
  if (!port.ok() || ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(listener);
    return port.ok() ? ErrnoStatus(errno, "pipe", "S3 fault proxy") : port.status();
  }
  std::unique_ptr<StoreFaultProxy> proxy(
      new StoreFaultProxy(upstream_port, listener, *port, pipe_fds[0], pipe_fds[1], seed, dialect));
  proxy->accept_thread_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  return proxy;
}

StoreFaultProxy::StoreFaultProxy(int upstream_port, int listener, int port, int wake_read,
                                 int wake_write, uint64_t seed, StoreDialect dialect)
    : upstream_port_(upstream_port),
      dialect_(dialect),
      listener_(listener),
      port_(port),
      wake_read_(wake_read),
      wake_write_(wake_write),
      rng_(seed) {}

StoreFaultProxy::~StoreFaultProxy() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : sockets_) {
      ::shutdown(fd, SHUT_RDWR);  // wakes the connection threads; each closes its own
    }
  }
  char byte = 0;
  (void)!::write(wake_write_, &byte, 1);
  accept_thread_.join();
  {
    std::unique_lock<std::mutex> lock(mu_);
    served_.wait(lock, [this] { return serving_ == 0; });
  }
  ::close(listener_);
  ::close(wake_read_);
  ::close(wake_write_);
}

std::string StoreFaultProxy::endpoint() const {
  return fmt::format("http://127.0.0.1:{}", port_);
}

void StoreFaultProxy::SetMix(const FaultMix& mix) {
  std::lock_guard<std::mutex> lock(mu_);
  mix_ = mix;
}

void StoreFaultProxy::SetDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  down_ = down;
  if (down) {
    for (int fd : sockets_) {
      ::shutdown(fd, SHUT_RDWR);  // each connection's thread sees it end and closes it
    }
  }
}

void StoreFaultProxy::StripQueryParameter(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  strip_ = std::move(name);
}

ProxyCounts StoreFaultProxy::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

bool StoreFaultProxy::Track(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) {
    return false;
  }
  sockets_.insert(fd);
  return true;
}

void StoreFaultProxy::Untrack(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  sockets_.erase(fd);
}

StoreFaultProxy::Fault StoreFaultProxy::Draw(FaultMix* mix, bool* down) {
  std::lock_guard<std::mutex> lock(mu_);
  *mix = mix_;
  ++counts_.requests;
  if (down_) {
    ++counts_.refused;
    *down = true;
    return Fault::kNone;
  }
  double x = std::uniform_real_distribution<double>(0, 1)(rng_);
  struct Choice {
    double p;
    Fault fault;
    int64_t* count;
  };
  for (const Choice& c : {Choice{mix_.slow_down, Fault::kSlowDown, &counts_.slow_down},
                          Choice{mix_.reset_before, Fault::kResetBefore, &counts_.reset_before},
                          Choice{mix_.reset_after, Fault::kResetAfter, &counts_.reset_after},
                          Choice{mix_.stall, Fault::kStall, &counts_.stall}}) {
    if (x < c.p) {
      ++*c.count;
      return c.fault;
    }
    x -= c.p;
  }
  return Fault::kNone;
}

void StoreFaultProxy::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{wake_read_, POLLIN, 0}, {listener_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      continue;
    }
    if (fds[0].revents != 0) {
      return;  // stopping
    }
    int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      ::close(client);
      return;
    }
    sockets_.insert(client);
    ++serving_;
    std::thread([this, client] { Serve(client); }).detach();
  }
}

void StoreFaultProxy::Serve(int client) {
  int upstream = -1;
  Reader from_client(client);
  std::optional<Reader> from_upstream;
  auto to = [](int fd) { return [fd](std::string_view data) { return WriteAll(fd, data); }; };
  bool reset_client = false;
  while (true) {
    std::optional<std::string> head = from_client.Head();
    if (!head) {
      break;
    }
    const std::string method = head->substr(0, head->find(' '));
    const size_t target_start = method.size() + 1;
    const std::string target =
        head->substr(target_start, head->find(' ', target_start) - target_start);
    if (HasToken(HeaderValue(*head, "Transfer-Encoding"), "chunked")) {
      // ferry's client sends a Content-Length; a chunked request is outside this proxy's scope.
      WriteAll(client, "HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\n\r\n");
      break;
    }
    const uint64_t body = ContentLength(*head);
    FaultMix mix;
    bool down = false;
    const Fault fault = Draw(&mix, &down);
    if (down) {
      reset_client = true;
      break;
    }
    if (fault == Fault::kSlowDown) {
      if (!from_client.Copy(body, [](std::string_view) { return true; }) ||
          !WriteAll(client, SlowDownResponse(dialect_, target))) {
        break;
      }
      continue;
    }
    if (fault == Fault::kResetBefore) {
      reset_client = true;
      break;
    }
    if (upstream < 0) {
      upstream = testing::ConnectToLoopback(upstream_port_);
      if (upstream < 0 || !Track(upstream)) {
        std::lock_guard<std::mutex> lock(mu_);
        ++counts_.refused;
        reset_client = true;
        break;
      }
      from_upstream.emplace(upstream);
    }
    if (fault == Fault::kStall) {
      const uint64_t half = body / 2;
      if (WriteAll(upstream, *head) && from_client.Copy(half, to(upstream))) {
        // Nothing moves until the client gives up or the stall ends.
        pollfd p{client, POLLIN, 0};
        const auto until = std::chrono::steady_clock::now() + mix.stall_for;
        while (std::chrono::steady_clock::now() < until) {
          if (::poll(&p, 1, 100) > 0) {
            char byte;
            if (::recv(client, &byte, 1, MSG_PEEK) <= 0) {
              break;  // the client closed (timed out) or the proxy stops
            }
            // More body bytes from the client: leave them unread, keep stalling.
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }
      }
      reset_client = true;
      break;
    }
    std::string strip;
    {
      std::lock_guard<std::mutex> lock(mu_);
      strip = strip_;
    }
    if (!WriteAll(upstream, WithoutQueryParameter(*head, strip)) ||
        !from_client.Copy(body, to(upstream))) {
      reset_client = true;
      break;
    }
    bool keep = true;
    if (fault == Fault::kResetAfter) {
      // The server's whole answer, so that it applied the request; the client gets a reset.
      RelayResponse(
          &*from_upstream, method, [](std::string_view) { return true; }, &keep);
      reset_client = true;
      break;
    }
    if (!RelayResponse(&*from_upstream, method, to(client), &keep)) {
      reset_client = true;
      break;
    }
    if (!keep) {
      break;
    }
  }
  if (reset_client) {
    Reset(client);
  }
  if (upstream >= 0) {
    Untrack(upstream);
    ::close(upstream);
  }
  std::lock_guard<std::mutex> lock(mu_);
  sockets_.erase(client);
  ::close(client);
  --serving_;
  served_.notify_all();
}

}  // namespace ferry::fault
