// HttpClient against real local servers: cpp-httplib stand-ins (testing/http_stand_in.h) and a
// raw socket server that misbehaves on purpose (answers nothing, resets after reading).
#include "ferry/http/client.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "ferry/http/digest.h"
#include "ferry/http/retry.h"
#include "ferry/testing/http_stand_in.h"
#include "ferry/testing/loopback.h"

namespace ferry::http {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<HttpClient> MakeClient(HttpClientOptions options = {}) {
  options.allow_http = true;
  Result<std::unique_ptr<HttpClient>> c = HttpClient::Create(options);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

HttpRequest Request(std::string method, std::string url) {
  HttpRequest r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.deadline = DeadlineAfter(std::chrono::seconds(30));
  return r;
}

// Routes shared by most tests.
class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    httplib::Server& s = server_.server();
    s.Get("/hello", [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Custom", "yes");
      res.set_content("hello " + req.get_header_value("X-Name"), "text/plain");
    });
    s.Get("/port", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.remote_port), "text/plain");
    });
    s.Put("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Method", req.method);
      res.set_header("X-Content-Length", req.get_header_value("Content-Length"));
      res.set_header("X-Expect", req.get_header_value("Expect"));
      res.set_content(req.body, "application/octet-stream");
    });
    s.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Method", req.method);
      res.set_content(req.body, "application/octet-stream");
    });
    s.Delete("/thing", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    s.Get("/range", [](const httplib::Request&, httplib::Response& res) {
      res.status = 206;
      res.set_content("0123456789", "application/octet-stream");
    });
    s.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(size_t{1} << 20, 'b'), "application/octet-stream");
    });
    s.Get(R"(/status/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
      res.status = std::stoi(req.matches[1]);
      res.set_content("<Error><Code>Nope</Code><Message>said no</Message></Error>",
                      "application/xml");
    });
    ASSERT_TRUE(server_.Start().ok());
  }

  testing::HttpStandIn server_;
};

TEST_F(HttpClientTest, GetsWithHeadersBothWays) {
  auto client = MakeClient();
  HttpRequest req = Request("GET", server_.url("/hello"));
  req.headers.Set("X-Name", "ferry");
  HttpOutcome out = client->Send(req);
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.status_code(), 200);
  EXPECT_EQ(out.response.body, "hello ferry");
  EXPECT_EQ(out.response.body_size, 11u);
  EXPECT_EQ(out.response.headers.GetOr("x-custom"), "yes");
  EXPECT_EQ(out.response.headers.GetOr("CONTENT-TYPE"), "text/plain");
}

TEST_F(HttpClientTest, SendsBodiesFromMemoryWithEveryMethod) {
  auto client = MakeClient();
  std::string payload(3 << 20, '\0');
  for (size_t i = 0; i < payload.size(); ++i) {
    payload[i] = static_cast<char>(i * 131 + 17);
  }
  for (const char* method : {"PUT", "POST"}) {
    HttpRequest req = Request(method, server_.url("/echo"));
    req.body = payload;
    HttpOutcome out = client->Send(req);
    ASSERT_TRUE(out.ok()) << out.status.ToString();
    EXPECT_EQ(out.response.headers.GetOr("X-Method"), method);
    EXPECT_EQ(out.response.body.size(), payload.size());
    EXPECT_TRUE(out.response.body == payload);
  }
  // No 100-continue round trip; an empty PUT still says Content-Length: 0.
  HttpRequest empty = Request("PUT", server_.url("/echo"));
  HttpOutcome out = client->Send(empty);
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.response.headers.GetOr("X-Content-Length"), "0");
  EXPECT_EQ(out.response.headers.GetOr("X-Expect"), "");
  out = client->Send(Request("DELETE", server_.url("/thing")));
  EXPECT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.status_code(), 204);
}

// A BodyReader over a string, counting its rewinds.
struct StringReader {
  std::string data;
  size_t offset = 0;
  int rewinds = 0;
  BodyReader reader;

