// Opens NATS connections and JetStream contexts from NatsConnectionOptions: servers, name,
// authentication (user/password, token, NKey, creds file), TLS (CA, client certificate) and the
// reconnect policy. Shared by the JetStream source and `ferry produce nats`.
//
// Thread-safety: the functions may be called from any thread; each returned handle belongs to
// its caller.
#pragma once

#include <nats/nats.h>

#include "ferry/base/result.h"
#include "ferry/source/jetstream/jetstream_options.h"
#include "ferry/source/jetstream/nats_handles.h"

namespace ferry::source::jetstream {

// Connects to the first reachable server. Unavailable when none answers; InvalidArgument for a
// refused authentication or a TLS setup error (named, without secrets). A connect that signs the
// server's nonce (NKey seed, creds file) and is refused is tried up to four times: nats.c 3.4.1
// leaves one signature in 256 out of its CONNECT (nats_connect.cc).
// REQUIRES: options.Validate().ok()
Result<NatsConnectionPtr> ConnectNats(const NatsConnectionOptions& options);

// A JetStream context on `connection` whose API requests time out after `api_timeout_ms`.
// `async_publish` (may be null) configures asynchronous publishing for producers.
// REQUIRES: the context is destroyed before the connection.
Result<JsCtxPtr> OpenJetStream(natsConnection* connection, int64_t api_timeout_ms,
                               const jsOptions* async_publish = nullptr);

}  // namespace ferry::source::jetstream
