// Azurite: a real Azure Blob endpoint for integration tests, Microsoft's storage emulator (npm
// `azurite`, pinned in tests/azurite/package.json, installed by `make setup-npm`), run as
// `azurite-blob --inMemoryPersistence --skipApiVersionCheck --disableTelemetry` on
// 127.0.0.1:<free port>. Blobs live in the emulator's memory (capped, see Options). The account
// is the emulator's published development account, devstoreaccount1 and its well-known key; URLs
// are path-style: http://127.0.0.1:PORT/devstoreaccount1/CONTAINER/BLOB.
//
// With Options::oauth, the emulator serves HTTPS with a self-signed certificate for 127.0.0.1 (made
// with the openssl CLI in its temp dir: ca_file()) and accepts Microsoft Entra ID bearer tokens
// (`--oauth basic`: it checks each token's issuer, audience and lifetime, not its signature), as
// well as Shared Key.
//
// Start-up: a temp dir /tmp/ferry-azurite-XXXXXX (the working directory and azurite.log), a free
// port, the process, then wait until the port accepts connections. A port taken between picking
// and binding it (a race with another test) is retried with a new port.
//
// Lifetime: as radosgw.h: PR_SET_PDEATHSIG(SIGKILL) from the starting thread (which must outlive
// the server), the destructor SIGKILLs and reaps it and removes the temp dir, and
// FERRY_KEEP_TEST_SERVERS=1 keeps it running after the test for debugging.
//
// Thread-safety: Start and Stop from one thread; the rest from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/testing/azure_blob_cli.h"
#include "ferry/testing/subprocess.h"

namespace ferry::testing {

class Azurite {
 public:
  struct Options {
    // The emulator's cap on blob bytes held in memory (--extentMemoryLimit); it refuses writes
    // past it.
    int64_t memory_limit_mb = 1024;
    // How long Start waits for the port to accept connections.
    std::chrono::milliseconds ready_timeout{60000};
    // HTTPS and bearer tokens (above).
    bool oauth = false;
  };

  // NotFound when node or the npm package is missing (`make setup-npm`); Unavailable when the
  // emulator exits or does not come up (the message holds its log).
  static Result<std::unique_ptr<Azurite>> Start(Options options);
  static Result<std::unique_ptr<Azurite>> Start() { return Start(Options{}); }
  // One emulator for the whole test binary, as RadosGw::Shared().
  static Result<Azurite*> Shared();
  ~Azurite();

  Azurite(const Azurite&) = delete;
  Azurite& operator=(const Azurite&) = delete;

  // "http://127.0.0.1:PORT/devstoreaccount1": the account's blob endpoint (https with oauth).
  std::string endpoint() const;
  // With oauth: the PEM certificate clients must trust ("" otherwise).
  std::string ca_file() const;
  int port() const { return port_; }
  static const std::string& account();
  static const std::string& account_key();
  // For Azure SDKs and tools: protocol, account, key and BlobEndpoint.
  std::string connection_string() const;
  pid_t pid() const { return process_.pid(); }
  const std::string& dir() const { return dir_; }

  // Running and not a zombie.
  bool Alive() const;
  // SIGKILL, then reap; the blobs are gone with it.
  Status Stop();
  // The emulator's output (one line per request).
  std::string Log() const;

  // Microsoft's SDK pointed at this emulator (azure_blob_cli.h).
  AzureBlobCli Cli() const;
  // Creates a container through Cli(). AlreadyExists when it exists.
  Status CreateContainer(std::string_view container) const;

 private:
  Azurite(Options options, std::string dir, int port);
  Status Spawn(const std::string& node, const std::string& main);
  Status MakeCertificate() const;

  const Options options_;
  const std::string dir_;
  const int port_;
  const bool keep_;
  Subprocess process_;
};

}  // namespace ferry::testing