  explicit StringReader(std::string d, bool known_size = true) : data(std::move(d)) {
    reader.size = known_size ? static_cast<int64_t>(data.size()) : -1;
    reader.read = [this](char* buf, size_t len) -> Result<size_t> {
      size_t n = std::min(len, data.size() - offset);
      std::memcpy(buf, data.data() + offset, n);
      offset += n;
      return n;
    };
    reader.rewind = [this] {
      offset = 0;
      ++rewinds;
      return Status::OK();
    };
  }
};

TEST_F(HttpClientTest, StreamsBodiesFromAReader) {
  auto client = MakeClient();
  for (bool known_size : {true, false}) {
    StringReader src(std::string(5 << 20, 'r') + "end", known_size);
    HttpRequest req = Request("PUT", server_.url("/echo"));
    req.body_reader = &src.reader;
    HttpOutcome out = client->Send(req);
    ASSERT_TRUE(out.ok()) << out.status.ToString();
    EXPECT_TRUE(out.response.body == src.data) << known_size;
  }
  // A reader that fails aborts the request with its own error; nothing was applied.
  BodyReader failing{.size = 100, .read = [](char*, size_t) -> Result<size_t> {
                       return IOError("read /tmp/part-7: Input/output error");
                     }};
  HttpRequest req = Request("PUT", server_.url("/echo"));
  req.body_reader = &failing;
  HttpOutcome out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kIOError) << out.status.ToString();
  EXPECT_NE(out.status.message().find("/tmp/part-7"), std::string::npos);
  EXPECT_FALSE(out.maybe_applied);
  EXPECT_FALSE(out.retryable);
}

TEST_F(HttpClientTest, RangedGetLandsInTheCallersBuffer) {
  auto client = MakeClient();
  std::string buffer(10, '\0');
  HttpRequest req = Request("GET", server_.url("/range"));
  req.headers.Set("Range", "bytes=0-9");
  req.response_buffer = std::span<char>(buffer);
  HttpOutcome out = client->Send(req);
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.status_code(), 206);
  EXPECT_EQ(buffer, "0123456789");
  EXPECT_EQ(out.response.body_size, 10u);
  EXPECT_TRUE(out.response.body.empty());

  // A body longer than the buffer is an error, not an overflow.
  std::string small(4, '\0');
  req.response_buffer = std::span<char>(small);
  out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kResourceExhausted) << out.status.ToString();

  // An error body goes to `body`, where the caller can parse it.
  req.url = server_.url("/status/404");
  req.headers.Remove("Range");  // (the test server would cut its error body to the range)
  out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kNotFound);
  EXPECT_NE(out.response.body.find("<Code>Nope</Code>"), std::string::npos);
  EXPECT_TRUE(out.response_complete);
}

TEST_F(HttpClientTest, BoundsBodiesReadIntoMemory) {
  auto client = MakeClient(HttpClientOptions{.max_response_bytes = 1000});
  HttpOutcome out = client->Send(Request("GET", server_.url("/big")));
  EXPECT_EQ(out.status.code(), StatusCode::kResourceExhausted) << out.status.ToString();
  HttpRequest req = Request("GET", server_.url("/big"));
  req.max_response_bytes = size_t{2} << 20;
  out = client->Send(req);
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.response.body.size(), size_t{1} << 20);
}

TEST_F(HttpClientTest, HeadHasHeadersAndNoBody) {
  auto client = MakeClient();
  HttpOutcome out = client->Send(Request("HEAD", server_.url("/big")));
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.response.headers.GetOr("Content-Length"), std::to_string(1 << 20));
  EXPECT_EQ(out.response.body_size, 0u);
}

