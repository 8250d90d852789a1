// TestCa: a certificate authority for TLS tests, made by openssl (Debian's `openssl` 3.0) at test
// time, never committed: a self-signed CA certificate and the server and client certificates it
// signs, each as PEM files (the certificate, and its private key as unencrypted PKCS#8) in a
// folder the caller owns. Keys are ECDSA P-256 (fast to make on a loaded machine; Kafka's PEM
// keystores, librdkafka and nats-server all take them). Certificates are valid for two days.
//
// Used by KafkaBroker's SSL listeners (kafka_broker.h): the broker's keystore is IssueServer's
// certificate and key, its truststore cert() (for mutual TLS); a client puts cert() in
// `ssl.ca.location`, and IssueClient's files in `ssl.certificate.location` /
// `ssl.key.location`. A second TestCa that signed nothing is "a CA the broker does not use".
//
// Thread-safety: a value; Issue* run openssl and write files named after their argument, so two
// threads must not issue the same name at once.
#pragma once

#include <string>

#include "ferry/base/result.h"

namespace ferry::testing {

class TestCa {
 public:
  // PEM files: a certificate (with no chain: the CA signs directly) and its private key.
  struct Files {
    std::string cert;
    std::string key;
  };

  // Makes the CA "CN=<name> test CA" in `dir` (which must exist): <name>-ca.pem and
  // <name>-ca.key. NotFound when openssl is missing; Unavailable when it fails (its output in
  // the message).
  static Result<TestCa> Create(const std::string& dir, const std::string& name);

  // The CA certificate (PEM): what a client trusts.
  const std::string& cert() const { return ca_.cert; }
  const std::string& dir() const { return dir_; }

  // A server certificate "CN=localhost" with subjectAltName IP:127.0.0.1 and DNS:localhost
  // (librdkafka verifies the broker's name by default), files <name>.pem and <name>.key.
  Result<Files> IssueServer(const std::string& name) const;
  // A client certificate "CN=<cn>", files <cn>.pem and <cn>.key. A Kafka broker whose
  // ssl.principal.mapping.rules take the CN (KafkaBroker's do) sees principal User:<cn>.
  Result<Files> IssueClient(const std::string& cn) const;

 private:
  TestCa(std::string openssl, std::string dir, Files ca)
      : openssl_(std::move(openssl)), dir_(std::move(dir)), ca_(std::move(ca)) {}
  Result<Files> Issue(const std::string& name, const std::string& subject,
                      const std::string& extensions) const;

  std::string openssl_;
  std::string dir_;
  Files ca_;
};

}  // namespace ferry::testing
