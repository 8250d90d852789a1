// Result<T>: a value or the Status that explains its absence (Arrow's Result, Abseil's StatusOr).
//
//   Result<Snapshot> s = log.Load();
//   if (!s.ok()) return s.status().WithContext("table {}", path);
//   FERRY_ASSIGN_OR_RETURN(Snapshot snap, log.Load());
//
// Thread-safety: a value type.
#pragma once

#include <utility>
#include <variant>

#include "ferry/base/check.h"
#include "ferry/base/status.h"

namespace ferry {

template <typename T>
class [[nodiscard]] Result {
 public:
  // REQUIRES: !status.ok()
  Result(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    FERRY_CHECK(!std::get<Status>(state_).ok());
  }
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  template <typename U>
  requires(std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, Status>) Result(U&& value)
      : state_(T(std::forward<U>(value))) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }

  Status status() const& { return ok() ? Status::OK() : std::get<Status>(state_); }
  Status status() && { return ok() ? Status::OK() : std::move(std::get<Status>(state_)); }

  // REQUIRES: ok()
  const T& value() const& {
    CheckOk();
    return std::get<T>(state_);
  }
  T& value() & {
    CheckOk();
    return std::get<T>(state_);
  }
  T&& value() && {
    CheckOk();
    return std::move(std::get<T>(state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  T value_or(T fallback) const& { return ok() ? std::get<T>(state_) : std::move(fallback); }

 private:
  void CheckOk() const { FERRY_CHECK_MSG(ok(), std::get<Status>(state_).ToString()); }

  std::variant<Status, T> state_;
};

}  // namespace ferry
