// The ferry configuration file (TOML): what `ferry run` and `ferry config check` read.
//
// One file holds global settings and one or more pipelines, each feeding one Delta table from
// Kafka or JetStream. docs/configuration.md is the reference for every key. This header holds
// plain structs; the app layer turns them into sources, decoders and pipelines, so the config
// layer never names a concrete source class.
//
// Errors name the file, the line and column, and the key:
//   ferry.toml:12:1: pipeline[0].batch.max_bytes: "64XB" is not a size (use e.g. 64MB, 1GiB)
// Unknown keys are errors (with a suggestion when one is close), so a typo never silently falls
// back to a default. String values may use ${NAME} (environment variable; error if unset),
// ${NAME:-default}, and $${ for a literal ${.
//
// Thread-safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/config/memory_budget.h"
#include "ferry/storage/storage_options.h"

namespace ferry::config {

using Duration = std::chrono::milliseconds;

// Where a value came from, for error messages raised after parsing (e.g. a DDL error).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;  // dotted path, e.g. "pipeline[0].schema"
  std::string ToString() const;
};

struct KafkaConfig {
  enum class Start { kEarliest, kLatest, kGroup, kOffsets, kTimestamp };

  std::string brokers;
  std::vector<std::string> topics;  // exact names
  std::string topic_pattern;        // a regex instead of `topics` (librdkafka: starts with ^)
  std::string group_id;
  // "manual": read every partition without joining the group (kafka::Assignment::kManual).
  bool manual_assignment = false;
  // Where to start a partition the table has never seen.
  Start start = Start::kEarliest;
  // kGroup: where to start when the group has no committed offset either.
  Start group_fallback = Start::kEarliest;
  // kOffsets: "topic/partition" -> first offset to read. Partitions not listed use
  // `group_fallback`.
  std::map<std::string, int64_t> start_offsets;
  int64_t start_timestamp_ms = 0;     // kTimestamp
  double max_rate_per_partition = 0;  // messages per second; 0 = unlimited
  // Wake librdkafka's fetchers when the pipeline drains its queue (source/kafka/fetch_waker.h).
  bool fetch_wakeup = true;
  // Passed to librdkafka as is (after ${ENV} interpolation), e.g. security.protocol.
  std::vector<std::pair<std::string, std::string>> properties;
  SourceLocation location;
};

struct JetStreamConfig {
  enum class Start { kAll, kNew, kSequence, kTime };

  std::vector<std::string> servers;
  std::string stream;
  std::vector<std::string> subjects;  // each filter is one source partition
  // Elastic mode (`partitions = { subject = "orders.{partition}.>", count = 16 }`): `subjects`
  // is the pattern expanded for 0..count-1, and the processes running this pipeline share them
  // through leases in a JetStream key-value bucket (docs/jetstream.md, "Elastic scale-out").
  std::string partition_subject;  // the pattern, with one `{partition}` token
  int64_t partition_count = 0;    // 0: not elastic
  Duration lease_ttl{10000};
  std::string lease_bucket = "ferry_leases";
  Start start = Start::kAll;
  int64_t start_sequence = 0;  // kSequence: first sequence to read
  int64_t start_time_ms = 0;   // kTime
  std::string user;
  std::string password;  // secret
  std::string token;     // secret
  std::string nkey;      // the user's public NKey ("U..."), with nkey_seed_file
  std::string nkey_seed_file;
  std::string creds_file;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_hostname;  // expected server certificate name, when not the URL's host
  int64_t batch_size = 1000;
  Duration heartbeat{5000};
  Duration connect_timeout{5000};
  Duration reconnect_wait{1000};
  int64_t max_reconnects = -1;  // -1 = forever
  SourceLocation location;
};

