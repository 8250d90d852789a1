// RefreshingCredentials<T>: the cache in front of a source of credentials that expire (AWS
// temporary credentials from STS, a container endpoint or instance metadata: s3/credentials.h;
// Microsoft Entra ID access tokens: azure/azure_credentials.h). One refresh logic for every store:
//
//   - the first Get fetches (callers arriving meanwhile wait for that one fetch);
//   - from `margin` before expiry (max_margin, or a quarter of the lifetime for short-lived
//     credentials) a background thread fetches new ones while callers keep getting the current
//     ones, so a refresh never blocks ingestion; one fetch at a time;
//   - a failed background fetch is logged and retried after a backoff (retry_backoff, doubling to
//     a minute); it is not an error while the current credentials are usable;
//   - credentials are treated as expired a little early (a tenth of their lifetime, at most
//     30 s), so that a request signed with them does not reach the service after they stopped
//     working. Only then does a caller wait for a fetch, and a failed fetch fails the caller with
//     a code it can act on (CredentialCallerStatus).
//
// T is a value type with a member `std::optional<std::chrono::system_clock::time_point>
// expiration` (nullopt: never expires). `what` ("AWS credentials from web identity (arn:...)",
// "Azure token from workload identity (client ...)") begins every message; no message or log
// line carries the credentials themselves.
//
// Thread-safety: Get may be called from many threads at once.
#pragma once

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "ferry/base/log.h"
#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/http/deadline.h"

namespace ferry::storage {

struct CredentialRefreshOptions {
  // Refresh this long before expiry, at most (a quarter of the lifetime for shorter ones).
  std::chrono::seconds max_margin{300};
  // Give up on one background fetch after this long.
  std::chrono::seconds fetch_timeout{30};
  // Wait at least this long after a failed background fetch before the next.
  std::chrono::milliseconds retry_backoff{1000};
};

// What a credential error tells a store's caller: retry (Unavailable) or fix the configuration
// (InvalidArgument, NotSupported), or Cancelled; any other code becomes Unavailable, so that no
// credential failure can be taken for an answer about an object (NotFound, AlreadyExists,
// Aborted). `what` is prefixed to the message.
inline Status CredentialCallerStatus(const Status& s, std::string_view what) {
  Status out = s.WithContext("{}", what);
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotSupported:
    case StatusCode::kUnavailable:
    case StatusCode::kCancelled:
      return out;
    default:
      return Status(StatusCode::kUnavailable, out.message());
  }
}

template <typename T>
class RefreshingCredentials {
 public:
  using Fetch = std::function<Result<T>(http::Deadline deadline)>;

  RefreshingCredentials(std::string what, Fetch fetch, CredentialRefreshOptions options = {})
      : what_(std::move(what)),
        fetch_(std::move(fetch)),
        options_(options),
        failure_backoff_(options.retry_backoff) {}

  ~RefreshingCredentials() {
    std::unique_lock lock(mu_);
    stopping_ = true;
    lock.unlock();
    if (background_.joinable()) {
      background_.join();  // bounded by fetch_timeout
    }
  }

  RefreshingCredentials(const RefreshingCredentials&) = delete;
  RefreshingCredentials& operator=(const RefreshingCredentials&) = delete;

  // Credentials usable now. Blocks (within `deadline`) only for a first fetch or when the cached
  // ones are no longer usable.
  Result<T> Get(http::Deadline deadline) {
    std::unique_lock lock(mu_);
    for (;;) {
      SystemClock::time_point now = SystemClock::now();
      if (cached_ && now < cached_->usable_until) {
        if (now >= cached_->refresh_at && !fetching_ && !stopping_ &&
            now >= next_background_attempt_) {
          StartBackgroundRefresh();
        }
        return cached_->value;
      }
      if (!fetching_) {
        break;
      }
      // Another caller (or the background thread) is fetching: wait for its result.
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && fetching_) {
        return Unavailable("{}: timed out waiting for a refresh in progress{}", what_,
                           cached_ ? " (the cached credentials have expired)" : "");
      }
    }
    fetching_ = true;
    lock.unlock();
    Result<T> fetched = fetch_(deadline);
    lock.lock();
    fetching_ = false;
    cv_.notify_all();
    if (!fetched.ok()) {
      return CredentialCallerStatus(fetched.status(), what_);
    }
    Install(std::move(fetched).value());
    if (SystemClock::now() >= cached_->usable_until) {
      return Unavailable(
          "{}: the new credentials expire at {}, too soon to use (is the clock right?)", what_,
          FormatTime(*cached_->value.expiration));
    }
    return cached_->value;
  }

  const std::string& what() const { return what_; }

 private:
  using SystemClock = std::chrono::system_clock;

  struct Cached {
    T value;
    SystemClock::time_point refresh_at;
    SystemClock::time_point usable_until;
  };

  static std::string FormatTime(SystemClock::time_point t) {
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(SystemClock::to_time_t(t)));
  }

  // REQUIRES: mu_ held.
  void Install(T value) {
    Cached c{.value = std::move(value),
             .refresh_at = SystemClock::time_point::max(),
             .usable_until = SystemClock::time_point::max()};
    if (c.value.expiration) {
      SystemClock::time_point expiry = *c.value.expiration;
      SystemClock::duration lifetime =
          std::max(SystemClock::duration(0), expiry - SystemClock::now());
      SystemClock::duration margin =
          std::min<SystemClock::duration>(options_.max_margin, lifetime / 4);
      c.refresh_at = expiry - margin;
      c.usable_until =
          expiry - std::min<SystemClock::duration>(std::chrono::seconds(30), lifetime / 10);
    }
    cached_ = std::move(c);
  }

  // REQUIRES: mu_ held, !fetching_.
  void StartBackgroundRefresh() {
    fetching_ = true;
    if (background_.joinable()) {
      background_.join();  // the last refresh ended: it cleared fetching_ and returns
    }
    background_ = std::thread([this] { BackgroundRefresh(); });
  }

  void BackgroundRefresh() {
    Result<T> fetched = fetch_(http::DeadlineAfter(options_.fetch_timeout));
    std::lock_guard lock(mu_);
    fetching_ = false;
    if (fetched.ok()) {
      Install(std::move(fetched).value());
      failure_backoff_ = options_.retry_backoff;
      next_background_attempt_ = {};
      FERRY_LOG_DEBUG("{} refreshed{}", what_,
                      cached_->value.expiration
                          ? "; they expire at " + FormatTime(*cached_->value.expiration)
                          : std::string());
    } else {
      next_background_attempt_ = SystemClock::now() + failure_backoff_;
      FERRY_LOG_WARN(
          "{}: refresh failed, retrying in {} ms; the current ones stay in use until {}: {}", what_,
          failure_backoff_.count(), FormatTime(cached_->usable_until), fetched.status().ToString());
      failure_backoff_ =
          std::min<std::chrono::milliseconds>(failure_backoff_ * 2, std::chrono::minutes(1));
    }
    cv_.notify_all();
  }

  const std::string what_;
  const Fetch fetch_;
  const CredentialRefreshOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  // All below guarded by mu_.
  std::optional<Cached> cached_;
  bool fetching_ = false;
  bool stopping_ = false;
  SystemClock::time_point next_background_attempt_{};
  std::chrono::milliseconds failure_backoff_;
  // The last background refresh; joined before the next starts and in the destructor.
  std::thread background_;
};

}  // namespace ferry::storage
