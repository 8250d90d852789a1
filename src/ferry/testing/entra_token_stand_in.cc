#include "ferry/testing/entra_token_stand_in.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace ferry::testing {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// RFC 4648 base64url without padding, as JWTs use it.
std::string Base64Url(std::string_view in) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    for (int shift : {18, 12, 6, 0}) {
      out.push_back(kAlphabet[(v >> shift) & 63]);
    }
  }
  if (i + 1 == in.size()) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
  } else if (i + 2 == in.size()) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
  }
  return out;
}

std::string FromBase64Url(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::char_traits<char>::find(kAlphabet, 64, c);
    if (p == nullptr) {
      break;
    }
    acc = (acc << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// application/x-www-form-urlencoded -> name -> value.
std::map<std::string, std::string> ParseForm(std::string_view body) {
  auto decode = [](std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '+') {
        out.push_back(' ');
      } else if (s[i] == '%' && i + 2 < s.size()) {
        out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
        i += 2;
      } else {
        out.push_back(s[i]);
      }
    }
    return out;
  };
  std::map<std::string, std::string> form;
  while (!body.empty()) {
    size_t amp = body.find('&');
    std::string_view pair = body.substr(0, amp);
    size_t eq = pair.find('=');
    form[decode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : decode(pair.substr(eq + 1));
    body = amp == std::string_view::npos ? std::string_view() : body.substr(amp + 1);
  }
  return form;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
    s.pop_back();
  }
  return s;
}

}  // namespace

EntraTokenStandIn::EntraTokenStandIn(Options options) : options_(std::move(options)) {
  server_.server().Post("/" + options_.tenant + "/oauth2/v2.0/token",
                        [this](const httplib::Request& req, httplib::Response& res) {
                          int status = 200;
                          std::string answer;
                          Handle(req.body, &status, &answer);
                          res.status = status;
                          res.set_content(answer, "application/json");
                        });
}

EntraTokenStandIn::~EntraTokenStandIn() = default;

Status EntraTokenStandIn::Start() {
  return server_.Start();
}

void EntraTokenStandIn::Handle(const std::string& body, int* status, std::string* answer) {
  int now_in_flight = ++in_flight_;
  int seen = max_in_flight_.load();
  while (now_in_flight > seen && !max_in_flight_.compare_exchange_weak(seen, now_in_flight)) {
  }
  // Stay in flight a little, so that callers can be seen using the old token meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto refuse = [&](std::string_view why) {
    ++refused_;
    *status = 400;
    *answer = fmt::format(R"({{"error":"invalid_client","error_description":"{}"}})", why);
  };
  std::map<std::string, std::string> form = ParseForm(body);
  if (fail_next_.load() > 0) {
    --fail_next_;
    *status = 503;
    *answer = R"({"error":"temporarily_unavailable","error_description":"stand-in told to fail"})";
  } else if (form["grant_type"] != "client_credentials" ||
             form["scope"] != "https://storage.azure.com/.default" ||
             form["client_id"] != options_.client_id) {
    refuse("AADSTS900144: bad grant_type, scope or client_id");
  } else if (!options_.client_secret.empty() && form["client_secret"] != options_.client_secret) {
    refuse("AADSTS7000215: Invalid client secret provided.");
  } else if (!options_.federated_token_file.empty() &&
             (form["client_assertion_type"] !=
                  "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" ||
              !AcceptAssertion(form["client_assertion"]))) {
    refuse("AADSTS700211: No matching federated identity record found for presented assertion.");
  } else {
    const int n = ++issued_;
    const auto now = std::chrono::system_clock::now();
    const int64_t now_s =
        std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    const int64_t exp = now_s + options_.lifetime.count();
    // Whole seconds left until exp, rounded down: a client never believes it has longer.
    const int64_t expires_in =
        exp -
        (std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() +
         999) /
            1000;
    const std::string header = Base64Url(R"({"typ":"JWT","alg":"RS256"})");
    const std::string payload = Base64Url(fmt::format(
        R"({{"aud":"https://storage.azure.com","iss":"https://sts.windows.net/{}/","iat":{},)"
        R"("nbf":{},"exp":{},"appid":"{}","tid":"{}","n":{}}})",
        options_.tenant, now_s, now_s, exp, options_.client_id, options_.tenant, n));
    *answer = fmt::format(
        R"({{"token_type":"Bearer","expires_in":{},"ext_expires_in":{},"access_token":"{}.{}.c2ln"}})",
        expires_in, expires_in, header, payload);
  }
  --in_flight_;
}

bool EntraTokenStandIn::AcceptAssertion(const std::string& assertion) {
  std::ifstream in(options_.federated_token_file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string current = Trimmed(text.str());
  std::lock_guard lock(mu_);
  valid_.insert(current);
  if (assertion.empty() || valid_.count(assertion) == 0) {
    return false;
  }
  assertions_.insert(assertion);
  return true;
}

void EntraTokenStandIn::RotateFederatedToken(const std::string& token) {
  {
    std::lock_guard lock(mu_);
    valid_.insert(token);
  }
  // Written beside it and renamed over it, as the kubelet swaps its projected volume: a reader
  // never sees a half-written file.
  const std::string temp = options_.federated_token_file + ".new";
  std::ofstream(temp) << token << "\n";
  std::error_code ec;
  std::filesystem::rename(temp, options_.federated_token_file, ec);
}

size_t EntraTokenStandIn::distinct_assertions() const {
  std::lock_guard lock(mu_);
  return assertions_.size();
}

int EntraTokenStandIn::IssueNumber(const std::string& access_token) {
  size_t first = access_token.find('.');
  size_t second = access_token.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) {
    return 0;
  }
  std::string payload = FromBase64Url(access_token.substr(first + 1, second - first - 1));
  size_t at = payload.find("\"n\":");
  return at == std::string::npos ? 0 : std::atoi(payload.c_str() + at + 4);
}

}  // namespace ferry::testing
