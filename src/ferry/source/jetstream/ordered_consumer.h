// The data side of the JetStream source (jetstream_source.h, step 3): creating a filter's nats.c
// ordered consumer at a start sequence or by the start policy, and reading the headers of the
// messages it delivers. The consumer and its subscription live on the source's data connection:
// nats.c 3.4.1 creates the consumer with a request on the connection that will receive its
// messages (the control connection's requests are in stream_info_client.h).
//
// Thread-safety: free functions over the handles given; a handle is used by one thread at a time.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/source/jetstream/jetstream_options.h"
#include "ferry/source/jetstream/nats_handles.h"
#include "ferry/source/source.h"

namespace ferry::source::jetstream {

// An ordered push consumer (AckNone, flow control, idle heartbeats every `heartbeat_ms`) on
// `stream` for `subject`, starting at stream sequence `next`, or by `start` when `next` is 0.
// Its pending limits are unlimited: nats.c 3.4.1 checks for gaps before it applies them, so a
// message dropped as "slow consumer" would be lost unnoticed (FIELD-NOTES). A start by time
// asks for the whole second before `start.time_ns` (nats.c 3.4.1 encodes the fraction of a
// second without its leading zeros): the caller drops the earlier messages. `key` names the
// partition in errors.
Result<NatsSubscriptionPtr> SubscribeOrdered(jsCtx* js, const std::string& stream,
                                             const std::string& subject, uint64_t next,
                                             const StartPolicy& start, int64_t heartbeat_ms,
                                             std::string_view key);

// Appends the headers of `msg` to *headers (views into the message: valid while it lives) and
// sets *msg_id to the first Nats-Msg-Id value, if any. An error leaves what was appended.
Status ReadHeaders(natsMsg* msg, std::vector<Header>* headers, std::string_view* msg_id);

}  // namespace ferry::source::jetstream
