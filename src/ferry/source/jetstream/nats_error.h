// Turns nats.c outcomes into ferry Status codes, so the pipeline can tell "retry" (Unavailable)
// from "fix the configuration" (InvalidArgument, NotFound) without knowing nats.c.
//
// Thread-safety: reads nats.c's per-thread error text; call on the thread that made the call.
#pragma once

#include <nats/nats.h>

#include <string_view>

#include "ferry/base/status.h"

namespace ferry::source::jetstream {

// `what` names the operation and its object ("get stream info for 'orders'"). `js_error` is the
// JetStream API error code the call reported (0 if none); it refines the code (stream not found
// is NotFound). The message carries nats.c's last error text for this thread when it has one.
Status NatsError(natsStatus status, std::string_view what, jsErrCode js_error = jsErrCode(0));

}  // namespace ferry::source::jetstream
