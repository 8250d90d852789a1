// Credentials for tests against real nats-servers, made with the openssl CLI at test time:
// NKey pairs (ed25519, encoded as NKeys), an operator-mode JWT chain (operator, system account,
// account with JetStream, user) with its server configuration and .creds file, and a CA with
// server and client certificates. Used by jetstream_auth_test and ops_test (secrets in logs).
//
// Thread-safety: none; each test makes its own in its own TempDir.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::testing::nats_auth {

// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& text);
std::vector<uint8_t> ReadBytes(const std::string& path);
// Runs a shell command with its output discarded; true on exit 0.
bool Shell(const std::string& command);

// NKey text encoding: base32 (RFC 4648, no padding) of prefix bytes, key, CRC-16/XMODEM (LE).
std::string NKeyEncode(std::vector<uint8_t> raw);

struct NKeyPair {
  std::string public_key;  // "U...", "A...", "O..."
  std::string seed;        // "SU...", "SA...", "SO..."
  std::string pem;         // the private key, for `openssl pkeyutl -sign`
};

// NKey prefix bytes (the first base32 character of the text form).
inline constexpr uint8_t kOperatorPrefix = 14 << 3;  // 'O'
inline constexpr uint8_t kAccountPrefix = 0;         // 'A'
inline constexpr uint8_t kUserPrefix = 20 << 3;      // 'U'

// An ed25519 key pair from the openssl CLI, files named after `name` in `dir`.
std::optional<NKeyPair> MakeNKey(const TempDir& dir, const std::string& name, uint8_t prefix);

// Operator mode (nats-server `-c config`): an operator, a system account (JetStream needs
// one), an account with JetStream enabled and a user of it. The config trusts the operator
// and preloads both account JWTs into a MEMORY resolver; `creds` holds the user JWT and seed
// in the layout of `nsc generate creds`. Files are prefixed with `prefix`.
struct OperatorSetup {
  std::string config;  // server.conf
  std::string creds;   // user.creds
  std::string user_jwt;
  std::string user_seed;
};
std::optional<OperatorSetup> MakeOperatorSetup(const TempDir& dir, const std::string& prefix);

// ca.pem, server.pem/server.key for 127.0.0.1, client.pem/client.key (EC P-256) in `dir`.
bool MakeCertificates(const TempDir& dir);

}  // namespace ferry::testing::nats_auth
