#include "ferry/source/jetstream/nats_connect.h"

#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "ferry/source/jetstream/nats_error.h"

namespace ferry::source::jetstream {
namespace {

constexpr int kIoBufferBytes = 256 * 1024;  // natsOptions_SetIOBufSize (see ConnectNats)

// nats.c before 3.8.0 (Debian 12 has 3.4.1) base64-encodes the signature of the server's nonce
// with a function that takes a buffer whose first byte is zero for an empty one, so one signed
// CONNECT in 256 goes out without its signature and the server refuses it ("Authorization
// Violation"; its debug log says "Signature missing"). The nonce is new on every connection, so a
// connect that signs (NKey seed, creds file) and is refused is tried again: with four attempts,
// right credentials fail about once in four billion connects, wrong ones after four refusals.
// nats.c's own reconnects retry a refused attempt once more before giving up.
constexpr int kSignedConnectAttempts = 4;

Status Check(natsStatus status, std::string_view what) {
  return status == NATS_OK ? Status::OK() : NatsError(status, what);
}

Status ApplyAuth(natsOptions* opts, const NatsAuthOptions& auth) {
  if (!auth.user.empty()) {
    FERRY_RETURN_IF_ERROR(Check(
        natsOptions_SetUserInfo(opts, auth.user.c_str(), auth.password.c_str()), "nats user"));
  }
  if (!auth.token.empty()) {
    FERRY_RETURN_IF_ERROR(Check(natsOptions_SetToken(opts, auth.token.c_str()), "nats token"));
  }
  if (!auth.nkey_seed_file.empty()) {
    FERRY_RETURN_IF_ERROR(
        Check(natsOptions_SetNKeyFromSeed(opts, auth.nkey.c_str(), auth.nkey_seed_file.c_str()),
              fmt::format("nats nkey seed file '{}'", auth.nkey_seed_file)));
  }
  if (!auth.creds_file.empty()) {
    FERRY_RETURN_IF_ERROR(
        Check(natsOptions_SetUserCredentialsFromFiles(opts, auth.creds_file.c_str(), nullptr),
              fmt::format("nats creds file '{}'", auth.creds_file)));
  }
  return Status::OK();
}

Status ApplyTls(natsOptions* opts, const NatsConnectionOptions& options) {
  const NatsTlsOptions& tls = options.tls;
  bool tls_url = false;
  for (const std::string& url : options.servers) {
    tls_url = tls_url || url.starts_with("tls://");
  }
  bool enabled = tls.enabled || tls_url || !tls.ca_file.empty() || !tls.cert_file.empty();
  if (!enabled) {
    return Status::OK();
  }
  FERRY_RETURN_IF_ERROR(Check(natsOptions_SetSecure(opts, true), "nats tls"));
  if (!tls.ca_file.empty()) {
    FERRY_RETURN_IF_ERROR(Check(natsOptions_LoadCATrustedCertificates(opts, tls.ca_file.c_str()),
                                fmt::format("nats tls ca_file '{}'", tls.ca_file)));
  }
  if (!tls.cert_file.empty()) {
    FERRY_RETURN_IF_ERROR(
        Check(natsOptions_LoadCertificatesChain(opts, tls.cert_file.c_str(), tls.key_file.c_str()),
              fmt::format("nats tls cert_file '{}' / key_file '{}'", tls.cert_file, tls.key_file)));
  }
  if (!tls.expected_hostname.empty()) {
    FERRY_RETURN_IF_ERROR(
        Check(natsOptions_SetExpectedHostname(opts, tls.expected_hostname.c_str()),
              "nats tls expected_hostname"));
  }
  return Status::OK();
}

std::string ServerList(const NatsConnectionOptions& options) {
  std::string list;
  for (const std::string& url : options.servers) {
    list += list.empty() ? url : "," + url;
  }
  return list;
}

}  // namespace

Result<NatsConnectionPtr> ConnectNats(const NatsConnectionOptions& options) {
  natsOptions* raw = nullptr;
  FERRY_RETURN_IF_ERROR(Check(natsOptions_Create(&raw), "nats options"));
  NatsOptionsPtr opts(raw);
  std::vector<const char*> urls;
  for (const std::string& url : options.servers) {
    urls.push_back(url.c_str());
  }
  FERRY_RETURN_IF_ERROR(
      Check(natsOptions_SetServers(opts.get(), urls.data(), static_cast<int>(urls.size())),
            fmt::format("nats servers '{}'", ServerList(options))));
  // Keep the order given: the first server is the preferred one.
  FERRY_RETURN_IF_ERROR(Check(natsOptions_SetNoRandomize(opts.get(), true), "nats options"));
  FERRY_RETURN_IF_ERROR(Check(natsOptions_SetName(opts.get(), options.name.c_str()), "nats name"));
  FERRY_RETURN_IF_ERROR(Check(natsOptions_SetTimeout(opts.get(), options.connect_timeout_ms),
                              "nats connect_timeout"));
  FERRY_RETURN_IF_ERROR(Check(natsOptions_SetAllowReconnect(opts.get(), true), "nats options"));
  FERRY_RETURN_IF_ERROR(
      Check(natsOptions_SetMaxReconnect(opts.get(), options.max_reconnect), "nats max_reconnect"));
  FERRY_RETURN_IF_ERROR(Check(natsOptions_SetReconnectWait(opts.get(), options.reconnect_wait_ms),
                              "nats reconnect_wait"));
  FERRY_RETURN_IF_ERROR(Check(natsOptions_SetPingInterval(opts.get(), options.ping_interval_ms),
                              "nats ping_interval"));
  FERRY_RETURN_IF_ERROR(
      Check(natsOptions_SetMaxPingsOut(opts.get(), options.max_pings_out), "nats max_pings_out"));
  // nats.c reads the socket through a 32 KiB buffer by default; at JetStream catch-up rates that
  // is ~12,000 recv calls per 400 MB. 256 KiB cut ferry's system time by about a fifth in the
  // JetStream benchmark (docs/BENCHMARKS-history.md). nats.c sizes its write buffer the same way,
  // so each connection (the source's, `ferry produce nats`, the broker-heads probe) holds
  // ~448 KiB more, and a publisher flushes at 256 KiB of pending data instead of 32 KiB.
  FERRY_RETURN_IF_ERROR(
      Check(natsOptions_SetIOBufSize(opts.get(), kIoBufferBytes), "nats io buffer size"));
  FERRY_RETURN_IF_ERROR(ApplyAuth(opts.get(), options.auth));
  FERRY_RETURN_IF_ERROR(ApplyTls(opts.get(), options));

  const NatsAuthOptions& auth = options.auth;
  const bool signs = !auth.nkey_seed_file.empty() || !auth.creds_file.empty();
  const int attempts = signs ? kSignedConnectAttempts : 1;
  natsStatus status = NATS_OK;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    natsConnection* connection = nullptr;
    status = natsConnection_Connect(&connection, opts.get());
    if (status == NATS_OK) {
      return NatsConnectionPtr(connection);
    }
    if (status != NATS_CONNECTION_AUTH_FAILED || attempt == attempts) {
      break;
    }
    spdlog::debug(
        "nats: {} refused the signed connect (attempt {} of {}; nats.c {} may have sent it "
        "without its signature), connecting again",
        ServerList(options), attempt, attempts, nats_GetVersion());
  }
  return NatsError(status, fmt::format("connect to nats {}", ServerList(options)));
}

Result<JsCtxPtr> OpenJetStream(natsConnection* connection, int64_t api_timeout_ms,
                               const jsOptions* async_publish) {
  jsOptions options;
  if (async_publish != nullptr) {
    options = *async_publish;
  } else {
    FERRY_RETURN_IF_ERROR(Check(jsOptions_Init(&options), "jetstream options"));
  }
  options.Wait = api_timeout_ms;
  jsCtx* js = nullptr;
  FERRY_RETURN_IF_ERROR(Check(natsConnection_JetStream(&js, connection, &options), "jetstream"));
  return JsCtxPtr(js);
}

}  // namespace ferry::source::jetstream
