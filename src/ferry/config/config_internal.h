// The section readers behind ParseConfig, shared by the config layer's .cc files: config.cc
// assembles the file (global tables, the list of pipelines, checks across pipelines) and calls
// ReadPipeline; config_pipeline.cc reads one [[pipeline]] and its sub-tables and calls the source
// readers of config_sources.cc.
//
// Each reader fills its struct from one TomlTable, leaving defaults where a key is absent, and
// ends with TomlTable::Finish() on the tables it owns, so an unknown key is an error. Errors are
// kInvalidArgument and name file:line:column and the dotted key.
//
// Internal to the config layer (it pulls in toml++ through toml_reader.h). Thread-safety: none;
// one parse per TomlTable.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ferry/base/result.h"
#include "ferry/config/config.h"
#include "ferry/config/toml_reader.h"

namespace ferry::config::internal {

// Overwrites the default in `*out` when the key was given.
template <typename T>
void Set(const std::optional<T>& v, T* out) {
  if (v) {
    *out = *v;
  }
}

// [pipeline.kafka]. `pipeline_id` names the default consumer group ("ferry-<id>").
Status ReadKafka(TomlTable& t, const std::string& pipeline_id, KafkaConfig* k);
// [pipeline.jetstream]. Credentials in server URLs are recorded as secrets.
Status ReadJetStream(TomlTable& t, JetStreamConfig* j);

// One [[pipeline]] table: its own keys, its source (through the readers above) and its
// sub-tables ([pipeline.decode], .batch, .writer, .maintenance, .dedup, .storage,
// [[pipeline.columns]]). `global_storage` is [storage], under which [pipeline.storage] is merged.
Status ReadPipeline(TomlTable& t, const storage::StorageOptions& global_storage, PipelineConfig* p);

// [pipeline.routing], [pipeline.table_name_rules] and [[pipeline.route]] (config_routing.cc),
// after the pipeline's own keys: checks the templated table or the routes, fills p->routing and
// the defaults of the positions and dead-letter tables.
Status ReadRouting(TomlTable& t, PipelineConfig* p);
// [[pipeline.columns]] of `t`, in order (a pipeline's or a route's).
Status ReadDerivedColumns(TomlTable& t, std::vector<DerivedColumn>* out);
// `table_properties` into *out; refuses delta.setTransactionRetentionDuration (it would expire
// the txn positions exactly-once relies on).
Status ReadTableProperties(TomlTable& t, std::map<std::string, std::string>* out);
// [pipeline.dedup] (or a route's).
Status ReadDedup(TomlTable& t, DedupConfig* d);

// [storage] or [pipeline.storage] of `t` (key `key`): storage options with canonical names
// (storage/storage_options.h); unknown names are errors at the table's line. Secret values are
// recorded for redaction. Empty when the table is absent.
Result<storage::StorageOptions> ReadStorage(TomlTable& t, std::string_view key);

}  // namespace ferry::config::internal
