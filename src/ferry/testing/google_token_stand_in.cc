#include "ferry/testing/google_token_stand_in.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <time.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace ferry::testing {
namespace {

using SystemClock = std::chrono::system_clock;

struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using Bio = std::unique_ptr<BIO, BioDeleter>;

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);  // NOLINT(google-runtime-int)
  return std::string(data, static_cast<size_t>(len));
}

// base64url without padding -> bytes; nullopt when it is not base64url.
std::optional<std::string> DecodeBase64Url(std::string_view in) {
  std::string std_b64(in);
  for (char& c : std_b64) {
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  size_t pad = (4 - std_b64.size() % 4) % 4;
  if (pad == 3) {
    return std::nullopt;
  }
  std_b64.append(pad, '=');
  std::string out(std_b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(std_b64.data()),
                          static_cast<int>(std_b64.size()));
  if (n < 0) {
    return std::nullopt;
  }
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string Rfc3339(SystemClock::time_point t) {
  time_t secs = SystemClock::to_time_t(t);
  struct tm tm = {};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

httplib::Params Form(const httplib::Request& req) {
  httplib::Params params;
  httplib::detail::parse_query_text(req.body, params);
  return params;
}

std::string Param(const httplib::Params& params, const std::string& name) {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

std::string FileContent(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
    s.pop_back();
  }
  return s;
}

// expires_in for a token that expires at `exp` (whole seconds): the seconds left, rounded down,
// so that a client believing expires_in never uses the token past `exp`.
int64_t ExpiresIn(SystemClock::time_point exp) {
  return std::chrono::duration_cast<std::chrono::seconds>(
             exp - std::chrono::ceil<std::chrono::seconds>(SystemClock::now()))
      .count();
}

}  // namespace

Result<RsaKeyPair> GenerateRsaKeyPair(int bits) {
  Pkey key(EVP_RSA_gen(static_cast<unsigned int>(bits)));
  Bio priv(BIO_new(BIO_s_mem()));
  Bio pub(BIO_new(BIO_s_mem()));
  if (key == nullptr || priv == nullptr || pub == nullptr ||
      PEM_write_bio_PrivateKey(priv.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_PUBKEY(pub.get(), key.get()) != 1) {
    ERR_clear_error();
    return Internal("cannot generate an RSA key with OpenSSL");
  }
  return RsaKeyPair{.private_key_pem = BioText(priv.get()), .public_key_pem = BioText(pub.get())};
}

Status VerifyRs256Jwt(const std::string& jwt, const std::string& public_key_pem,
                      std::string* header_json, std::string* claims_json) {
  const size_t first = jwt.find('.');
  const size_t second = first == std::string::npos ? first : jwt.find('.', first + 1);
  if (second == std::string::npos || jwt.find('.', second + 1) != std::string::npos) {
    return InvalidArgument("not a JWT of three parts");
  }
  std::optional<std::string> header = DecodeBase64Url(jwt.substr(0, first));
  std::optional<std::string> claims = DecodeBase64Url(jwt.substr(first + 1, second - first - 1));
  std::optional<std::string> signature = DecodeBase64Url(jwt.substr(second + 1));
  if (!header || !claims || !signature) {
    return InvalidArgument("a JWT part is not base64url");
  }
  nlohmann::json h = nlohmann::json::parse(*header, nullptr, false);
  if (!h.is_object() || h.value("alg", "") != "RS256") {
    return InvalidArgument("JWT header is not {\"alg\":\"RS256\"...}");
  }
  Bio bio(BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size())));
  Pkey key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  const std::string signed_part = jwt.substr(0, second);
  const bool ok =
      key != nullptr && ctx != nullptr &&
      EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
      EVP_DigestVerify(
          ctx.get(), reinterpret_cast<const unsigned char*>(signature->data()), signature->size(),
          reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size()) == 1;
  ERR_clear_error();
  if (!ok) {
    return InvalidArgument("JWT signature does not verify with the public key");
  }
  *header_json = *header;
  *claims_json = *claims;
  return Status::OK();
}

GoogleTokenStandIn::GoogleTokenStandIn(Options options) : options_(std::move(options)) {
  auto reply = [](httplib::Response& res, const Answer& a) {
    res.status = a.status;
    res.set_content(a.body, "application/json");
  };
  server_.server().Post("/token",
                        [this, reply](const httplib::Request& req, httplib::Response& res) {
                          reply(res, HandleToken(req));
                        });
  server_.server().Post("/v1/token",
                        [this, reply](const httplib::Request& req, httplib::Response& res) {
                          reply(res, HandleSts(req));
                        });
  server_.server().Post(
      "/v1/projects/-/serviceAccounts/" + options_.client_email + ":generateAccessToken",
      [this, reply](const httplib::Request& req, httplib::Response& res) {
        reply(res, HandleImpersonation(req));
      });
  server_.server().Get(
      "/computeMetadata/v1/instance/service-accounts/default/token",
      [this](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Metadata-Flavor", "Google");
        if (req.get_header_value("Metadata-Flavor") != "Google") {
          ++refused_;
          res.status = 403;
          res.set_content("Missing required header: Metadata-Flavor", "text/plain");
          return;
        }
        Enter();
        SystemClock::time_point exp;
        const std::string token = Issue("gce", &exp);
        res.set_content(
            fmt::format(R"({{"access_token":"{}","expires_in":{},"token_type":"Bearer"}})", token,
                        ExpiresIn(exp)),
            "application/json");
        Leave();
      });
}

Status GoogleTokenStandIn::Start() {
  return server_.Start();
}

std::string GoogleTokenStandIn::impersonation_url() const {
  return server_.url("/v1/projects/-/serviceAccounts/" + options_.client_email +
                     ":generateAccessToken");
}

void GoogleTokenStandIn::Enter() {
  int now_in_flight = ++in_flight_;
  int seen = max_in_flight_.load();
  while (now_in_flight > seen && !max_in_flight_.compare_exchange_weak(seen, now_in_flight)) {
  }
  // Stay in flight a little, so that callers can be seen using the old token meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::string GoogleTokenStandIn::Issue(const std::string& kind, SystemClock::time_point* expiry) {
  std::lock_guard lock(mu_);
  const int n = ++issued_[kind];
  std::string token = fmt::format("ya29.{}.{}", kind, n);
  // Whole seconds, so that an RFC 3339 expireTime states it exactly.
  SystemClock::time_point exp =
      std::chrono::floor<std::chrono::seconds>(SystemClock::now()) + options_.lifetime;
  expiry_[token] = exp;
  *expiry = exp;
  return token;
}

GoogleTokenStandIn::Answer GoogleTokenStandIn::Refuse(int status, std::string_view error,
                                                      std::string_view description) {
  ++refused_;
  return Answer{status,
                fmt::format(R"({{"error":"{}","error_description":"{}"}})", error, description)};
}

GoogleTokenStandIn::Answer GoogleTokenStandIn::HandleToken(const httplib::Request& req) {
  Enter();
  struct LeaveOnExit {
    GoogleTokenStandIn* self;
    ~LeaveOnExit() { self->Leave(); }
  } leave{this};
  if (int forced = force_token_status_.load(); forced != 0) {
    return forced == 401 ? Refuse(401, "unauthorized_client", "The client is not authorized.")
                         : Refuse(forced, "invalid_grant", "Forced by the test.");
  }
  httplib::Params form = Form(req);
  const std::string grant = Param(form, "grant_type");
  std::string kind;
  if (grant == "urn:ietf:params:oauth:grant-type:jwt-bearer") {
    std::string header, claims_text;
    if (!VerifyRs256Jwt(Param(form, "assertion"), options_.public_key_pem, &header, &claims_text)
             .ok()) {
      return Refuse(400, "invalid_grant", "Invalid JWT Signature.");
    }
    nlohmann::json claims = nlohmann::json::parse(claims_text, nullptr, false);
    const int64_t now =
        std::chrono::duration_cast<std::chrono::seconds>(SystemClock::now().time_since_epoch())
            .count();
    if (!claims.is_object() || claims.value("iss", "") != options_.client_email ||
        claims.value("scope", "") != options_.scope || claims.value("aud", "") != token_url() ||
        !claims.contains("iat") || !claims["iat"].is_number_integer() ||
        std::abs(claims["iat"].get<int64_t>() - now) > 60 || !claims.contains("exp") ||
        claims["exp"] != claims["iat"].get<int64_t>() + 3600) {
      return Refuse(400, "invalid_grant", "Invalid JWT: iss, scope, aud, iat or exp.");
    }
    {
      std::lock_guard lock(mu_);
      last_jwt_header_ = header;
      last_jwt_claims_ = claims_text;
    }
    kind = "sa";
  } else if (grant == "refresh_token") {
    if (Param(form, "client_id") != options_.client_id ||
        Param(form, "client_secret") != options_.client_secret) {
      return Refuse(401, "invalid_client", "The OAuth client was not found.");
    }
    if (Param(form, "refresh_token") != options_.refresh_token) {
      return Refuse(400, "invalid_grant", "Token has been expired or revoked.");
    }
    kind = "user";
  } else {
    return Refuse(400, "unsupported_grant_type", "Invalid grant_type.");
  }
  SystemClock::time_point exp;
  const std::string token = Issue(kind, &exp);
  return Answer{200, fmt::format(R"({{"access_token":"{}","expires_in":{},"token_type":"Bearer"}})",
                                 token, ExpiresIn(exp))};
}

GoogleTokenStandIn::Answer GoogleTokenStandIn::HandleSts(const httplib::Request& req) {
  Enter();
  struct LeaveOnExit {
    GoogleTokenStandIn* self;
    ~LeaveOnExit() { self->Leave(); }
  } leave{this};
  httplib::Params form = Form(req);
  if (Param(form, "grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" ||
      Param(form, "requested_token_type") != "urn:ietf:params:oauth:token-type:access_token") {
    return Refuse(400, "invalid_request", "Invalid grant_type or requested_token_type.");
  }
  if (Param(form, "audience") != options_.audience ||
      Param(form, "subject_token_type") != options_.subject_token_type) {
    return Refuse(400, "invalid_target",
                  "The target service indicated by the audience is invalid.");
  }
  const std::string expected = FileContent(options_.subject_token_file);
  if (expected.empty() || Param(form, "subject_token") != expected) {
    return Refuse(400, "invalid_grant", "The subject token is invalid.");
  }
  {
    std::lock_guard lock(mu_);
    last_sts_scope_ = Param(form, "scope");
  }
  SystemClock::time_point exp;
  const std::string token = Issue("sts", &exp);
  return Answer{200, fmt::format(R"({{"access_token":"{}","issued_token_type":)"
                                 R"("urn:ietf:params:oauth:token-type:access_token",)"
                                 R"("token_type":"Bearer","expires_in":{}}})",
                                 token, ExpiresIn(exp))};
}

GoogleTokenStandIn::Answer GoogleTokenStandIn::HandleImpersonation(const httplib::Request& req) {
  Enter();
  struct LeaveOnExit {
    GoogleTokenStandIn* self;
    ~LeaveOnExit() { self->Leave(); }
  } leave{this};
  const std::string auth = req.get_header_value("Authorization");
  const std::string bearer = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : std::string();
  std::optional<SystemClock::time_point> expiry = ExpiryOf(bearer);
  if (!bearer.starts_with("ya29.sts.") || !expiry || *expiry <= SystemClock::now()) {
    ++refused_;
    return Answer{401, R"({"error":{"code":401,"message":"Request had invalid authentication )"
                       R"(credentials.","status":"UNAUTHENTICATED"}})"};
  }
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
  if (!body.is_object() || !body.contains("scope") || !body["scope"].is_array() ||
      body["scope"] != nlohmann::json::array({options_.scope})) {
    ++refused_;
    return Answer{400, R"({"error":{"code":400,"message":"Invalid scope.",)"
                       R"("status":"INVALID_ARGUMENT"}})"};
  }
  SystemClock::time_point exp;
  const std::string token = Issue("imp", &exp);
  return Answer{200,
                fmt::format(R"({{"accessToken":"{}","expireTime":"{}"}})", token, Rfc3339(exp))};
}

int GoogleTokenStandIn::issued(const std::string& kind) const {
  std::lock_guard lock(mu_);
  auto it = issued_.find(kind);
  return it == issued_.end() ? 0 : it->second;
}

std::string GoogleTokenStandIn::last_jwt_header() const {
  std::lock_guard lock(mu_);
  return last_jwt_header_;
}

std::string GoogleTokenStandIn::last_jwt_claims() const {
  std::lock_guard lock(mu_);
  return last_jwt_claims_;
}

std::string GoogleTokenStandIn::last_sts_scope() const {
  std::lock_guard lock(mu_);
  return last_sts_scope_;
}

std::optional<SystemClock::time_point> GoogleTokenStandIn::ExpiryOf(
    const std::string& token) const {
  std::lock_guard lock(mu_);
  auto it = expiry_.find(token);
  return it == expiry_.end() ? std::nullopt : std::optional(it->second);
}

int GoogleTokenStandIn::IssueNumber(const std::string& token) {
  size_t dot = token.rfind('.');
  return dot == std::string::npos ? 0 : std::atoi(token.c_str() + dot + 1);
}

}  // namespace ferry::testing
