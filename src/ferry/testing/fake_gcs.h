// FakeGcs: a Google Cloud Storage endpoint for integration tests, fake-gcs-server (Go module
// github.com/fsouza/fake-gcs-server, pinned in tools/setup_gcs.sh, built by `make setup-gcs` into
// ~/.cache/ferry/fake-gcs-server-<version>/; FERRY_FAKE_GCS names another binary), run as
// `fake-gcs-server -scheme http -backend memory -host 127.0.0.1 -port <free port>`. Objects live
// in the emulator's memory. It takes no credentials: requests are anonymous, as Google's clients
// send them when STORAGE_EMULATOR_HOST points at an emulator. URLs are those of the JSON API:
// http://127.0.0.1:PORT/storage/v1/b/BUCKET/o/... and /upload/storage/v1/b/BUCKET/o?uploadType=...
//
// What the pinned emulator enforces (tests/integration/fake_gcs_test.cc, docs/testing-servers.md):
// `ifGenerationMatch=0` on media, multipart and resumable uploads (412 on an existing name, the
// first object kept; one winner among concurrent creates). It has no plain XML API PUT.
//
// Start-up: a temp dir /tmp/ferry-fake-gcs-XXXXXX (the working directory and fake-gcs.log), a
// free port, the process, then wait until the port accepts connections. A port taken between
// picking and binding it (a race with another test) is retried with a new port.
//
// Lifetime: as azurite.h: PR_SET_PDEATHSIG(SIGKILL) from the starting thread (which must outlive
// the server), the destructor SIGKILLs and reaps it and removes the temp dir, and
// FERRY_KEEP_TEST_SERVERS=1 keeps it running after the test for debugging.
//
// Thread-safety: Start and Stop from one thread; the rest from any thread (Request runs its own
// curl process).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/testing/s3_cli.h"
#include "ferry/testing/subprocess.h"

namespace ferry::testing {

class FakeGcs {
 public:
  struct Options {
    // How long Start waits for the port to accept connections.
    std::chrono::milliseconds ready_timeout{60000};
  };

  // The pinned version and where `make setup-gcs` puts its binary.
  static const char* Version();
  static std::string DefaultBinary();

  // NotFound when the binary is missing (`make setup-gcs`); Unavailable when the emulator exits
  // or does not come up (the message holds its log).
  static Result<std::unique_ptr<FakeGcs>> Start(Options options);
  static Result<std::unique_ptr<FakeGcs>> Start() { return Start(Options{}); }
  // One emulator for the whole test binary, as Azurite::Shared().
  static Result<FakeGcs*> Shared();
  ~FakeGcs();

  FakeGcs(const FakeGcs&) = delete;
  FakeGcs& operator=(const FakeGcs&) = delete;

  // "http://127.0.0.1:PORT": the base of every URL, and what STORAGE_EMULATOR_HOST is set to.
  std::string endpoint() const;
  int port() const { return port_; }
  pid_t pid() const { return process_.pid(); }
  const std::string& dir() const { return dir_; }

  // Running and not a zombie.
  bool Alive() const;
  // SIGKILL, then reap; the objects are gone with it.
  Status Stop();
  // The emulator's output.
  std::string Log() const;

  // One request sent by curl: METHOD endpoint()+path_and_query, with extra "Name: value" headers
  // and a body (sent for PUT and POST, even when empty). Any HTTP status is a reply; an error
  // only when curl fails (connection refused: Unavailable). `response_headers` (when not null)
  // gets the answer's headers, one "Name: value" a line.
  Result<HttpReply> Request(std::string_view method, std::string_view path_and_query,
                            const std::vector<std::string>& headers = {},
                            std::string_view body = "",
                            std::string* response_headers = nullptr) const;
  // Creates a bucket through the JSON API. AlreadyExists when it exists.
  Status CreateBucket(std::string_view bucket) const;

 private:
  FakeGcs(Options options, std::string dir, int port);
  Status Spawn(const std::string& binary);

  const Options options_;
  const std::string dir_;
  const int port_;
  const bool keep_;
  Subprocess process_;
};

}  // namespace ferry::testing
