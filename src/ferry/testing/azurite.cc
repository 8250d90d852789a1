#include "ferry/testing/azurite.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "ferry/testing/loopback.h"
#include "ferry/testing/nats_server.h"
#include "ferry/testing/test_server.h"

namespace ferry::testing {
namespace {

constexpr char kAccount[] = "devstoreaccount1";
// Published by Microsoft with the emulator; it opens nothing but local emulators.
constexpr char kAccountKey[] =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

}  // namespace

Result<std::unique_ptr<Azurite>> Azurite::Start(Options options) {
  FERRY_ASSIGN_OR_RETURN(std::string node,
                         FindProgram("node", {}, "Node.js; `make setup` installs it"));
  const std::string main = AzuriteNpmDir() + "/node_modules/.bin/azurite-blob";
  if (access(main.c_str(), R_OK) != 0) {
    return NotFound("{} not found: run `make setup-npm` (npm ci in tests/azurite)", main);
  }
  return StartOnFreePort<Azurite>(
      "azurite", "EADDRINUSE",
      [&](std::string dir, int port) {
        return std::unique_ptr<Azurite>(new Azurite(options, std::move(dir), port));
      },
      [&](Azurite& server) { return server.Spawn(node, main); });
}

Result<Azurite*> Azurite::Shared() {
  return SharedServer<Azurite>("azurite", [] { return Start(); });
}

Azurite::Azurite(Options options, std::string dir, int port)
    : options_(options), dir_(std::move(dir)), port_(port), keep_(KeepTestServers()) {}

Azurite::~Azurite() {
  if (keep_ && process_.pid() > 0) {
    fprintf(stderr,
            "FERRY_KEEP_TEST_SERVERS: azurite kept at %s (connection string \"%s\"), log in "
            "%s/azurite.log; stop it with: kill -9 %d; rm -rf %s\n",
            endpoint().c_str(), connection_string().c_str(), dir_.c_str(), process_.pid(),
            dir_.c_str());
    process_.Release();
    return;
  }
  Stop().IgnoreError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status Azurite::MakeCertificate() const {
  FERRY_ASSIGN_OR_RETURN(std::string openssl, FindProgram("openssl", {}, "the Debian openssl"));
  FERRY_ASSIGN_OR_RETURN(
      ProgramOutput out,
      RunProgram({openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                  "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                  "-keyout", dir_ + "/key.pem", "-out", dir_ + "/cert.pem"},
                 std::chrono::seconds(60)));
  if (out.exit_code != 0) {
    return Unavailable("azurite: openssl req failed ({}): {}", out.exit_code, out.err);
  }
  return Status::OK();
}

Status Azurite::Spawn(const std::string& node, const std::string& main) {
  ProgramOptions options;
  options.cwd = dir_;  // the emulator writes nothing with in-memory persistence; if it did, here
  options.die_with_parent = !keep_;
  std::vector<std::string> argv = {node,
                                   main,
                                   "--inMemoryPersistence",
                                   "--extentMemoryLimit",
                                   std::to_string(options_.memory_limit_mb),
                                   "--skipApiVersionCheck",
                                   "--disableTelemetry",
                                   "--blobHost",
                                   "127.0.0.1",
                                   "--blobPort",
                                   std::to_string(port_)};
  if (options_.oauth) {
    FERRY_RETURN_IF_ERROR(MakeCertificate());
    argv.insert(argv.end(),
                {"--cert", dir_ + "/cert.pem", "--key", dir_ + "/key.pem", "--oauth", "basic"});
  }
  FERRY_ASSIGN_OR_RETURN(process_, Subprocess::Start(argv, dir_ + "/azurite.log", options));
  auto deadline = std::chrono::steady_clock::now() + options_.ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_.Alive()) {
      Stop().IgnoreError();
      return Unavailable("azurite on port {} exited during start-up; log:\n{}", port_, Log());
    }
    int fd = ConnectToLoopback(port_);
    if (fd >= 0) {
      close(fd);
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Stop().IgnoreError();
  return Unavailable("azurite on port {} did not accept connections within {} ms; log:\n{}", port_,
                     options_.ready_timeout.count(), Log());
}

std::string Azurite::endpoint() const {
  return std::string(options_.oauth ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
         "/" + kAccount;
}

std::string Azurite::ca_file() const {
  return options_.oauth ? dir_ + "/cert.pem" : "";
}

const std::string& Azurite::account() {
  static const std::string account = kAccount;
  return account;
}

const std::string& Azurite::account_key() {
  static const std::string key = kAccountKey;
  return key;
}

std::string Azurite::connection_string() const {
  return std::string("DefaultEndpointsProtocol=") + (options_.oauth ? "https" : "http") +
         ";AccountName=" + kAccount + ";AccountKey=" + kAccountKey + ";BlobEndpoint=" + endpoint() +
         ";";
}

bool Azurite::Alive() const {
  return process_.Alive();
}

Status Azurite::Stop() {
  return process_.Kill();
}

std::string Azurite::Log() const {
  return TailOfFile(dir_ + "/azurite.log", 40);
}

AzureBlobCli Azurite::Cli() const {
  return AzureBlobCli(connection_string(), std::chrono::minutes(5), ca_file());
}

Status Azurite::CreateContainer(std::string_view container) const {
  return Cli().CreateContainer(container);
}

}  // namespace ferry::testing
