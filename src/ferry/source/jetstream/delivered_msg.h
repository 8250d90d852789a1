// Freeing the messages a subscription delivers, without nats.c's garbage-collector thread.
//
// natsMsg_Destroy in nats.c 3.4.1 does not free a message: it pushes it onto a list under the
// library's GC mutex and signals the GC thread when that thread sleeps, and the GC thread frees
// it. Destroying the thousand messages of one Poll() thus takes the mutex a thousand times while
// the GC thread wakes and takes it too. With the JetStream benchmark's million messages that
// was 60,000 context switches out of ferry's 66,000, and about 8 % of its CPU
// (docs/BENCHMARKS-history.md, "JetStream ingestion").
//
// The library exports natsMsg_free, the function the GC thread calls, though its header does not
// declare it. FreeDeliveredMsg calls it directly (looked up in the shared object that provides
// natsMsg_Destroy) when the running library is a version whose natsMsg_Destroy we have read.
// In 3.4.1 that frees the message with natsMsg_free unless it carries the library's internal
// no-destroy flag, which only the pull consumers' heartbeat message and the auto-ack callback
// set; neither ever reaches a push subscription's NextMsg caller. Any other version, or a
// library without the symbol, gets natsMsg_Destroy.
//
// Thread-safety: FreeDeliveredMsg may be called from any thread.
#pragma once

#include <nats/nats.h>

#include <memory>

namespace ferry::source::jetstream {

// Whether FreeDeliveredMsg frees directly (true) or calls natsMsg_Destroy (false).
bool DirectMsgFreeAvailable();

// Frees a message natsSubscription_NextMsg returned with NATS_OK. REQUIRES: nothing else frees
// it, and no pointer into it is used afterwards.
void FreeDeliveredMsg(natsMsg* msg);

struct DeliveredMsgDeleter {
  void operator()(natsMsg* p) const { FreeDeliveredMsg(p); }
};
using DeliveredMsgPtr = std::unique_ptr<natsMsg, DeliveredMsgDeleter>;

}  // namespace ferry::source::jetstream