// [pipeline.decode.schema_registry]: the Confluent Schema Registry API (Confluent, Redpanda,
// Apicurio's ccompat, Karapace) that framed Avro and Protobuf messages name their writer schemas
// in.
struct SchemaRegistryConfig {
  std::vector<std::string> urls;  // `url`, comma-separated: tried in turn
  std::string username;           // basic auth (Confluent Cloud: API key and secret)
  std::string password;
  std::string bearer_token;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  Duration timeout{10000};  // each request
  SourceLocation location;
};

struct DecodeConfig {
  // kDebeziumJson: Debezium change events as Kafka Connect's JsonConverter writes them;
  // kDebeziumAvro, kDebeziumProtobuf: as Confluent's AvroConverter / ProtobufConverter write
  // them, framed by a Schema Registry (docs/cdc.md "Debezium envelopes"). They take the registry
  // keys of kAvro / kProtobuf (a registry only: no file of writer schemas).
  enum class Format {
    kJson,
    kRaw,
    kAvro,
    kProtobuf,
    kDebeziumJson,
    kDebeziumAvro,
    kDebeziumProtobuf
  };
  Format format = Format::kJson;
  // kAvro, kProtobuf: framed messages (the Confluent wire format) with their schemas in a
  // registry, or unframed ones with one writer schema: an .avsc file (kAvro), a
  // FileDescriptorSet and the full name of the message in it (kProtobuf).
  std::optional<SchemaRegistryConfig> schema_registry;
  std::string avro_schema_file;
  std::string protobuf_descriptor_file;
  std::string protobuf_message;
  // kAvro or kProtobuf with a registry: the subject a new table's schema is read from (its
  // latest version). Empty: by subject_name_strategy: "topic" (<topic>-value), "record"
  // (<record_name>) or "topic_record" (<topic>-<record_name>).
  std::string subject;
  std::string subject_name_strategy = "topic";
  std::string record_name;
  // The Kafka key's column (metadata_columns' `key`): "string" (the key's bytes, STRING or
  // BINARY), "avro" or "protobuf" (the format's own, framed by the same registry, decoded whole
  // into the column: a STRUCT for a record or message; a new table takes its type from
  // key_subject, default "<topic>-key").
  std::string key_format = "string";
  std::string key_subject;
  std::string raw_column = "payload";  // kRaw: the column that receives the payload
  std::string unknown_fields_column;   // kJson: keep unknown fields as JSON text here
  // kJson: how a JSON number maps to a timestamp column; kDebeziumProtobuf: how an integer field
  // does (Debezium's Timestamp/MicroTimestamp lose their Connect name in the .proto).
  std::string timestamp_epoch_unit = "seconds";  // seconds (as Spark), millis, micros
  std::vector<std::string> timestamp_formats;    // extra Spark patterns for timestamp strings
  std::vector<std::string> date_formats;
  // kDebeziumJson (and the other Debezium formats): envelope field ("op", "ts_ms", "source.lsn",
  // ...) -> table column; kDebeziumJson: Debezium's decimal.handling.mode for DECIMAL columns
  // without a Connect schema ("precise": base64 bytes, "string"). kDebeziumJson's and
  // kDebeziumProtobuf's timestamp_epoch_unit defaults to "millis".
  std::map<std::string, std::string> envelope_columns;
  std::string decimal_handling = "precise";
};

struct BatchConfig {
  int64_t max_rows = 100000;
  // Capped by the pipeline's share of max_memory (memory_budget.h); `config check` warns when
  // a value set in the file is capped.
  int64_t max_bytes = 64LL << 20;
  bool max_bytes_set = false;  // max_bytes was in the file
  Duration max_latency{1000};
  // Sealed batches being written and committed while the next one is read (0: none).
  int64_t max_in_flight = 1;
};

// [pipeline.maintenance]: optimize and vacuum on a schedule inside `ferry run` (0 = never).
struct MaintenanceConfig {
  Duration optimize_every{0};
  Duration vacuum_every{0};
  Duration vacuum_retain{int64_t{168} * 3600 * 1000};
};

