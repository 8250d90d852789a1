// Helpers the config tests share (config_test.cc, config_sources_test.cc, config_routing_test.cc):
// parsing with a fake environment, the example pipeline of issue 4 and the smallest Kafka pipeline.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/config/config.h"

namespace ferry::config::test_support {

inline EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

inline Result<Config> Parse(std::string_view text, std::map<std::string, std::string> env = {}) {
  return ParseConfig(text, "ferry.toml", FakeEnv(std::move(env)));
}

// The example of issue 4, verbatim.
inline constexpr std::string_view kIssueExample = R"(
[[pipeline]]
id = "events"
table = "/data/delta/events"
schema = "id BIGINT NOT NULL, dateTime STRING, payload STRING"
partition_by = []
metadata_columns = { offset = "_offset", partition = "_partition" }

[pipeline.kafka]
brokers = "localhost:9092"
topics = ["events"]
group_id = "ferry-events"
start = "earliest"
properties = { "security.protocol" = "PLAINTEXT" }

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = 100000
max_bytes = "64MB"
max_latency = "1s"
)";

// The smallest Kafka pipeline: no schema, the table must exist.
inline constexpr std::string_view kMinimalKafka = R"([[pipeline]]
id = "a"
table = "/t"
[pipeline.kafka]
brokers = "b"
topics = ["t"]
)";

}  // namespace ferry::config::test_support
