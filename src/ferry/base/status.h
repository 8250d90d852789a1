// Status: the outcome of an operation that can fail, and the codes callers branch on.
//
// ferry never throws. Every fallible function returns a [[nodiscard]] Status or Result<T>
// (result.h). The code says what the caller must do; the message says what happened and to what
// (file, table version, topic/partition/offset), built up with WithContext() as the error rises.
//
// Thread-safety: a Status is a value; distinct objects may be used from distinct threads.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace ferry {

enum class StatusCode : int {
  kOk = 0,
  // Bad configuration or input; report it to the user. Retrying will not help.
  kInvalidArgument = 1,
  // A named thing (file, table, key) does not exist.
  kNotFound = 2,
  // A put-if-absent lost: the name exists already.
  kAlreadyExists = 3,
  // A commit conflict or fencing: re-read the log and decide again.
  kAborted = 4,
  // A transient failure (broker or store unreachable, timeout): retry with backoff.
  kUnavailable = 5,
  // Corruption or lost data: stop, report, never auto-repair.
  kDataLoss = 6,
  // An I/O error from the operating system (EIO, ENOSPC, failed fsync).
  kIOError = 7,
  // The input uses a feature ferry does not implement (named in the message).
  kNotSupported = 8,
  // A limit set by configuration or by the input's own size was exceeded.
  kResourceExhausted = 9,
  // The operation was stopped on purpose (shutdown).
  kCancelled = 10,
  // A bug in ferry.
  kInternal = 11,
  // A server refused the credentials, certificate or permissions ferry presented (a failed SASL
  // login, an untrusted TLS certificate, a missing ACL): fix the configuration or the grants;
  // retrying will not help. `ferry run` exits 2 on it, as on bad configuration.
  kPermissionDenied = 12,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // The message without the code name; empty when OK.
  const std::string& message() const;
  // "Code: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "context: message". OK stays OK.
  Status WithContext(std::string_view context) const;
  template <typename... Args>
  Status WithContext(fmt::format_string<Args...> format, Args&&... args) const {
    if (ok()) {
      return *this;
    }
    return WithContext(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
  }

  // Marks a Status as deliberately not inspected.
  void IgnoreError() const {}

  bool operator==(const Status& other) const {
    return code() == other.code() && message() == other.message();
  }

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  // Null when OK, so an OK Status is one pointer and costs no allocation.
  std::shared_ptr<const State> state_;
};

// Factories, one per code, with fmt-style formatting:
//   return InvalidArgument("{}:{}: unknown key '{}'", file, line, key);
#define FERRY_STATUS_FACTORY(Name)                                                        \
  inline Status Name(std::string message) {                                               \
    return Status(StatusCode::k##Name, std::move(message));                               \
  }                                                                                       \
  template <typename... Args>                                                             \
  Status Name(fmt::format_string<Args...> format, Args&&... args) {                       \
    return Status(StatusCode::k##Name, fmt::format(format, std::forward<Args>(args)...)); \
  }
FERRY_STATUS_FACTORY(InvalidArgument)
FERRY_STATUS_FACTORY(NotFound)
FERRY_STATUS_FACTORY(AlreadyExists)
FERRY_STATUS_FACTORY(Aborted)
FERRY_STATUS_FACTORY(Unavailable)
FERRY_STATUS_FACTORY(DataLoss)
FERRY_STATUS_FACTORY(IOError)
FERRY_STATUS_FACTORY(NotSupported)
FERRY_STATUS_FACTORY(ResourceExhausted)
FERRY_STATUS_FACTORY(Cancelled)
FERRY_STATUS_FACTORY(Internal)
FERRY_STATUS_FACTORY(PermissionDenied)
#undef FERRY_STATUS_FACTORY

// Whether retrying the failed call may succeed: the store or the disk did not answer
// (Unavailable, IOError) or the call was stopped (Cancelled). A caller that turns a failed read
// into DataLoss, which stops a pipeline, must keep these codes instead.
inline bool IsRetryable(const Status& status) {
  return status.code() == StatusCode::kUnavailable || status.code() == StatusCode::kIOError ||
         status.code() == StatusCode::kCancelled;
}

// A failed read of something that must be there (a table's live file, a checkpoint part): a
// retryable failure (the store did not answer) keeps its code, with `what` before its message, so
// that the caller retries; anything else (missing, damaged) is DataLoss "<what>: <status>".
Status DataLossUnlessRetryable(const Status& status, std::string_view what);

// An IOError (or NotFound for ENOENT, ResourceExhausted for ENOSPC/EDQUOT) from errno, naming
// the operation and the path: "open /t/_delta_log/00.json: No such file or directory".
Status ErrnoStatus(int err, std::string_view operation, std::string_view path);

}  // namespace ferry

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define FERRY_RETURN_IF_ERROR(expr)             \
  do {                                          \
    ::ferry::Status ferry_status_tmp_ = (expr); \
    if (!ferry_status_tmp_.ok()) {              \
      return ferry_status_tmp_;                 \
    }                                           \
  } while (false)

#define FERRY_CONCAT_INNER_(a, b) a##b
#define FERRY_CONCAT_(a, b) FERRY_CONCAT_INNER_(a, b)

// FERRY_ASSIGN_OR_RETURN(auto x, MakeX()); declares/assigns `lhs` from a Result<T>, or returns
// its Status from the enclosing function.
#define FERRY_ASSIGN_OR_RETURN(lhs, expr) \
  FERRY_ASSIGN_OR_RETURN_IMPL_(FERRY_CONCAT_(ferry_result_, __LINE__), lhs, expr)
#define FERRY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) {                                   \
    return std::move(tmp).status();                  \
  }                                                  \
  lhs = std::move(tmp).value()
