#include "ferry/app/version.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <nats/nats.h>
#include <zstd.h>

#include <string>

namespace ferry::app {

std::string VersionText() {
  std::string text = fmt::format(
      "ferry {}\n"
      "commit {}\n"
      "librdkafka {}\n"
      "nats.c {}\n"
      "zstd {}",
      FERRY_VERSION, BuildCommit(), rd_kafka_version_str(), nats_GetVersion(),
      ZSTD_versionString());
#if defined(FERRY_FAILPOINTS_ENABLED)
  // The dev and test builds: failpoints can be armed from the environment (docs/RELIABILITY.md).
  text += "\nfailpoints compiled in (a test build, not a release)";
#endif
  return text;
}

}  // namespace ferry::app
