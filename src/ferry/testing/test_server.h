// What the test servers of testing/ (radosgw.h, azurite.h, fake_gcs.h) share about their start
// and their one instance per test binary:
//   - StartOnFreePort makes a temp dir /tmp/ferry-<name>-XXXXXX, picks a free loopback port and
//     starts the server there; when the start fails because another process took the port
//     between picking and binding it (`port_taken` in the server's log), it tries again with a
//     new dir and port, kServerStartAttempts times.
//   - SharedServer starts one server the first time a test asks for it and hands the same one to
//     every later test; it is destroyed at exit (killed, its dir removed). A start that failed
//     is remembered and reported to every test; a server that died since is Unavailable with
//     its log.
//
// Thread-safety: SharedServer from any thread; StartOnFreePort from the thread that will outlive
// the server (PR_SET_PDEATHSIG, subprocess.h).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/testing/nats_server.h"
#include "ferry/testing/subprocess.h"

namespace ferry::testing {

// `make(dir, port)` builds the server object (which owns the dir from then on) and `spawn`
// starts it.
template <typename Server>
Result<std::unique_ptr<Server>> StartOnFreePort(
    const std::string& name, std::string_view port_taken,
    const std::function<std::unique_ptr<Server>(std::string dir, int port)>& make,
    const std::function<Status(Server&)>& spawn) {
  Status last;
  for (int attempt = 1; attempt <= kServerStartAttempts; ++attempt) {
    std::string tmpl = "/tmp/ferry-" + name + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return ErrnoStatus(errno, "mkdtemp", tmpl);
    }
    Result<int> port = PickFreePort();
    if (!port.ok()) {
      std::filesystem::remove_all(tmpl);
      return port.status();
    }
    std::unique_ptr<Server> server = make(tmpl, *port);
    last = spawn(*server);
    if (last.ok()) {
      return server;
    }
    if (server->Log().find(port_taken) == std::string::npos) {
      return last;
    }
  }
  return last.WithContext("{}: {} attempts lost their port to another process", name,
                          kServerStartAttempts);
}

// `start` is called once, by the first caller.
template <typename Server>
Result<Server*> SharedServer(std::string_view name,
                             const std::function<Result<std::unique_ptr<Server>>()>& start) {
  static std::mutex mu;
  static std::unique_ptr<Server> server;  // destroyed at exit: process killed, dir removed
  static Status failure;
  static bool started = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!started) {
    started = true;
    Result<std::unique_ptr<Server>> result = start();
    if (result.ok()) {
      server = std::move(result).value();
    } else {
      failure = result.status();
    }
  }
  if (!failure.ok()) {
    return failure;
  }
  if (!server->Alive()) {
    return Unavailable("the shared {} at {} has died; log:\n{}", name, server->endpoint(),
                       server->Log());
  }
  return server.get();
}

}  // namespace ferry::testing