struct WriterConfig {
  std::string codec = "zstd";  // uncompressed, snappy, zstd, gzip, lz4_raw
  int compression_level = 0;   // 0: the codec's default (zstd 1, gzip 6)
  // Threads compressing the pages of a batch's files while the writer thread encodes the next
  // pages; 0: one per core, at most 4. 1: the writer thread compresses them itself.
  int compression_threads = 0;
  int64_t target_file_size = 128LL << 20;
};

struct DerivedColumn {
  std::string name;
  std::string expr;
  SourceLocation location;
};

struct DedupConfig {
  std::string key;  // a column or an expression
  Duration window{24LL * 3600 * 1000};
  int64_t max_keys = 10'000'000;
  SourceLocation location;
};

// [pipeline.table_name_rules]: what a value substituted into a templated `table` may hold
// (pipeline/table_template.h).
struct TableNameRulesConfig {
  bool lower_case = true;
  std::string allowed_characters = "a-z0-9_-";
  std::string replacement = "_";
  int64_t max_length = 128;
  // The table of a message whose placeholder has no value (a missing or empty field), whose
  // pipeline also carries the dead letters of names `allow` refuses. Required with a template.
  std::string fallback;
  // RE2 pattern a substituted value must match in full; a value that does not is a bad record.
  std::string allow;
  SourceLocation location;
};

// [[pipeline.route]]: a static route. Its table has its own schema, partitioning, derived
// columns, dedup and properties; everything else (source, decode, batch, writer, bad records)
// is the pipeline's.
struct RouteConfig {
  std::string name;   // "route[i]" when not given; "default" takes what no route matches
  std::string where;  // Spark SQL over routing.schema's fields; empty only for "default"
  std::string table;
  std::string schema;
  SourceLocation schema_location;
  std::vector<std::string> partition_by;
  std::vector<DerivedColumn> columns;
  std::optional<DedupConfig> dedup;
  std::map<std::string, std::string> table_properties;
  SourceLocation location;
};

// [pipeline.routing]: one source, many tables (docs/decisions/routing.md).
struct RoutingConfig {
  // What a message no route matches does: "default" (the route named default) or
  // "dead_letter" (a bad record: "no route matches").
  std::string unmatched = "dead_letter";
  // Spark DDL of the fields the routes' `where` predicates read (decoded from JSON).
  std::string schema;
  SourceLocation schema_location;
  // The Delta table that keeps the router's resume positions. Default: "<dir>/_ferry_routing_<id>"
  // where <dir> is the directory the first table (or the template's fixed prefix) is in.
  std::string positions_table;
  Duration position_commit_interval{5000};
  int64_t max_open_tables = 64;   // inner pipelines open at once (least recently used close)
  int64_t max_tables = 1000;      // distinct tables one pipeline may route to
  int64_t queue_messages = 1000;  // messages waiting per table (backpressure)
  SourceLocation location;
};

