// GoogleTokenStandIn: Google's token endpoints for tests, on one HttpStandIn (127.0.0.1, a free
// port), answering as Google answers:
//   - POST /token: OAuth 2.0 (oauth2.googleapis.com/token): the jwt-bearer grant, whose RS256
//     assertion must verify with `public_key_pem` and carry iss = client_email, the scope,
//     aud = token_url(), iat ~ now and exp = iat + 3600; and the refresh_token grant with the
//     configured client id, secret and refresh token;
//   - POST /v1/token: STS (sts.googleapis.com), the token-exchange grant with the configured
//     audience and subject_token_type, and a subject token equal to what the subject token file
//     holds at that moment;
//   - POST /v1/projects/-/serviceAccounts/<email>:generateAccessToken: IAM credentials'
//     impersonation, authorized by an unexpired STS token;
//   - GET /computeMetadata/v1/instance/service-accounts/default/token: the GCE metadata server,
//     which requires and sends `Metadata-Flavor: Google`.
// Anything else is refused (400 invalid_grant, 401, 403) as Google refuses it. Every access token
// ("ya29.<kind>.<n>") lives `lifetime`; the stand-in remembers when each one expires, so that a
// test can check that no caller was handed an expired token.
//
// Thread-safety: the accessors may be called while the server runs.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "ferry/base/result.h"
#include "ferry/testing/http_stand_in.h"

namespace ferry::testing {

struct RsaKeyPair {
  std::string private_key_pem;  // PKCS#8, "-----BEGIN PRIVATE KEY-----", as Google's keys
  std::string public_key_pem;
};

// A fresh RSA key (OpenSSL), for a test's service-account key file.
Result<RsaKeyPair> GenerateRsaKeyPair(int bits = 2048);

// Checks `jwt`'s RS256 signature with `public_key_pem`; on success its decoded header and claims
// (JSON text). InvalidArgument saying what is wrong otherwise.
Status VerifyRs256Jwt(const std::string& jwt, const std::string& public_key_pem,
                      std::string* header_json, std::string* claims_json);

class GoogleTokenStandIn {
 public:
  struct Options {
    std::chrono::seconds lifetime{3600};
    std::string scope = "https://www.googleapis.com/auth/devstorage.read_write";
    // Service account: the key that must have signed the assertion.
    std::string public_key_pem;
    std::string client_email = "ferry-test@ferry-project.iam.gserviceaccount.com";
    // Authorized user.
    std::string client_id = "ferry-client.apps.googleusercontent.com";
    std::string client_secret = "ferry-client-secret";
    std::string refresh_token = "1//ferry-refresh-token";
    // External account.
    std::string audience =
        "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ferry/providers/k";
    std::string subject_token_type = "urn:ietf:params:oauth:token-type:jwt";
    std::string subject_token_file;
  };

  explicit GoogleTokenStandIn(Options options);
  GoogleTokenStandIn(const GoogleTokenStandIn&) = delete;
  GoogleTokenStandIn& operator=(const GoogleTokenStandIn&) = delete;

  Status Start();
  const Options& options() const { return options_; }
  std::string token_url() const { return server_.url("/token"); }
  std::string sts_url() const { return server_.url("/v1/token"); }
  std::string impersonation_url() const;
  // "127.0.0.1:PORT", for GCE_METADATA_HOST.
  std::string metadata_host() const { return "127.0.0.1:" + std::to_string(server_.port()); }

  // From now on, /token answers `status` (400 invalid_grant, 401 unauthorized_client); 0: normal.
  void ForceTokenStatus(int status) { force_token_status_ = status; }

  // Tokens issued by kind: "sa" (service account), "user", "sts", "imp", "gce".
  int issued(const std::string& kind) const;
  int refused() const { return refused_.load(); }
  // The most requests answered at the same time.
  int max_in_flight() const { return max_in_flight_.load(); }
  // The last verified assertion's header and claims (JSON text); the last STS request's scope.
  std::string last_jwt_header() const;
  std::string last_jwt_claims() const;
  std::string last_sts_scope() const;
  // When `token` stops working, as issued; nullopt for a token this stand-in did not issue.
  std::optional<std::chrono::system_clock::time_point> ExpiryOf(const std::string& token) const;
  // "ya29.<kind>.<n>" -> n (0 when not of that shape).
  static int IssueNumber(const std::string& token);

 private:
  struct Answer {
    int status = 200;
    std::string body;
  };
  Answer HandleToken(const httplib::Request& req);
  Answer HandleSts(const httplib::Request& req);
  Answer HandleImpersonation(const httplib::Request& req);
  // A new token of `kind` that expires `lifetime` from now (in whole seconds), remembered.
  std::string Issue(const std::string& kind, std::chrono::system_clock::time_point* expiry);
  Answer Refuse(int status, std::string_view error, std::string_view description);
  void Enter();
  void Leave() { --in_flight_; }

  const Options options_;
  HttpStandIn server_;
  std::atomic<int> force_token_status_{0};
  std::atomic<int> refused_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  mutable std::mutex mu_;
  // All below guarded by mu_.
  std::map<std::string, int> issued_;
  std::map<std::string, std::chrono::system_clock::time_point> expiry_;
  std::string last_jwt_header_;
  std::string last_jwt_claims_;
  std::string last_sts_scope_;
};

}  // namespace ferry::testing