TEST_F(HttpClientTest, ClassifiesStatusCodes) {
  auto client = MakeClient();
  HttpOutcome out = client->Send(Request("GET", server_.url("/status/404")));
  EXPECT_EQ(out.status.code(), StatusCode::kNotFound);
  EXPECT_FALSE(out.retryable);
  out = client->Send(Request("GET", server_.url("/status/503")));
  EXPECT_EQ(out.status.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(out.retryable);
  EXPECT_TRUE(out.throttled);
  EXPECT_NE(out.status.message().find("GET http://127.0.0.1:"), std::string::npos);
  out = client->Send(Request("GET", server_.url("/status/500")));
  EXPECT_TRUE(out.maybe_applied);
}

TEST_F(HttpClientTest, ReusesConnections) {
  auto client = MakeClient();
  std::set<std::string> ports;
  for (int i = 0; i < 20; ++i) {
    HttpOutcome out = client->Send(Request("GET", server_.url("/port")));
    ASSERT_TRUE(out.ok()) << out.status.ToString();
    ports.insert(out.response.body);
  }
  EXPECT_EQ(ports.size(), 1u);
  EXPECT_EQ(client->stats().requests, 20u);
  EXPECT_EQ(client->stats().connections, 1u);
  EXPECT_EQ(client->stats().handles, 1u);
}

TEST_F(HttpClientTest, ManyThreadsShareOneClient) {
  auto client = MakeClient();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string body(static_cast<size_t>((t * 7919 + i * 104729) % 300'000),
                         static_cast<char>('a' + t));
        HttpRequest req = Request("PUT", server_.url("/echo"));
        req.body = body;
        HttpOutcome out = client->Send(req);
        if (!out.ok() || out.response.body != body) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  HttpClient::Stats stats = client->stats();
  EXPECT_EQ(stats.requests, uint64_t{kThreads * kPerThread});
  // At most one handle, and so one connection, per thread in flight at once.
  EXPECT_LE(stats.handles, uint64_t{kThreads});
  EXPECT_LE(stats.connections, stats.handles);
}

TEST_F(HttpClientTest, RefusesPlainHttpUnlessAllowed) {
  Result<std::unique_ptr<HttpClient>> strict = HttpClient::Create(HttpClientOptions{});
  ASSERT_TRUE(strict.ok());
  HttpOutcome out = (*strict)->Send(Request("GET", server_.url("/hello")));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status.message().find("allow_http"), std::string::npos);
  EXPECT_EQ((*strict)->stats().requests, 0u);
}

TEST_F(HttpClientTest, RetriesThrottlingAndSignsEachAttempt) {
  std::atomic<int> calls{0};
  testing::HttpStandIn flaky;
  flaky.server().Put("/obj", [&](const httplib::Request& req, httplib::Response& res) {
    int n = ++calls;
    if (n <= 2) {
      res.status = 503;
      res.set_content("<Error><Code>SlowDown</Code></Error>", "application/xml");
      return;
    }
    if (n == 3) {
      res.status = 400;
      res.set_content("<Error><Code>RequestTimeout</Code></Error>", "application/xml");
      return;
    }
    res.set_header("X-Signed", req.get_header_value("X-Attempt"));
    res.set_content(req.body, "text/plain");
  });
  ASSERT_TRUE(flaky.Start().ok());
  auto client = MakeClient();
  RetryCounters counters;
  RetryPolicy policy(
      RetryOptions{.initial_backoff = milliseconds(1), .max_backoff = milliseconds(5)}, &counters);
  StringReader src("the body");
  HttpRequest req = Request("PUT", flaky.url("/obj"));
  req.body_reader = &src.reader;
  int prepared = 0;
  SendHooks hooks{.prepare =
                      [&](HttpRequest* r) {
                        r->headers.Set("X-Attempt", std::to_string(++prepared));
                        return Status::OK();
                      },
                  .parse_error =
                      [](const HttpResponse& r) {
                        size_t a = r.body.find("<Code>");
                        size_t b = r.body.find("</Code>");
                        return ServiceError{
                            .code = a == std::string::npos ? "" : r.body.substr(a + 6, b - a - 6)};
                      }};
  HttpOutcome out = SendWithRetry(*client, policy, req, hooks);
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.attempts, 4);
  EXPECT_EQ(out.response.body, "the body");  // the reader was rewound for each retry
  EXPECT_EQ(out.response.headers.GetOr("X-Signed"), "4");
  EXPECT_EQ(src.rewinds, 3);
  EXPECT_EQ(counters.retries.load(), 3u);
  EXPECT_EQ(counters.throttled.load(), 2u);
}

