#include "ferry/testing/fake_gcs.h"

#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ferry/testing/cache_dir.h"
#include "ferry/testing/loopback.h"
#include "ferry/testing/test_server.h"

namespace ferry::testing {
namespace {

constexpr char kVersion[] = "v1.56.1";  // tools/setup_gcs.sh installs this one
constexpr char kGcsCurlHint[] = "Debian package curl; `make setup` installs it";

std::atomic<int> gcs_request_counter{0};

}  // namespace

const char* FakeGcs::Version() {
  return kVersion;
}

std::string FakeGcs::DefaultBinary() {
  return FerryCacheDir() + "/fake-gcs-server-" + kVersion + "/fake-gcs-server";
}

Result<std::unique_ptr<FakeGcs>> FakeGcs::Start(Options options) {
  const char* override_binary = getenv("FERRY_FAKE_GCS");
  const std::string binary = override_binary != nullptr && *override_binary != '\0'
                                 ? std::string(override_binary)
                                 : DefaultBinary();
  if (access(binary.c_str(), X_OK) != 0) {
    return NotFound("{} not found: run `make setup-gcs` (fake-gcs-server {}, the GCS emulator)",
                    binary, kVersion);
  }
  return StartOnFreePort<FakeGcs>(
      "fake-gcs", "address already in use",
      [&](std::string dir, int port) {
        return std::unique_ptr<FakeGcs>(new FakeGcs(options, std::move(dir), port));
      },
      [&](FakeGcs& server) { return server.Spawn(binary); });
}

Result<FakeGcs*> FakeGcs::Shared() {
  return SharedServer<FakeGcs>("fake-gcs-server", [] { return Start(); });
}

FakeGcs::FakeGcs(Options options, std::string dir, int port)
    : options_(options), dir_(std::move(dir)), port_(port), keep_(KeepTestServers()) {}

FakeGcs::~FakeGcs() {
  if (keep_ && process_.pid() > 0) {
    fprintf(stderr,
            "FERRY_KEEP_TEST_SERVERS: fake-gcs-server kept at %s, log in %s/fake-gcs.log; stop it "
            "with: kill -9 %d; rm -rf %s\n",
            endpoint().c_str(), dir_.c_str(), process_.pid(), dir_.c_str());
    process_.Release();
    return;
  }
  Stop().IgnoreError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Status FakeGcs::Spawn(const std::string& binary) {
  ProgramOptions options;
  options.cwd = dir_;
  options.die_with_parent = !keep_;
  // -public-host stays storage.googleapis.com (its default): only requests whose Host is that
  // name reach its XML routes, so every request of ours, to 127.0.0.1:PORT, is a JSON API one.
  std::vector<std::string> argv = {binary,       "-scheme", "http",
                                   "-backend",   "memory",  "-host",
                                   "127.0.0.1",  "-port",   std::to_string(port_),
                                   "-log-level", "warn"};
  FERRY_ASSIGN_OR_RETURN(process_, Subprocess::Start(argv, dir_ + "/fake-gcs.log", options));
  auto deadline = std::chrono::steady_clock::now() + options_.ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_.Alive()) {
      Stop().IgnoreError();
      return Unavailable("fake-gcs-server on port {} exited during start-up; log:\n{}", port_,
                         Log());
    }
    int fd = ConnectToLoopback(port_);
    if (fd >= 0) {
      close(fd);
      return Status::OK();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Stop().IgnoreError();
  return Unavailable("fake-gcs-server on port {} did not accept connections within {} ms; log:\n{}",
                     port_, options_.ready_timeout.count(), Log());
}

std::string FakeGcs::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool FakeGcs::Alive() const {
  return process_.Alive();
}

Status FakeGcs::Stop() {
  return process_.Kill();
}

std::string FakeGcs::Log() const {
  return TailOfFile(dir_ + "/fake-gcs.log", 40);
}

Result<HttpReply> FakeGcs::Request(std::string_view method, std::string_view path_and_query,
                                   const std::vector<std::string>& headers, std::string_view body,
                                   std::string* response_headers) const {
  FERRY_ASSIGN_OR_RETURN(std::string curl, FindProgram("curl", {"/usr/bin/curl"}, kGcsCurlHint));
  const std::string tag =
      std::to_string(getpid()) + "-" + std::to_string(gcs_request_counter.fetch_add(1));
  std::vector<std::string> argv = {curl,       "--silent", "--show-error", "--max-time",    "120",
                                   "--output", "-",        "--write-out",  "\n%{http_code}"};
  std::string headers_path;
  if (response_headers != nullptr) {
    headers_path = dir_ + "/headers-" + tag;
    argv.insert(argv.end(), {"--dump-header", headers_path});
  }
  if (method == "HEAD") {
    argv.push_back("--head");
  } else {
    argv.push_back("--request");
    argv.emplace_back(method);
  }
  bool content_type = false;
  for (const std::string& header : headers) {
    argv.push_back("--header");
    argv.push_back(header);
    content_type = content_type || strncasecmp(header.c_str(), "content-type:", 13) == 0;
  }
  std::string body_path;
  if (method == "PUT" || method == "POST") {
    body_path = dir_ + "/body-" + tag;
    std::ofstream out(body_path, std::ios::binary);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    out.close();
    if (!out) {
      return IOError("write {}", body_path);
    }
    if (!content_type) {
      argv.push_back("--header");
      argv.push_back("Content-Type: application/octet-stream");
    }
    argv.push_back("--data-binary");
    argv.push_back("@" + body_path);
  }
  argv.push_back(endpoint() + std::string(path_and_query));
  Result<ProgramOutput> out = RunProgram(argv, std::chrono::seconds(125));
  if (!body_path.empty()) {
    unlink(body_path.c_str());
  }
  if (!headers_path.empty()) {
    std::ifstream in(headers_path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    response_headers->clear();
    for (char c : text) {
      if (c != '\r') {
        response_headers->push_back(c);
      }
    }
    unlink(headers_path.c_str());
  }
  if (!out.ok()) {
    return out.status();
  }
  return CurlReply(*out, std::string(method) + " " + endpoint() + std::string(path_and_query));
}

Status FakeGcs::CreateBucket(std::string_view bucket) const {
  FERRY_ASSIGN_OR_RETURN(HttpReply reply, Request("POST", "/storage/v1/b?project=ferry-test",
                                                  {"Content-Type: application/json"},
                                                  "{\"name\":\"" + std::string(bucket) + "\"}"));
  if (reply.status == 200) {
    return Status::OK();
  }
  if (reply.status == 409) {
    return AlreadyExists("bucket {} at {}: {}", bucket, endpoint(), reply.body);
  }
  return Unavailable("create bucket {} at {}: HTTP {}: {}", bucket, endpoint(), reply.status,
                     reply.body);
}

}  // namespace ferry::testing
