// `ferry status --config FILE --watch`: the status page in a terminal. Every --interval it asks the
// running `ferry run` of FILE for /api/status (the last minute of samples; `[metrics] listen`,
// with its basic auth and TLS: the server's certificate is checked against `tls_cert`) and draws
// each pipeline: state and error, rows/s, the data rate (in the unit that fits it), messages/s with
// a sparkline, batch and commit durations, the table's figures, the last commit, and per partition
// position, head, lag (with a sparkline) and rate-limit pauses. On a terminal each frame replaces
// the last; otherwise frames follow each other, separated by a blank line.
//
// When no `ferry run` answers (not running, no listener configured), each frame says so and shows
// `fallback()` instead: the positions, heads and lags from the tables and brokers, like
// `ferry status` without --watch.
//
// Thread-safety: run from main() only.
#pragma once

#include <chrono>
#include <functional>
#include <set>
#include <string>

#include "ferry/config/config.h"

namespace ferry::app {

struct WatchOptions {
  std::chrono::milliseconds interval{1000};
  int64_t count = 0;                // frames to draw; 0 = until interrupted
  std::set<std::string> pipelines;  // empty: all
};

// Returns the exit code (0; 2 when --count frames could not be drawn at all).
int WatchStatus(const config::Config& config, const WatchOptions& options,
                const std::function<std::string()>& fallback);

}  // namespace ferry::app