// A raw server: reads one request per connection, then resets it or holds it unanswered.
class RawServer {
 public:
  enum class Mode { kResetAfterRequest, kHold };

  explicit RawServer(Mode mode) : mode_(mode) {
    Result<int> fd = testing::ListenOnLoopback(0);
    EXPECT_TRUE(fd.ok());
    fd_ = *fd;
    port_ = *testing::LocalPort(fd_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RawServer() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }
  int requests() const { return requests_.load(); }

 private:
  void Serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) {
        return;
      }
      std::string got;
      char buf[4096];
      while (got.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(c, buf, sizeof(buf));
        if (n <= 0) {
          break;
        }
        got.append(buf, static_cast<size_t>(n));
      }
      ++requests_;
      if (mode_ == Mode::kHold) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return done_; });
      }
      linger l{.l_onoff = 1, .l_linger = 0};  // close with RST
      ::setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
      ::close(c);
    }
  }

  Mode mode_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

TEST(HttpClientFailureTest, AResetAfterTheRequestLeavesTheOutcomeUnknown) {
  RawServer raw(RawServer::Mode::kResetAfterRequest);
  auto client = MakeClient();
  HttpRequest req = Request("PUT", raw.url("/t/_delta_log/00000000000000000001.json"));
  req.body = "{}";
  req.idempotent = false;  // a conditional create
  req.headers.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDSECRET");
  HttpOutcome out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kUnavailable) << out.status.ToString();
  EXPECT_TRUE(out.maybe_applied);
  EXPECT_FALSE(out.retryable);
  EXPECT_NE(out.status.message().find("outcome is unknown"), std::string::npos);
  EXPECT_NE(out.status.message().find("PUT http://127.0.0.1:"), std::string::npos);
  EXPECT_EQ(out.status.message().find("AKIDSECRET"), std::string::npos);
  // SendWithRetry does not repeat it either.
  RetryPolicy policy(RetryOptions{.initial_backoff = milliseconds(1)});
  out = SendWithRetry(*client, policy, req);
  EXPECT_TRUE(out.maybe_applied);
  EXPECT_EQ(out.attempts, 1);
  // An idempotent request is retried.
  req.idempotent = true;
  int before = raw.requests();
  out = SendWithRetry(
      *client, RetryPolicy(RetryOptions{.max_attempts = 3, .initial_backoff = milliseconds(1)}),
      req);
  EXPECT_TRUE(out.maybe_applied);
  EXPECT_EQ(out.attempts, 3);
  EXPECT_GE(raw.requests() - before, 3);
}

TEST(HttpClientFailureTest, ATimeoutAfterTheRequestLeavesTheOutcomeUnknown) {
  RawServer raw(RawServer::Mode::kHold);
  auto client = MakeClient();
  HttpRequest req = Request("PUT", raw.url("/k"));
  req.body = "data";
  req.idempotent = false;
  req.deadline = DeadlineAfter(milliseconds(1000));  // time for a loaded host to send it
  HttpOutcome out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kUnavailable) << out.status.ToString();
  EXPECT_TRUE(out.maybe_applied);
  EXPECT_FALSE(out.retryable);
  // The server's thread counts the request once it has read it, maybe after Send gave up.
  for (int i = 0; i < 3000 && raw.requests() == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(raw.requests(), 1);
}

TEST(HttpClientFailureTest, RefusedConnectionsWereNotSent) {
  Result<int> fd = testing::ListenOnLoopback(0);
  ASSERT_TRUE(fd.ok());
  int port = *testing::LocalPort(*fd);
  ::close(*fd);
  auto client = MakeClient();
  HttpRequest req = Request("PUT", "http://127.0.0.1:" + std::to_string(port) + "/k");
  req.idempotent = false;
  HttpOutcome out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kUnavailable) << out.status.ToString();
  EXPECT_FALSE(out.maybe_applied);
  EXPECT_TRUE(out.retryable);
  EXPECT_NE(out.status.message().find("not sent"), std::string::npos);

  // (.invalid never resolves; without a reachable DNS server the lookup times out instead,
  // which is "not sent" too.)
  req.url = "http://no-such-host.invalid/k";
  req.deadline = DeadlineAfter(std::chrono::seconds(5));
  out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kUnavailable) << out.status.ToString();
  EXPECT_FALSE(out.maybe_applied);

  req.deadline = Clock::now() - milliseconds(1);
  out = client->Send(req);
  EXPECT_EQ(out.status.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(out.maybe_applied);
  EXPECT_NE(out.status.message().find("deadline"), std::string::npos);
}

