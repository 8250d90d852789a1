#include "ferry/source/jetstream/nats_error.h"

#include <string>

namespace ferry::source::jetstream {
namespace {

StatusCode CodeFor(natsStatus status, jsErrCode js_error) {
  switch (js_error) {
    case JSStreamNotFoundErr:
    case JSConsumerNotFoundErr:
    case JSNoMessageFoundErr:
      return StatusCode::kNotFound;
    case JSNotEnabledErr:
    case JSNotEnabledForAccountErr:
      return StatusCode::kInvalidArgument;
    // A cluster between leaders (a stream or meta leader killed, a server restarting): the same
    // request succeeds once a leader is elected, so it is retried, never fatal.
    case JSClusterIncompleteErr:
    case JSClusterNotAvailErr:
    case JSClusterNotLeaderErr:
      return StatusCode::kUnavailable;
    default:
      break;
  }
  switch (status) {
    case NATS_IO_ERROR:
    case NATS_CONNECTION_CLOSED:
    case NATS_NO_SERVER:
    case NATS_STALE_CONNECTION:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_TIMEOUT:
    case NATS_NOT_YET_CONNECTED:
    case NATS_NO_RESPONDERS:
    case NATS_DRAINING:
      return StatusCode::kUnavailable;
    case NATS_NOT_FOUND:
      return StatusCode::kNotFound;
    case NATS_CONNECTION_AUTH_FAILED:
    case NATS_NOT_PERMITTED:
    case NATS_SECURE_CONNECTION_WANTED:
    case NATS_SECURE_CONNECTION_REQUIRED:
    case NATS_SSL_ERROR:
    case NATS_ADDRESS_MISSING:
    case NATS_INVALID_SUBJECT:
    case NATS_INVALID_ARG:
    case NATS_INVALID_TIMEOUT:
    case NATS_MAX_PAYLOAD:
      return StatusCode::kInvalidArgument;
    case NATS_NO_MEMORY:
    case NATS_SLOW_CONSUMER:
      return StatusCode::kResourceExhausted;
    case NATS_NO_SERVER_SUPPORT:
      return StatusCode::kNotSupported;
    default:
      // Server-side JetStream API errors arrive as NATS_ERR with a code; most mean the request
      // itself was refused (bad consumer config, filter not in the stream).
      return js_error != 0 ? StatusCode::kInvalidArgument : StatusCode::kInternal;
  }
}

}  // namespace

Status NatsError(natsStatus status, std::string_view what, jsErrCode js_error) {
  std::string message(what);
  message += ": ";
  message += natsStatus_GetText(status);
  // nats.c prefixes its error text with the source location: "(conn.c:2088): text".
  const char* last = nats_GetLastError(nullptr);
  std::string_view detail = last != nullptr ? last : "";
  if (detail.starts_with("(")) {
    if (size_t end = detail.find("): "); end != std::string_view::npos) {
      detail.remove_prefix(end + 3);
    }
  }
  if (!detail.empty() && detail != natsStatus_GetText(status)) {
    message += " (";
    message += detail;
    message += ")";
  }
  if (js_error != 0) {
    message += " [JetStream error ";
    message += std::to_string(static_cast<int>(js_error));
    message += "]";
  }
  return Status(CodeFor(status, js_error), std::move(message));
}

}  // namespace ferry::source::jetstream
