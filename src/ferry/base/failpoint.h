// Failpoints: named places where a test can make ferry crash, fail with an I/O error, or stall.
//
// Armed from the environment before the process starts (the fault tests spawn the real binary):
//   FERRY_FAILPOINTS="delta.commit.after_link=crash;storage.local.fsync=error(EIO)@3"
// or from a unit test with failpoint::Arm(). A spec is `action[(arg)][trigger]`:
//   crash          raise SIGKILL: nothing is flushed, exactly like `kill -9`
//   error(E)       the failpoint returns an error; E is EIO (default), ENOSPC or FSYNC
//   sleep(MS)      stall MS milliseconds, then continue
//   wait(PATH)     stall until the file PATH exists (polled every 20 ms, at most 10 minutes),
//                  then continue: a test choreographs another writer between two steps of
//                  ferry's (PATH holds no ';' or ')')
//   off            disarmed
// triggers: none = every hit; `@N` only the N-th hit (1-based); `@N+` the N-th and later hits;
// `%P` each hit with probability P percent. Every firing writes one line to stderr,
// "failpoint NAME: crash|error KIND|sleep MS ms|wait PATH", so fault tests can tell it was reached.
//
// FERRY_FAILPOINT("name") evaluates to a Status (OK unless an error fires). With failpoints
// compiled out (release preset) it is Status::OK() and costs nothing; compiled in and unarmed,
// it costs one relaxed atomic load. docs/RELIABILITY.md lists every failpoint name.
//
// Thread-safety: all functions are thread-safe.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "ferry/base/status.h"

namespace ferry::failpoint {

// Arms `name` with `spec` (syntax above). Returns InvalidArgument for a malformed spec.
Status Arm(std::string_view name, std::string_view spec);
// Arms every `name=spec` in a ';'-separated list (the FERRY_FAILPOINTS syntax).
Status ArmFromString(std::string_view list);
void DisarmAll();
// How many times `name` was evaluated since it was armed (0 when not armed).
int64_t HitCount(std::string_view name);

namespace internal {
extern std::atomic<bool> any_armed;
Status Evaluate(std::string_view name);
}  // namespace internal

inline Status Check(std::string_view name) {
  if (!internal::any_armed.load(std::memory_order_relaxed)) [[likely]] {
    return Status::OK();
  }
  return internal::Evaluate(name);
}

}  // namespace ferry::failpoint

#ifdef FERRY_FAILPOINTS_ENABLED
#define FERRY_FAILPOINT(name) ::ferry::failpoint::Check(name)
#else
#define FERRY_FAILPOINT(name) ::ferry::Status::OK()
#endif
