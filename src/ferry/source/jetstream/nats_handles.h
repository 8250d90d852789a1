// Owning handles for the nats.c objects the JetStream source and tools use: each C handle lives
// in a std::unique_ptr whose deleter calls the matching nats.c destroy function, so no path out of
// a function leaks one.
//
// Order matters between them (nats.c keeps no reference counts the caller can rely on):
// messages and subscriptions before the jsCtx, the jsCtx before the connection that created it.
// Classes holding several handles document their member order next to the members.
//
// Thread-safety: as for the underlying nats.c objects; a handle is owned by one thread.
#pragma once

#include <nats/nats.h>

#include <memory>

namespace ferry::source::jetstream {

struct NatsOptionsDeleter {
  void operator()(natsOptions* p) const { natsOptions_Destroy(p); }
};
struct NatsConnectionDeleter {
  // Destroy closes the connection first if needed (flushes nothing: callers that need their
  // publishes delivered wait for the acks before letting go).
  void operator()(natsConnection* p) const { natsConnection_Destroy(p); }
};
struct JsCtxDeleter {
  void operator()(jsCtx* p) const { jsCtx_Destroy(p); }
};
struct NatsSubscriptionDeleter {
  // Destroy does not delete the server-side consumer; Unsubscribe does (for consumers the library
  // created). The source unsubscribes explicitly where that matters.
  void operator()(natsSubscription* p) const { natsSubscription_Destroy(p); }
};
struct NatsMsgDeleter {
  void operator()(natsMsg* p) const { natsMsg_Destroy(p); }
};
struct JsStreamInfoDeleter {
  void operator()(jsStreamInfo* p) const { jsStreamInfo_Destroy(p); }
};
struct NatsStatisticsDeleter {
  void operator()(natsStatistics* p) const { natsStatistics_Destroy(p); }
};
struct JsPubAckDeleter {
  void operator()(jsPubAck* p) const { jsPubAck_Destroy(p); }
};

using NatsOptionsPtr = std::unique_ptr<natsOptions, NatsOptionsDeleter>;
using NatsConnectionPtr = std::unique_ptr<natsConnection, NatsConnectionDeleter>;
using JsCtxPtr = std::unique_ptr<jsCtx, JsCtxDeleter>;
using NatsSubscriptionPtr = std::unique_ptr<natsSubscription, NatsSubscriptionDeleter>;
using NatsMsgPtr = std::unique_ptr<natsMsg, NatsMsgDeleter>;
using JsStreamInfoPtr = std::unique_ptr<jsStreamInfo, JsStreamInfoDeleter>;
using NatsStatisticsPtr = std::unique_ptr<natsStatistics, NatsStatisticsDeleter>;
using JsPubAckPtr = std::unique_ptr<jsPubAck, JsPubAckDeleter>;

}  // namespace ferry::source::jetstream
