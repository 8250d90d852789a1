// The cache folder outside the tree where `make setup` puts what tests and benchmarks fetch from
// registries (Kafka jars, nats-server and fake-gcs-server builds, Python venvs, Delta jars):
// $FERRY_CACHE_DIR, else $XDG_CACHE_HOME/ferry, else $HOME/.cache/ferry; the shell scripts
// under tools/ spell the same rule `${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}`.
#pragma once

#include <cstdlib>
#include <string>

namespace ferry::testing {

inline std::string FerryCacheDir() {
  if (const char* dir = std::getenv("FERRY_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/ferry";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : "/root") + "/.cache/ferry";
}

}  // namespace ferry::testing