struct PipelineConfig {
  std::string id;
  // A table location, or a template with placeholders (table_is_template), or empty with
  // `routes`.
  std::string table;
  bool table_is_template = false;
  TableNameRulesConfig table_name_rules;
  std::vector<RouteConfig> routes;
  // Set when the pipeline routes (a templated table or routes).
  std::optional<RoutingConfig> routing;
  // [pipeline.storage] merged over the file's [storage] (canonical names; the command line's
  // --storage-option and the environment are applied when the table is opened).
  storage::StorageOptions storage;
  std::string schema;  // Spark DDL; empty = take the existing table's schema
  SourceLocation schema_location;
  // none, add_columns, add_columns_and_widen (delta/schema_evolution.h): what a message field
  // the table lacks, or a value too wide for its column, does to the table's schema.
  std::string schema_evolution = "none";
  int64_t max_new_columns_per_batch = 100;  // fields one batch may add (nested ones count)
  int64_t max_columns = 1000;               // fields the table may hold, at every depth
  std::vector<std::string> partition_by;
  bool create_table = true;  // create the table when missing (needs `schema`, or format avro)
  std::map<std::string, std::string> table_properties;
  // Metadata kind (key, topic, partition, offset, timestamp, headers, subject, sequence,
  // msg_id) -> column name.
  std::map<std::string, std::string> metadata_columns;
  std::optional<KafkaConfig> kafka;
  std::optional<JetStreamConfig> jetstream;
  DecodeConfig decode;
  BatchConfig batch;
  MaintenanceConfig maintenance;
  WriterConfig writer;
  std::vector<DerivedColumn> columns;
  std::string where;
  std::string on_bad_record = "dead_letter";  // fail, dead_letter, skip
  // Default (with dead_letter): "<table>_dead_letter", beside the table.
  std::string dead_letter_table;
  std::optional<DedupConfig> dedup;
  // append (the default) or upsert (docs/cdc.md): each message inserts, replaces or deletes the
  // row with its `key`; `sequence` (optional) orders the changes to one key.
  std::string mode = "append";
  std::vector<std::string> key;
  SourceLocation key_location;
  std::string sequence;
  SourceLocation sequence_location;
  // The upsert key index (docs/cdc.md "Finding the rows"): commits between two writes of its
  // file; tombstones (deleted keys, with `sequence`) dropped when more than
  // `tombstone_retention` (the sequence's units) below the highest sequence, and past
  // `max_tombstones`.
  int64_t key_index_persist_every = 100;
  std::optional<int64_t> tombstone_retention;
  int64_t max_tombstones = 1'000'000;
  std::string on_gap = "fail";  // fail, continue
  std::string time_zone = "UTC";
  Duration drain_timeout{30000};
  // This pipeline's part of the process's max_memory (memory_budget.h), set by ParseConfig.
  MemoryShare memory;
  SourceLocation location;
};

struct MetricsConfig {
  std::string listen;  // "host:port"; empty = no endpoint
  // The status page (`/` and `/api/status`) beside /metrics.
  bool status_page = true;
  // Bad-record samples on the status page carry their payload bytes (off: position and error).
  bool show_payloads = false;
  // HTTP basic auth for everything but /health/*; both or neither.
  std::string username;
  std::string password;  // secret
  // TLS (PEM files); both or neither.
  std::string tls_cert;
  std::string tls_key;
  // After a pipeline failed, keep serving this long (SIGTERM/SIGINT ends it) so the status page
  // shows the error; 0 = exit at once.
  Duration linger_after_failure{0};
};

struct LogConfig {
  std::string format = "text";  // text, json
  std::string level = "info";
};

struct Config {
  std::string path;
  // `max_memory`: the process's memory budget, divided among the pipelines (memory_budget.h).
  int64_t max_memory = kDefaultMaxMemory;
  LogConfig log;
  MetricsConfig metrics;
  // [storage]: options for every table of the file (each pipeline's `storage` includes them).
  storage::StorageOptions storage;
  std::vector<PipelineConfig> pipelines;
  // Every value that came from a secret key (passwords, tokens, sasl.password, ...): the logger
  // redacts them wherever they appear.
  std::vector<std::string> secrets;
};

// Looks up an environment variable; nullopt when unset. Tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;
EnvLookup ProcessEnv();

// Parses `text` as the contents of `path` (used in messages only).
Result<Config> ParseConfig(std::string_view text, const std::string& path, const EnvLookup& env);
// Reads and parses a file.
Result<Config> LoadConfig(const std::string& path, const EnvLookup& env = ProcessEnv());

// "64MB", "64MiB", "1 GB", "512k", "1000" (bytes). Decimal and binary units.
Result<int64_t> ParseSize(std::string_view text);
// "1s", "500ms", "24h", "1m30s", "2d". A bare number is milliseconds.
Result<Duration> ParseDuration(std::string_view text);
// Replaces ${NAME}, ${NAME:-default} and $${ in `text`.
Result<std::string> Interpolate(std::string_view text, const EnvLookup& env);

}  // namespace ferry::config
