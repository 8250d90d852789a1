// EntraTokenStandIn: a Microsoft Entra ID token endpoint for tests, on HttpStandIn (127.0.0.1, a
// free port): POST /<tenant>/oauth2/v2.0/token with the client credentials grant, answered as
// Entra ID answers ({"token_type":"Bearer","expires_in":N,"access_token":...}).
//
// It checks what ferry sends (grant_type, scope https://storage.azure.com/.default, the client
// id, and either the client secret or, for workload identity, a client_assertion equal to a
// content the federated token file has held: its content at each request, and every token written
// with RotateFederatedToken, so that a token rotated while a request was on its way is still
// accepted, as Entra accepts any unexpired kubelet token) and refuses anything else with 400
// invalid_client.
// The tokens are JWTs (unsigned, which Azurite's `--oauth basic` accepts: it checks issuer,
// audience and lifetime) that live `lifetime`: exp = now + lifetime, expires_in = the whole
// seconds left, so a token is never used past its exp by a client that believes expires_in.
//
// Thread-safety: the accessors may be called while the server runs.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "ferry/base/status.h"
#include "ferry/testing/http_stand_in.h"

namespace ferry::testing {

class EntraTokenStandIn {
 public:
  struct Options {
    std::string tenant = "ferry-tenant";
    std::string client_id = "ferry-client";
    // Exactly one of these: the secret the client must send, or the file whose content it must
    // send as its assertion.
    std::string client_secret;
    std::string federated_token_file;
    std::chrono::seconds lifetime{3600};
  };

  explicit EntraTokenStandIn(Options options);
  ~EntraTokenStandIn();
  EntraTokenStandIn(const EntraTokenStandIn&) = delete;
  EntraTokenStandIn& operator=(const EntraTokenStandIn&) = delete;

  Status Start();
  // "http://127.0.0.1:PORT": the authority host to configure.
  std::string authority() const { return server_.url(); }
  const Options& options() const { return options_; }

  // Tokens handed out, and requests refused (a wrong secret or assertion, a bad form).
  int issued() const { return issued_.load(); }
  int refused() const { return refused_.load(); }
  // The next `n` requests answer 503 (a token endpoint that is briefly down).
  void FailNext(int n) { fail_next_ = n; }
  // Different federated tokens accepted (the client read the rotated file again).
  size_t distinct_assertions() const;
  // Writes `token` to the federated token file (as the kubelet rotates it) and accepts it from now
  // on, beside the earlier ones.
  void RotateFederatedToken(const std::string& token);
  // The most token requests answered at the same time.
  int max_in_flight() const { return max_in_flight_.load(); }
  // The access token of issue `n` (1-based) would be "<header>.<payload>.sig" with "n":N in its
  // payload; tests tell tokens apart by it.
  static int IssueNumber(const std::string& access_token);

 private:
  void Handle(const std::string& body, int* status, std::string* answer);
  bool AcceptAssertion(const std::string& assertion);

  const Options options_;
  HttpStandIn server_;
  std::atomic<int> issued_{0};
  std::atomic<int> refused_{0};
  std::atomic<int> fail_next_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  mutable std::mutex mu_;
  std::set<std::string> valid_;       // the file's contents so far; guarded by mu_
  std::set<std::string> assertions_;  // guarded by mu_
};

}  // namespace ferry::testing
