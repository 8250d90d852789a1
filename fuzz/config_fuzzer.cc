// libFuzzer target: TOML text as a ferry configuration (config/config.h), with a fixed
// environment for ${NAME} interpolation. ParseConfig must return a Config or InvalidArgument
// (toml++ exceptions are caught at the adapter); a Config that parses must carry what the
// validation promises (one source per pipeline, a table path), and its
// schema text goes through the DDL parser as `ferry config check` does. Anything else aborts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/base/check.h"
#include "ferry/columnar/ddl.h"
#include "ferry/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ferry::config::EnvLookup env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "BROKERS") {
      return "localhost:9092";
    }
    if (name == "SECRET") {
      return "s3cr3t";
    }
    if (name == "EMPTY") {
      return "";
    }
    return std::nullopt;
  };
  auto config = ferry::config::ParseConfig(text, "fuzz.toml", env);
  if (!config.ok()) {
    FERRY_CHECK_MSG(config.status().code() == ferry::StatusCode::kInvalidArgument,
                    config.status().ToString());
    return 0;
  }
  for (const ferry::config::PipelineConfig& p : config->pipelines) {
    FERRY_CHECK(p.kafka.has_value() != p.jetstream.has_value());
    FERRY_CHECK(!p.table.empty());
    if (!p.schema.empty()) {
      (void)ferry::columnar::ParseDdlSchema(p.schema, p.schema_location.ToString());
    }
  }
  // The small parsers on their own too.
  (void)ferry::config::ParseSize(text);
  (void)ferry::config::ParseDuration(text);
  (void)ferry::config::Interpolate(text, env);
  return 0;
}
