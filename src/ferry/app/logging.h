// Logging setup for the `ferry` binary: spdlog writing text or JSON lines to stderr, with every
// configured secret redacted from every message before it is written.
//
//   text:  2026-11-30T07:10:00.123Z INFO  pipeline events: committed version 42 (1000 rows)
//   json:  {"ts":"2026-11-30T07:10:00.123Z","level":"info","msg":"pipeline events: ..."}
//
// stdout stays free for command output (`ferry parquet cat`, `ferry table inspect --json`).
// Thread-safety: SetupLogging is called once from main before threads start.
#pragma once

#include <string>
#include <vector>

#include "ferry/base/status.h"

namespace ferry::app {

struct LogOptions {
  std::string format = "text";  // text, json
  std::string level = "info";   // trace, debug, info, warn, error, off
  // Values replaced by "***" wherever they appear in a message.
  std::vector<std::string> secrets;
};

Status SetupLogging(const LogOptions& options);

// Replaces every occurrence of each secret in `text` with "***".
std::string Redact(std::string text, const std::vector<std::string>& secrets);

}  // namespace ferry::app
