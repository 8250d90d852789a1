// The ferry configuration files of the end-to-end and torture tests, built from the parts they
// set and written to disk: a [[pipeline]] (PipelineToml) with its source section (KafkaToml,
// JetStreamToml) and batch, and the top-level sections ([metrics], [log]) as text. What a test
// does not set is left out, so ferry's defaults apply; anything else a test needs goes in
// verbatim (`keys`, `sections`, `after`, `extra`), in the order the fields are declared.
//
// Thread-safety: plain values and free functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ferry::e2e {

// [pipeline.kafka]
struct KafkaToml {
  std::string brokers;
  std::vector<std::string> topics = {"events"};
  std::string group_id;
  std::string start = "earliest";  // empty: left out
  std::string assignment;          // empty: left out
  std::string properties;          // the inside of the `properties` inline table; empty: none
  std::string extra;               // more lines of the section, verbatim
};
std::string KafkaSection(const KafkaToml& kafka);

// [pipeline.jetstream]
struct JetStreamToml {
  std::string servers;
  std::string stream;
  std::vector<std::string> subjects;  // empty: left out (elastic mode names `partitions`)
  std::string start;                  // empty: left out
  std::string extra;                  // more lines of the section, verbatim
};
std::string JetStreamSection(const JetStreamToml& jetstream);

// [[pipeline]]
struct PipelineToml {
  std::string id = "events";
  std::string table;   // empty: left out (static routes name their tables)
  std::string schema;  // empty: left out (a registry's schema, or JSON decoding's)
  // The inside of the `metadata_columns` inline table; empty: none.
  std::string metadata_columns = R"(offset = "_offset", partition = "_partition")";
  std::string keys;      // more keys of [[pipeline]] itself, verbatim lines
  std::string source;    // KafkaSection(...) or JetStreamSection(...)
  std::string sections;  // more sections, verbatim: [pipeline.decode], [pipeline.routing], ...
  // [pipeline.batch]: 0 or empty leaves a key out; both, the section.
  int64_t max_rows = 0;
  std::string max_latency = "200ms";
  std::string after;  // verbatim after the batch section (its further keys, later sections)
};
std::string PipelineSection(const PipelineToml& pipeline);

// A TOML array of strings: ["a", "b"].
std::string TomlStrings(const std::vector<std::string>& values);

// Writes `top` (top-level sections, verbatim) and then the pipelines to `path`; returns `path`.
std::string WriteConfig(const std::filesystem::path& path,
                        const std::vector<PipelineToml>& pipelines, const std::string& top = "");

}  // namespace ferry::e2e
