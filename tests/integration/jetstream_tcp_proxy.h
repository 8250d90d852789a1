// TcpProxy: a TCP relay on 127.0.0.1 between a client under test and a server, which a test can
// cut (drop every connection and refuse new ones) and restore on the same port. It simulates a
// network partition while the server keeps running, so what the server does meanwhile (trim a
// stream, keep a consumer) is under the test's control rather than a race with reconnects.
//
// Thread-safety: Cut()/Restore() from the test thread; one relay thread inside.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::testing {

class TcpProxy {
 public:
  static Result<std::unique_ptr<TcpProxy>> Start(int upstream_port);
  ~TcpProxy();

  int port() const { return port_; }
  // Closes every relayed connection and the listening socket; returns when done.
  void Cut();
  // Listens again on the same port.
  Status Restore();

 private:
  enum class Command { kNone, kCut, kStop };
  TcpProxy(int upstream_port, int port, int listener, int wake_read, int wake_write);
  void Run();
  void CloseAll();
  bool Relay(int from, int to);

  const int upstream_port_;
  const int port_;
  int listener_;  // -1 while cut; owned by the relay thread except in Restore()
  const int wake_read_;
  const int wake_write_;
  std::vector<std::pair<int, int>> pairs_;  // (client, upstream); relay thread only
  std::mutex mu_;
  std::condition_variable done_;
  Command command_ = Command::kNone;  // guarded by mu_
  std::thread thread_;
};

}  // namespace ferry::testing