// Certificates made with the openssl command line in a temporary directory: a CA, a server
// certificate for 127.0.0.1 and a client certificate, both signed by the CA.
class HttpTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/ferry-tls-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = new std::string(tmpl);
    std::string script = "cd " + *dir_ +
                         " && exec >openssl.log 2>&1"
                         " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256"
                         "    -nodes -days 2 -subj /CN=ferry-ca -keyout ca.key -out ca.pem"
                         " && for n in server client; do"
                         "    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
                         "      -subj /CN=127.0.0.1 -keyout $n.key -out $n.csr"
                         "    && printf 'subjectAltName=IP:127.0.0.1\\n' > $n.ext"
                         "    && openssl x509 -req -in $n.csr -CA ca.pem -CAkey ca.key"
                         "      -CAcreateserial -days 2 -extfile $n.ext -out $n.pem || exit 1;"
                         "  done";
    ASSERT_EQ(std::system(script.c_str()), 0) << "openssl failed; see " << *dir_ << "/openssl.log";
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }

  static std::string File(const char* name) { return *dir_ + "/" + name; }

  static std::string* dir_;
};

std::string* HttpTlsTest::dir_ = nullptr;

TEST_F(HttpTlsTest, VerifiesTheServerAgainstACustomCaBundle) {
  testing::HttpStandIn server(testing::HttpStandInOptions{.tls_cert_file = File("server.pem"),
                                                          .tls_key_file = File("server.key")});
  server.server().Get("/x", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("secure", "text/plain");
  });
  ASSERT_TRUE(server.Start().ok());

  auto system_only = MakeClient();
  HttpOutcome out = system_only->Send(Request("GET", server.url("/x")));
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument) << out.status.ToString();
  EXPECT_FALSE(out.retryable);
  EXPECT_FALSE(out.maybe_applied);

  auto with_ca = MakeClient(HttpClientOptions{.ca_file = File("ca.pem")});
  out = with_ca->Send(Request("GET", server.url("/x")));
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.response.body, "secure");

  auto insecure = MakeClient(HttpClientOptions{.allow_invalid_certificates = true});
  EXPECT_TRUE(insecure->Send(Request("GET", server.url("/x"))).ok());
}

TEST_F(HttpTlsTest, PresentsAClientCertificate) {
  testing::HttpStandIn server(testing::HttpStandInOptions{.tls_cert_file = File("server.pem"),
                                                          .tls_key_file = File("server.key"),
                                                          .client_ca_file = File("ca.pem")});
  server.server().Get("/x", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("mutual", "text/plain");
  });
  ASSERT_TRUE(server.Start().ok());
  auto anonymous = MakeClient(HttpClientOptions{.ca_file = File("ca.pem")});
  EXPECT_FALSE(anonymous->Send(Request("GET", server.url("/x"))).ok());
  auto with_cert = MakeClient(HttpClientOptions{.ca_file = File("ca.pem"),
                                                .client_cert_file = File("client.pem"),
                                                .client_key_file = File("client.key")});
  HttpOutcome out = with_cert->Send(Request("GET", server.url("/x")));
  ASSERT_TRUE(out.ok()) << out.status.ToString();
  EXPECT_EQ(out.response.body, "mutual");
}

TEST_F(HttpTlsTest, RefusesUnreadableCertificateFiles) {
  Result<std::unique_ptr<HttpClient>> c =
      HttpClient::Create(HttpClientOptions{.ca_file = File("missing.pem")});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("missing.pem"), std::string::npos);
  c = HttpClient::Create(HttpClientOptions{.client_cert_file = File("client.pem")});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::http
