#include "nats_auth_fixtures.h"

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace ferry::testing::nats_auth {
namespace {

// RFC 4648 encoding without padding: each group of `bits` bits (5: base32, 6: base64) of
// `bytes`, most significant first, as a character of `alphabet`.
template <typename Bytes>
std::string EncodeBits(const Bytes& bytes, const char* alphabet, int bits_per_char) {
  const uint32_t mask = (1U << bits_per_char) - 1;
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (auto byte : bytes) {
    buffer = (buffer << 8) | static_cast<uint8_t>(byte);
    bits += 8;
    while (bits >= bits_per_char) {
      out.push_back(alphabet[(buffer >> (bits - bits_per_char)) & mask]);
      bits -= bits_per_char;
    }
  }
  if (bits > 0) {
    out.push_back(alphabet[(buffer << (bits_per_char - bits)) & mask]);
  }
  return out;
}

// base64url without padding (RFC 4648 section 5), as JWTs use it.
std::string Base64Url(const std::string& bytes) {
  return EncodeBits(bytes, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 6);
}

// A NATS JWT (nats-io/jwt v2): base64url header and claims, signed with ed25519 by `signer`
// over "header.claims". `nats` is the claim's "nats" object; iss is the signer, sub `subject`.
std::optional<std::string> MakeJwt(const TempDir& dir, const NKeyPair& signer,
                                   const std::string& subject, const std::string& name,
                                   const std::string& nats) {
  // jti is an opaque unique id to the server (nsc puts a hash there); any 52 characters do.
  std::string jti = NKeyEncode(std::vector<uint8_t>(subject.begin(), subject.begin() + 30));
  std::string claims = "{\"jti\":\"" + jti.substr(0, 52) +
                       "\",\"iat\":" + std::to_string(std::time(nullptr)) + ",\"iss\":\"" +
                       signer.public_key + "\",\"name\":\"" + name + "\",\"sub\":\"" + subject +
                       "\",\"nats\":" + nats + "}";
  std::string signing_input =
      Base64Url(R"({"typ":"JWT","alg":"ed25519-nkey"})") + "." + Base64Url(claims);
  WriteFile(dir / "to-sign", signing_input);
  std::string signature_path = dir / "signature";
  if (!Shell("openssl pkeyutl -sign -rawin -inkey " + signer.pem + " -in " + (dir / "to-sign") +
             " -out " + signature_path)) {
    return std::nullopt;
  }
  std::vector<uint8_t> signature = ReadBytes(signature_path);
  if (signature.size() != 64) {
    return std::nullopt;
  }
  return signing_input + "." + Base64Url(std::string(signature.begin(), signature.end()));
}

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/ferry-nats-auth-XXXXXX";
  path_ = mkdtemp(tmpl) != nullptr ? tmpl : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

bool Shell(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// NKey text encoding: base32 (RFC 4648, no padding) of prefix bytes, key, CRC-16/XMODEM (LE).
std::string NKeyEncode(std::vector<uint8_t> raw) {
  uint16_t crc = 0;
  for (uint8_t byte : raw) {
    crc = static_cast<uint16_t>(crc ^ (byte << 8));
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
  }
  raw.push_back(static_cast<uint8_t>(crc & 0xff));
  raw.push_back(static_cast<uint8_t>(crc >> 8));
  return EncodeBits(raw, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 5);
}

// An ed25519 key pair from the openssl CLI: the last 32 bytes of the PKCS#8 and SPKI DER forms
// are the seed and the public key.
std::optional<NKeyPair> MakeNKey(const TempDir& dir, const std::string& name, uint8_t prefix) {
  std::string pem = dir / (name + ".pem");
  if (!Shell("openssl genpkey -algorithm ed25519 -out " + pem) ||
      !Shell("openssl pkey -in " + pem + " -outform DER -out " + (dir / (name + ".der"))) ||
      !Shell("openssl pkey -in " + pem + " -pubout -outform DER -out " + (dir / (name + ".pub")))) {
    return std::nullopt;
  }
  std::vector<uint8_t> priv = ReadBytes(dir / (name + ".der"));
  std::vector<uint8_t> pub = ReadBytes(dir / (name + ".pub"));
  if (priv.size() < 32 || pub.size() < 32) {
    return std::nullopt;
  }
  constexpr uint8_t kSeed = 18 << 3;
  std::vector<uint8_t> seed = {static_cast<uint8_t>(kSeed | (prefix >> 5)),
                               static_cast<uint8_t>((prefix & 31) << 3)};
  seed.insert(seed.end(), priv.end() - 32, priv.end());
  std::vector<uint8_t> public_key = {prefix};
  public_key.insert(public_key.end(), pub.end() - 32, pub.end());
  return NKeyPair{NKeyEncode(public_key), NKeyEncode(seed), pem};
}

std::optional<OperatorSetup> MakeOperatorSetup(const TempDir& dir, const std::string& prefix) {
  auto op = MakeNKey(dir, prefix + "operator", kOperatorPrefix);
  auto sys = MakeNKey(dir, prefix + "system", kAccountPrefix);
  auto account = MakeNKey(dir, prefix + "account", kAccountPrefix);
  auto user = MakeNKey(dir, prefix + "user", kUserPrefix);
  if (!op || !sys || !account || !user) {
    return std::nullopt;
  }
  const std::string unlimited =
      R"("subs":-1,"data":-1,"payload":-1,"imports":-1,"exports":-1,"wildcards":true,)"
      R"("conn":-1,"leaf":-1)";
  auto op_jwt =
      MakeJwt(dir, *op, op->public_key, "ferry-test-operator",
              R"({"system_account":")" + sys->public_key + R"(","type":"operator","version":2})");
  auto sys_jwt = MakeJwt(dir, *op, sys->public_key, "SYS",
                         R"({"limits":{)" + unlimited + R"(},"type":"account","version":2})");
  auto account_jwt = MakeJwt(dir, *op, account->public_key, "ferry",
                             R"({"limits":{)" + unlimited +
                                 R"(,"mem_storage":-1,"disk_storage":-1,"streams":-1,)"
                                 R"("consumer":-1},"type":"account","version":2})");
  auto user_jwt = MakeJwt(dir, *account, user->public_key, "ferry-user",
                          R"({"pub":{},"sub":{},"subs":-1,"data":-1,"payload":-1,)"
                          R"("type":"user","version":2})");
  if (!op_jwt || !sys_jwt || !account_jwt || !user_jwt) {
    return std::nullopt;
  }
  OperatorSetup setup;
  setup.config = dir / (prefix + "server.conf");
  WriteFile(setup.config, "operator: \"" + *op_jwt + "\"\nsystem_account: " + sys->public_key +
                              "\nresolver: MEMORY\nresolver_preload: {\n  " + account->public_key +
                              ": \"" + *account_jwt + "\"\n  " + sys->public_key + ": \"" +
                              *sys_jwt + "\"\n}\n");
  setup.creds = dir / (prefix + "user.creds");
  WriteFile(setup.creds, "-----BEGIN NATS USER JWT-----\n" + *user_jwt +
                             "\n------END NATS USER JWT------\n\n"
                             "************************* IMPORTANT *************************\n"
                             "NKEY Seed printed below can be used to sign and prove identity.\n"
                             "NKEYs are sensitive and should be treated as secrets.\n\n"
                             "-----BEGIN USER NKEY SEED-----\n" +
                             user->seed +
                             "\n------END USER NKEY SEED------\n\n"
                             "*************************************************************\n");
  setup.user_jwt = *user_jwt;
  setup.user_seed = user->seed;
  return setup;
}

bool MakeCertificates(const TempDir& dir) {
  std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  WriteFile(dir / "server.ext", "subjectAltName=IP:127.0.0.1\n");
  WriteFile(dir / "client.ext", "extendedKeyUsage=clientAuth\n");
  return Shell("openssl req -x509 " + ec + " -keyout " + (dir / "ca.key") + " -out " +
               (dir / "ca.pem") + " -days 1 -subj /CN=ferry-test-ca") &&
         Shell("openssl req " + ec + " -keyout " + (dir / "server.key") + " -out " +
               (dir / "server.csr") + " -subj /CN=127.0.0.1") &&
         Shell("openssl x509 -req -in " + (dir / "server.csr") + " -CA " + (dir / "ca.pem") +
               " -CAkey " + (dir / "ca.key") + " -CAcreateserial -days 1 -out " +
               (dir / "server.pem") + " -extfile " + (dir / "server.ext")) &&
         Shell("openssl req " + ec + " -keyout " + (dir / "client.key") + " -out " +
               (dir / "client.csr") + " -subj /CN=ferry-client") &&
         Shell("openssl x509 -req -in " + (dir / "client.csr") + " -CA " + (dir / "ca.pem") +
               " -CAkey " + (dir / "ca.key") + " -CAcreateserial -days 1 -out " +
               (dir / "client.pem") + " -extfile " + (dir / "client.ext"));
}

}  // namespace ferry::testing::nats_auth
