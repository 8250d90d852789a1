// Options of the JetStream source and of the NATS connection it (and `ferry produce nats`) opens.
// Plain structs filled by the config layer or the CLI; Validate() reports every inconsistency as
// InvalidArgument naming the option. docs/jetstream.md lists them with their TOML names.
//
// Thread-safety: value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"

namespace ferry::source::jetstream {

// Where a subject filter the table has never seen starts. A filter with a committed position
// always resumes at position + 1 and ignores this.
struct StartPolicy {
  enum class Kind {
    kAll,       // the stream's first message that is still stored
    kNew,       // only messages published after the source started
    kSequence,  // this stream sequence (as if the table held sequence - 1)
    kTime,      // the first message stored at or after this time
  };
  Kind kind = Kind::kAll;
  uint64_t sequence = 0;  // kSequence, >= 1
  int64_t time_ns = 0;    // kTime, nanoseconds since the Unix epoch

  // Accepts "all", "new", "seq:<N>" or "<N>", "time:<RFC 3339>" or a bare RFC 3339 timestamp
  // ("2024-05-01T12:00:00Z", "2024-05-01T14:00:00.5+02:00").
  static Result<StartPolicy> Parse(std::string_view text);
  std::string ToString() const;
};

struct NatsAuthOptions {
  std::string user;  // with password
  std::string password;
  std::string token;
  std::string nkey;            // the user's public NKey ("U..."), with nkey_seed_file
  std::string nkey_seed_file;  // file holding the NKey seed ("SU...") that signs the nonce
  std::string creds_file;      // a .creds file (user JWT and NKey seed)
};

struct NatsTlsOptions {
  bool enabled = false;   // implied by any of the files below or a tls:// URL
  std::string ca_file;    // trusted CA certificates (PEM)
  std::string cert_file;  // client certificate chain (PEM), with key_file
  std::string key_file;
  std::string expected_hostname;  // when the certificate names a host other than the URL's
};

struct NatsConnectionOptions {
  std::vector<std::string> servers;  // "nats://host:port", "tls://host:port"
  std::string name = "ferry";        // shown by the server's monitoring
  NatsAuthOptions auth;
  NatsTlsOptions tls;
  int64_t connect_timeout_ms = 2000;
  int64_t reconnect_wait_ms = 1000;
  int max_reconnect = -1;  // -1: never give up
  int64_t ping_interval_ms = 20000;
  int max_pings_out = 2;
  int64_t api_timeout_ms = 5000;  // JetStream API requests (stream info, consumer create)

  Status Validate() const;
};

// What to do when the stream no longer holds messages the table has not ingested.
enum class OnGap {
  kFail,      // Poll()/Start() return DataLoss naming stream, filter and range (default)
  kContinue,  // skip them, log them, report them through TakeGaps() for commitInfo and metrics
};

struct JetStreamOptions {
  NatsConnectionOptions connection;
  std::string stream;
  // One source partition per filter, keyed "jetstream/<stream>/<filter>". Filters must not
  // overlap (a message matching two would be ingested twice).
  std::vector<std::string> filters;
  StartPolicy start;
  // Most messages one Poll() returns (the pipeline's max_messages may lower it).
  size_t batch_size = 1000;
  // Fill Message::headers and Message::msg_id. nats.c builds a hash map per message with
  // headers to answer; a pipeline with neither a `headers` nor a `msg_id` column turns it off.
  bool read_headers = true;
  // Idle heartbeat of the ordered consumers; nats.c recreates a consumer after two are missed.
  int64_t heartbeat_ms = 5000;
  OnGap on_gap = OnGap::kFail;

  Status Validate() const;
};

// "jetstream/<stream>/<filter>"
std::string PartitionKey(std::string_view stream, std::string_view filter);

}  // namespace ferry::source::jetstream
