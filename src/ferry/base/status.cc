#include "ferry/base/status.h"

#include <cerrno>
#include <cstring>

namespace ferry {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case StatusCode::kAborted:
      return "Aborted";
    case StatusCode::kUnavailable:
      return "Unavailable";
    case StatusCode::kDataLoss:
      return "DataLoss";
    case StatusCode::kIOError:
      return "IOError";
    case StatusCode::kNotSupported:
      return "NotSupported";
    case StatusCode::kResourceExhausted:
      return "ResourceExhausted";
    case StatusCode::kCancelled:
      return "Cancelled";
    case StatusCode::kInternal:
      return "Internal";
    case StatusCode::kPermissionDenied:
      return "PermissionDenied";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) {
    state_ = std::make_shared<const State>(State{code, std::move(message)});
  }
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) {
    return "OK";
  }
  return fmt::format("{}: {}", StatusCodeName(code()), message());
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) {
    return *this;
  }
  return Status(code(), fmt::format("{}: {}", context, message()));
}

Status DataLossUnlessRetryable(const Status& status, std::string_view what) {
  if (status.ok()) {
    return status;
  }
  if (IsRetryable(status)) {
    return status.WithContext(what);
  }
  return Status(StatusCode::kDataLoss, fmt::format("{}: {}", what, status.ToString()));
}

Status ErrnoStatus(int err, std::string_view operation, std::string_view path) {
  std::string message = fmt::format("{} {}: {}", operation, path, std::strerror(err));
  switch (err) {
    case ENOENT:
      return Status(StatusCode::kNotFound, std::move(message));
    case EEXIST:
      return Status(StatusCode::kAlreadyExists, std::move(message));
    case ENOSPC:
    case EDQUOT:
      return Status(StatusCode::kResourceExhausted, std::move(message));
    default:
      return Status(StatusCode::kIOError, std::move(message));
  }
}

}  // namespace ferry
