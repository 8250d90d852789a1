// ReadPipeline (config_internal.h): one [[pipeline]] table and its sub-tables.
#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>
#include <vector>

#include "ferry/config/config_internal.h"
#include "ferry/storage/table_uri.h"
#include "ferry/transform/debezium_envelope.h"

namespace ferry::config::internal {

namespace {

Status ReadSchemaRegistry(TomlTable& t, SchemaRegistryConfig* r) {
  r->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(std::string url, t.RequiredString("url", "needs a url"));
  for (std::string_view rest = url; !rest.empty();) {
    size_t comma = rest.find(',');
    std::string_view one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') {
      one.remove_prefix(1);
    }
    while (!one.empty() && one.back() == ' ') {
      one.remove_suffix(1);
    }
    if (!one.starts_with("http://") && !one.starts_with("https://")) {
      return t.Error("url", fmt::format("\"{}\" is not an http:// or https:// URL", one));
    }
    r->urls.emplace_back(one);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  FERRY_ASSIGN_OR_RETURN(auto username, t.String("username"));
  FERRY_ASSIGN_OR_RETURN(auto password, t.String("password", /*secret=*/true));
  FERRY_ASSIGN_OR_RETURN(auto token, t.String("bearer_token", /*secret=*/true));
  FERRY_ASSIGN_OR_RETURN(auto ca, t.String("tls_ca"));
  FERRY_ASSIGN_OR_RETURN(auto cert, t.String("tls_cert"));
  FERRY_ASSIGN_OR_RETURN(auto key, t.String("tls_key"));
  FERRY_ASSIGN_OR_RETURN(auto timeout, t.DurationValue("timeout"));
  Set(username, &r->username);
  Set(password, &r->password);
  Set(token, &r->bearer_token);
  Set(ca, &r->tls_ca);
  Set(cert, &r->tls_cert);
  Set(key, &r->tls_key);
  Set(timeout, &r->timeout);
  if (r->username.empty() != r->password.empty()) {
    return t.Error(r->username.empty() ? "password" : "username",
                   "username and password go together (basic auth)");
  }
  if (!r->username.empty() && !r->bearer_token.empty()) {
    return t.Error("bearer_token", "either basic auth (username, password) or a bearer_token");
  }
  if (r->tls_cert.empty() != r->tls_key.empty()) {
    return t.Error(r->tls_cert.empty() ? "tls_key" : "tls_cert",
                   "tls_cert and tls_key go together (a client certificate)");
  }
  if (r->timeout.count() < 1) {
    return t.Error("timeout", "must be at least 1ms");
  }
  return t.Finish();
}

// The keys of the formats with writer schemas (avro, protobuf): a registry or a fixed schema.
Status ReadSchemaFormat(TomlTable& t, DecodeConfig* d) {
  FERRY_ASSIGN_OR_RETURN(auto registry, t.Table("schema_registry"));
  FERRY_ASSIGN_OR_RETURN(auto file, t.String("avro_schema_file"));
  FERRY_ASSIGN_OR_RETURN(auto descriptors, t.String("protobuf_descriptor_file"));
  FERRY_ASSIGN_OR_RETURN(auto message, t.String("protobuf_message"));
  FERRY_ASSIGN_OR_RETURN(auto subject, t.String("subject"));
  FERRY_ASSIGN_OR_RETURN(auto strategy,
                         t.OneOf("subject_name_strategy", {"topic", "record", "topic_record"},
                                 "expected topic, record or topic_record"));
  FERRY_ASSIGN_OR_RETURN(auto record, t.String("record_name"));
  FERRY_ASSIGN_OR_RETURN(auto key_format, t.OneOf("key_format", {"string", "avro", "protobuf"},
                                                  "expected string, avro or protobuf"));
  FERRY_ASSIGN_OR_RETURN(auto key_subject, t.String("key_subject"));
  Set(key_format, &d->key_format);
  Set(key_subject, &d->key_subject);
  const bool debezium_avro = d->format == DecodeConfig::Format::kDebeziumAvro;
  const bool debezium_protobuf = d->format == DecodeConfig::Format::kDebeziumProtobuf;
  const bool avro = d->format == DecodeConfig::Format::kAvro || debezium_avro;
  const bool protobuf = d->format == DecodeConfig::Format::kProtobuf || debezium_protobuf;
  if (d->key_format != "string" && (!registry || (d->key_format == "avro" ? !avro : !protobuf))) {
    return t.Error("key_format",
                   fmt::format("key_format = \"{0}\" reads framed keys: it needs format = \"{0}\" "
                               "with a [pipeline.decode.schema_registry]",
                               d->key_format));
  }
  if (key_subject && d->key_format == "string") {
    return t.Error("key_subject", "applies to key_format = \"avro\" or \"protobuf\"");
  }
  if ((registry || subject || strategy || record) && !avro && !protobuf) {
    return t.Error(registry ? "schema_registry" : "subject",
                   "applies to format = \"avro\" or \"protobuf\"");
  }
  if (file && !avro) {
    return t.Error("avro_schema_file", "applies to format = \"avro\"");
  }
  if ((descriptors || message) && (!protobuf || debezium_protobuf)) {
    return t.Error(descriptors ? "protobuf_descriptor_file" : "protobuf_message",
                   debezium_protobuf
                       ? "format = \"debezium-protobuf\" reads what Confluent's "
                         "ProtobufConverter writes: messages framed with their writer schema's "
                         "id; it needs a [pipeline.decode.schema_registry] (and no "
                         "protobuf_descriptor_file)"
                       : "applies to format = \"protobuf\"");
  }
  if (!avro && !protobuf) {
    return Status::OK();
  }
  if (debezium_avro && !registry) {
    return t.Error(file ? "avro_schema_file" : "format",
                   "format = \"debezium-avro\" reads what Debezium's AvroConverter writes: "
                   "messages framed with their writer schema's id; it needs a "
                   "[pipeline.decode.schema_registry] (and no avro_schema_file)");
  }
  if (debezium_protobuf && !registry) {
    return t.Error("format",
                   "format = \"debezium-protobuf\" reads what Confluent's ProtobufConverter "
                   "writes: messages framed with their writer schema's id; it needs a "
                   "[pipeline.decode.schema_registry]");
  }
  if (avro && registry.has_value() == file.has_value()) {
    return t.Error(registry ? "avro_schema_file" : "format",
                   "format = \"avro\" needs either a [pipeline.decode.schema_registry] (framed "
                   "messages) or an avro_schema_file (unframed ones), not both");
  }
  if (protobuf && registry.has_value() == descriptors.has_value()) {
    return t.Error(registry ? "protobuf_descriptor_file" : "format",
                   "format = \"protobuf\" needs either a [pipeline.decode.schema_registry] "
                   "(framed messages) or a protobuf_descriptor_file with protobuf_message "
                   "(unframed ones), not both");
  }
  if (descriptors.has_value() != message.has_value()) {
    return t.Error(descriptors ? "protobuf_descriptor_file" : "protobuf_message",
                   "protobuf_descriptor_file and protobuf_message go together (the file "
                   "protoc --descriptor_set_out --include_imports writes, and the full name of "
                   "the message in it)");
  }
  if (registry) {
    d->schema_registry.emplace();
    FERRY_RETURN_IF_ERROR(ReadSchemaRegistry(*registry, &*d->schema_registry));
  } else if (subject || strategy || record) {
    return t.Error(subject    ? "subject"
                   : strategy ? "subject_name_strategy"
                              : "record_name",
                   "applies to a [pipeline.decode.schema_registry]");
  }
  Set(file, &d->avro_schema_file);
  Set(descriptors, &d->protobuf_descriptor_file);
  Set(message, &d->protobuf_message);
  Set(subject, &d->subject);
  Set(strategy, &d->subject_name_strategy);
  Set(record, &d->record_name);
  if (d->subject_name_strategy != "topic" && d->record_name.empty() && d->subject.empty()) {
    return t.Error("subject_name_strategy",
                   fmt::format("\"{}\" needs record_name (the writer schema's full name)",
                               d->subject_name_strategy));
  }
  return Status::OK();
}

// format = "debezium-json" / "debezium-avro" / "debezium-protobuf": envelope_columns;
// decimal_handling (JSON only: an Avro or Protobuf schema says how its decimals are written).
Status ReadEnvelope(TomlTable& t, DecodeConfig* d) {
  const bool debezium_json = d->format == DecodeConfig::Format::kDebeziumJson;
  const bool debezium = debezium_json || d->format == DecodeConfig::Format::kDebeziumAvro ||
                        d->format == DecodeConfig::Format::kDebeziumProtobuf;
  Result<std::optional<std::vector<std::pair<std::string, std::string>>>> map =
      t.StringMap("envelope_columns");
  if (!map.ok()) {
    return Status(map.status().code(),
                  fmt::format("{} (name nested envelope fields with quoted keys: "
                              "envelope_columns = {{ \"source.lsn\" = \"_lsn\" }})",
                              map.status().message()));
  }
  FERRY_ASSIGN_OR_RETURN(auto decimals, t.OneOf("decimal_handling", {"precise", "string"},
                                                "expected precise or string"));
  if (*map && !debezium) {
    return t.Error("envelope_columns",
                   "applies to format = \"debezium-json\", \"debezium-avro\" or "
                   "\"debezium-protobuf\"");
  }
  if (decimals && !debezium_json) {
    return t.Error("decimal_handling", "applies to format = \"debezium-json\"");
  }
  Set(decimals, &d->decimal_handling);
  if (!*map) {
    return Status::OK();
  }
  std::set<std::string> columns;
  for (const auto& [field, column] : **map) {
    if (!transform::IsDebeziumEnvelopeField(field)) {
      return t.Error("envelope_columns",
                     fmt::format("unknown envelope field '{}' (op, ts_ms, ts_us, ts_ns, "
                                 "source.<field>, transaction.<field>)",
                                 field));
    }
    if (column.empty() || !columns.insert(column).second) {
      return t.Error(
          "envelope_columns",
          fmt::format("column name \"{}\" for '{}' is empty or used twice", column, field));
    }
    d->envelope_columns[field] = column;
  }
  return Status::OK();
}

Status ReadDecode(TomlTable& t, DecodeConfig* d) {
  FERRY_ASSIGN_OR_RETURN(auto format, t.String("format"));
  if (format) {
    if (*format == "json") {
      d->format = DecodeConfig::Format::kJson;
    } else if (*format == "raw") {
      d->format = DecodeConfig::Format::kRaw;
    } else if (*format == "avro") {
      d->format = DecodeConfig::Format::kAvro;
    } else if (*format == "protobuf") {
      d->format = DecodeConfig::Format::kProtobuf;
    } else if (*format == "debezium-json") {
      d->format = DecodeConfig::Format::kDebeziumJson;
      d->timestamp_epoch_unit = "millis";  // io.debezium.time.Timestamp
    } else if (*format == "debezium-avro") {
      d->format = DecodeConfig::Format::kDebeziumAvro;
    } else if (*format == "debezium-protobuf") {
      d->format = DecodeConfig::Format::kDebeziumProtobuf;
      d->timestamp_epoch_unit = "millis";  // io.debezium.time.Timestamp
    } else {
      return t.Error("format", fmt::format("unknown format \"{}\" (json, raw, avro, protobuf, "
                                           "debezium-json, debezium-avro, debezium-protobuf)",
                                           *format));
    }
  }
  FERRY_RETURN_IF_ERROR(ReadEnvelope(t, d));
  FERRY_RETURN_IF_ERROR(ReadSchemaFormat(t, d));
  FERRY_ASSIGN_OR_RETURN(auto column, t.String("column"));
  if (column) {
    if (d->format != DecodeConfig::Format::kRaw) {
      return t.Error("column", "'column' applies to format = \"raw\"");
    }
    d->raw_column = *column;
  }
  FERRY_ASSIGN_OR_RETURN(auto unknown, t.String("unknown_fields_column"));
  Set(unknown, &d->unknown_fields_column);
  FERRY_ASSIGN_OR_RETURN(auto unit, t.OneOf("timestamp_epoch_unit", {"seconds", "millis", "micros"},
                                            "expected seconds, millis or micros"));
  Set(unit, &d->timestamp_epoch_unit);
  FERRY_ASSIGN_OR_RETURN(auto ts_formats, t.StringList("timestamp_formats"));
  FERRY_ASSIGN_OR_RETURN(auto date_formats, t.StringList("date_formats"));
  Set(ts_formats, &d->timestamp_formats);
  Set(date_formats, &d->date_formats);
  return t.Finish();
}

Status ReadBatch(TomlTable& t, BatchConfig* b) {
  FERRY_ASSIGN_OR_RETURN(auto rows, t.Int("max_rows"));
  FERRY_ASSIGN_OR_RETURN(auto bytes, t.Size("max_bytes"));
  FERRY_ASSIGN_OR_RETURN(auto latency, t.DurationValue("max_latency"));
  FERRY_ASSIGN_OR_RETURN(auto in_flight, t.Int("max_in_flight"));
  if (rows && *rows < 1) {
    return t.Error("max_rows", "must be at least 1");
  }
  if (bytes && *bytes < 1024) {
    return t.Error("max_bytes", "must be at least 1KiB");
  }
  if (latency && latency->count() < 1) {
    return t.Error("max_latency", "must be at least 1ms");
  }
  if (in_flight && (*in_flight < 0 || *in_flight > 4)) {
    return t.Error("max_in_flight", "must be between 0 and 4");
  }
  Set(rows, &b->max_rows);
  Set(bytes, &b->max_bytes);
  b->max_bytes_set = bytes.has_value();
  Set(latency, &b->max_latency);
  Set(in_flight, &b->max_in_flight);
  return t.Finish();
}

Status ReadMaintenance(TomlTable& t, MaintenanceConfig* m) {
  FERRY_ASSIGN_OR_RETURN(auto optimize, t.DurationValue("optimize_every"));
  FERRY_ASSIGN_OR_RETURN(auto vacuum, t.DurationValue("vacuum_every"));
  FERRY_ASSIGN_OR_RETURN(auto retain, t.DurationValue("vacuum_retain"));
  if (optimize && optimize->count() < 1000) {
    return t.Error("optimize_every", "must be at least 1s");
  }
  if (vacuum && vacuum->count() < 1000) {
    return t.Error("vacuum_every", "must be at least 1s");
  }
  if (retain && retain->count() < int64_t{168} * 3600 * 1000) {
    return t.Error(
        "vacuum_retain",
        "must be at least 168h (older versions' readers and time travel need the files)");
  }
  Set(optimize, &m->optimize_every);
  Set(vacuum, &m->vacuum_every);
  Set(retain, &m->vacuum_retain);
  return t.Finish();
}

Status ReadWriter(TomlTable& t, WriterConfig* w) {
  FERRY_ASSIGN_OR_RETURN(auto codec, t.String("codec"));
  if (codec) {
    static const std::set<std::string> kCodecs = {"uncompressed", "snappy", "zstd", "gzip",
                                                  "lz4_raw"};
    if (kCodecs.count(*codec) == 0) {
      return t.Error("codec", fmt::format("unknown codec \"{}\" (uncompressed, snappy, zstd, gzip, "
                                          "lz4_raw)",
                                          *codec));
    }
    w->codec = *codec;
  }
  FERRY_ASSIGN_OR_RETURN(auto level, t.Int("compression_level"));
  if (level) {
    if (*level < -7 || *level > 22) {
      return t.Error("compression_level", "must be between -7 and 22");
    }
    w->compression_level = static_cast<int>(*level);
  }
  FERRY_ASSIGN_OR_RETURN(auto threads, t.Int("compression_threads"));
  if (threads) {
    if (*threads < 0 || *threads > 64) {
      return t.Error("compression_threads", "must be between 0 (one per core) and 64");
    }
    w->compression_threads = static_cast<int>(*threads);
  }
  FERRY_ASSIGN_OR_RETURN(auto target, t.Size("target_file_size"));
  if (target) {
    if (*target < (1 << 20)) {
      return t.Error("target_file_size", "must be at least 1MiB");
    }
    w->target_file_size = *target;
  }
  return t.Finish();
}

Status ReadMetadataColumns(TomlTable& t, bool kafka, std::map<std::string, std::string>* out) {
  static const std::set<std::string> kKafka = {"key",    "topic",     "partition",
                                               "offset", "timestamp", "headers"};
  static const std::set<std::string> kJetStream = {"subject", "sequence", "timestamp",
                                                   "headers", "msg_id",   "stream"};
  FERRY_ASSIGN_OR_RETURN(auto map, t.StringMap("metadata_columns"));
  if (!map) {
    return Status::OK();
  }
  const auto& allowed = kafka ? kKafka : kJetStream;
  std::set<std::string> names;
  for (const auto& [kind, column] : *map) {
    if (allowed.count(kind) == 0) {
      std::string list;
      for (const std::string& a : allowed) {
        list += (list.empty() ? "" : ", ") + a;
      }
      return t.Error("metadata_columns",
                     fmt::format("unknown metadata '{}' for a {} source (one of: {})", kind,
                                 kafka ? "Kafka" : "JetStream", list));
    }
    if (column.empty() || !names.insert(column).second) {
      return t.Error(
          "metadata_columns",
          fmt::format("column name \"{}\" for '{}' is empty or used twice", column, kind));
    }
    (*out)[kind] = column;
  }
  return Status::OK();
}

// The pipeline's one source table and the metadata columns that source offers.
Status ReadSource(TomlTable& t, PipelineConfig* p) {
  FERRY_ASSIGN_OR_RETURN(auto kafka, t.Table("kafka"));
  FERRY_ASSIGN_OR_RETURN(auto jetstream, t.Table("jetstream"));
  if (kafka.has_value() == jetstream.has_value()) {
    return t.Error("",
                   "a pipeline needs exactly one source: [pipeline.kafka] or "
                   "[pipeline.jetstream]");
  }
  if (kafka) {
    p->kafka.emplace();
    FERRY_RETURN_IF_ERROR(ReadKafka(*kafka, p->id, &*p->kafka));
  } else {
    p->jetstream.emplace();
    FERRY_RETURN_IF_ERROR(ReadJetStream(*jetstream, &*p->jetstream));
  }
  return ReadMetadataColumns(t, kafka.has_value(), &p->metadata_columns);
}

// `mode`, `key` and `sequence` (docs/cdc.md). The key columns are checked against the table's
// schema when the pipeline is built and by `ferry config check` (the schema may be the existing
// table's); here only what the configuration alone decides (a raw format has no key columns).
Status ReadUpsert(TomlTable& t, PipelineConfig* p) {
  FERRY_ASSIGN_OR_RETURN(auto mode,
                         t.OneOf("mode", {"append", "upsert"}, "expected append or upsert"));
  Set(mode, &p->mode);
  FERRY_ASSIGN_OR_RETURN(auto key, t.StringList("key"));
  FERRY_ASSIGN_OR_RETURN(auto sequence, t.String("sequence"));
  FERRY_ASSIGN_OR_RETURN(auto persist_every, t.Int("key_index_persist_every"));
  FERRY_ASSIGN_OR_RETURN(auto retention, t.Int("tombstone_retention"));
  FERRY_ASSIGN_OR_RETURN(auto max_tombstones, t.Int("max_tombstones"));
  if (p->mode != "upsert") {
    if (key) {
      return t.Error("key", "key names the table's key columns of mode = \"upsert\"");
    }
    if (sequence) {
      return t.Error("sequence", "sequence orders the changes of mode = \"upsert\"");
    }
    if (persist_every || retention || max_tombstones) {
      return t.Error(persist_every ? "key_index_persist_every"
                     : retention   ? "tombstone_retention"
                                   : "max_tombstones",
                     "tunes the key index of mode = \"upsert\"");
    }
    return Status::OK();
  }
  if (persist_every && *persist_every < 1) {
    return t.Error("key_index_persist_every", "must be at least 1");
  }
  if (retention && *retention < 0) {
    return t.Error("tombstone_retention", "must be at least 0");
  }
  if (max_tombstones && *max_tombstones < 0) {
    return t.Error("max_tombstones", "must be at least 0");
  }
  if ((retention || max_tombstones) && !sequence) {
    return t.Error(retention ? "tombstone_retention" : "max_tombstones",
                   "deleted keys are kept only with a `sequence` column (to refuse older "
                   "changes): set sequence, or drop this");
  }
  Set(persist_every, &p->key_index_persist_every);
  Set(max_tombstones, &p->max_tombstones);
  p->tombstone_retention = retention;
  if (!key || key->empty()) {
    return t.Error(key ? "key" : "mode",
                   "mode = \"upsert\" needs key = [\"<column>\", ...]: the table's key columns");
  }
  std::set<std::string> seen;
  for (const std::string& column : *key) {
    if (column.empty() || !seen.insert(column).second) {
      return t.Error("key", fmt::format("key: '{}' is empty or named twice", column));
    }
  }
  if (p->decode.format == DecodeConfig::Format::kRaw) {
    // A raw message is its bytes: the only columns to key on are the message's metadata.
    std::set<std::string> metadata;
    for (const auto& [kind, column] : p->metadata_columns) {
      metadata.insert(column);
    }
    for (const std::string& column : *key) {
      if (metadata.count(column) == 0) {
        return t.Error(
            "key",
            fmt::format("key: column '{}' cannot come from [pipeline.decode] format = \"raw\", "
                        "which carries no key (a raw message is only its bytes): key on a "
                        "metadata column (metadata_columns = {{ key = \"{}\" }} is the message "
                        "key) or decode with format = \"json\", \"debezium-json\", \"avro\" "
                        "or \"protobuf\"",
                        column, column));
      }
    }
  }
  p->key = std::move(*key);
  p->key_location = t.Location("key");
  if (sequence) {
    if (sequence->empty()) {
      return t.Error("sequence", "sequence must name a column");
    }
    p->sequence = *sequence;
    p->sequence_location = t.Location("sequence");
  }
  if (p->dedup) {
    return t.Error("mode", "mode = \"upsert\" replaces rows by key: drop [pipeline.dedup]");
  }
  if (p->routing) {
    return t.Error("mode", "mode = \"upsert\" writes one table: it cannot route");
  }
  return Status::OK();
}

}  // namespace

Status ReadDedup(TomlTable& t, DedupConfig* d) {
  d->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(d->key,
                         t.RequiredString("key", "dedup needs key = \"<column or expression>\""));
  FERRY_ASSIGN_OR_RETURN(auto window, t.DurationValue("window"));
  FERRY_ASSIGN_OR_RETURN(auto max_keys, t.Int("max_keys"));
  Set(window, &d->window);
  Set(max_keys, &d->max_keys);
  return t.Finish();
}

// [[pipeline.columns]] of `t`, in order.
Status ReadTableProperties(TomlTable& t, std::map<std::string, std::string>* out) {
  FERRY_ASSIGN_OR_RETURN(auto props, t.StringMap("table_properties"));
  if (props) {
    for (const auto& [k, v] : *props) {
      if (k == "delta.setTransactionRetentionDuration") {
        return t.Error("table_properties",
                       "delta.setTransactionRetentionDuration would expire the positions that "
                       "make ingestion exactly-once; ferry refuses it");
      }
      (*out)[k] = v;
    }
  }
  return Status::OK();
}

Status ReadDerivedColumns(TomlTable& t, std::vector<DerivedColumn>* out) {
  FERRY_ASSIGN_OR_RETURN(auto columns, t.TableArray("columns"));
  for (TomlTable& c : columns) {
    DerivedColumn col;
    col.location = c.Location("expr");
    FERRY_ASSIGN_OR_RETURN(auto name, c.String("name"));
    FERRY_ASSIGN_OR_RETURN(auto expr, c.String("expr"));
    if (!name || name->empty() || !expr || expr->empty()) {
      return c.Error("", "a derived column needs name and expr");
    }
    col.name = *name;
    col.expr = *expr;
    FERRY_RETURN_IF_ERROR(c.Finish());
    out->push_back(std::move(col));
  }
  return Status::OK();
}

Result<storage::StorageOptions> ReadStorage(TomlTable& t, std::string_view key) {
  FERRY_ASSIGN_OR_RETURN(auto raw, t.StringMap(key, &storage::IsSecretStorageOption));
  if (!raw) {
    return storage::StorageOptions();
  }
  Result<storage::StorageOptions> options =
      storage::NormalizeStorageOptions(*raw, t.Location(key).ToString());
  if (!options.ok()) {
    return InvalidArgument("{}", options.status().message());
  }
  return options;
}

Status ReadPipeline(TomlTable& t, const storage::StorageOptions& global_storage,
                    PipelineConfig* p) {
  p->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(
      p->id,
      t.RequiredString("id", "missing key 'id' (a name for the pipeline, e.g. id = \"events\")"));
  if (p->id == "." || p->id == "..") {  // (an empty id is refused as missing above)
    return t.Error("id", fmt::format("\"{}\" is not a pipeline id: give it a name, e.g. id = "
                                     "\"events\" (the id names the pipeline in logs, metrics "
                                     "and every position's appId)",
                                     p->id));
  }
  for (char c : p->id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return t.Error("id", fmt::format("\"{}\": use letters, digits, '-', '_' and '.' only (the id "
                                       "is part of every position's appId)",
                                       p->id));
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto route_list, t.TableArray("route"));
  if (route_list.empty()) {
    FERRY_ASSIGN_OR_RETURN(
        p->table, t.RequiredString("table", "missing key 'table' (the Delta table's path)"));
    p->table_is_template = p->table.find('{') != std::string::npos;
    if (!p->table_is_template) {
      if (Result<storage::TableUri> uri = storage::ParseTableUri(p->table, ""); !uri.ok()) {
        return t.Error("table", uri.status().message());
      }
    }
  }
  FERRY_ASSIGN_OR_RETURN(storage::StorageOptions own, ReadStorage(t, "storage"));
  p->storage = storage::MergeStorageOptions({&own, &global_storage});
  FERRY_ASSIGN_OR_RETURN(auto schema, t.String("schema"));
  if (schema) {
    p->schema = *schema;
    p->schema_location = t.Location("schema");
  }
  FERRY_ASSIGN_OR_RETURN(
      auto evolution, t.OneOf("schema_evolution", {"none", "add_columns", "add_columns_and_widen"},
                              "expected none, add_columns or add_columns_and_widen"));
  Set(evolution, &p->schema_evolution);
  FERRY_ASSIGN_OR_RETURN(auto max_new, t.Int("max_new_columns_per_batch"));
  FERRY_ASSIGN_OR_RETURN(auto max_columns, t.Int("max_columns"));
  if (max_new && (*max_new < 1 || *max_new > 10000)) {
    return t.Error("max_new_columns_per_batch", "must be between 1 and 10000");
  }
  if (max_columns && (*max_columns < 1 || *max_columns > 100000)) {
    return t.Error("max_columns", "must be between 1 and 100000");
  }
  Set(max_new, &p->max_new_columns_per_batch);
  Set(max_columns, &p->max_columns);
  FERRY_ASSIGN_OR_RETURN(auto partition_by, t.StringList("partition_by"));
  Set(partition_by, &p->partition_by);
  FERRY_ASSIGN_OR_RETURN(auto create, t.Bool("create_table"));
  Set(create, &p->create_table);
  FERRY_RETURN_IF_ERROR(ReadTableProperties(t, &p->table_properties));

  FERRY_RETURN_IF_ERROR(ReadSource(t, p));

  FERRY_ASSIGN_OR_RETURN(auto decode, t.Table("decode"));
  if (decode) {
    FERRY_RETURN_IF_ERROR(ReadDecode(*decode, &p->decode));
    if (p->decode.key_format != "string" && p->metadata_columns.count("key") == 0) {
      return decode->Error("key_format",
                           fmt::format("key_format = \"{}\" decodes the key into its column: "
                                       "name it in metadata_columns (key = \"key\")",
                                       p->decode.key_format));
    }
  }
  if (p->schema_evolution != "none" && p->decode.format == DecodeConfig::Format::kRaw) {
    return t.Error("schema_evolution",
                   fmt::format("schema_evolution = \"{}\" needs [pipeline.decode] format = "
                               "\"json\", \"avro\" or \"protobuf\" (raw messages have no fields)",
                               p->schema_evolution));
  }
  FERRY_ASSIGN_OR_RETURN(auto batch, t.Table("batch"));
  if (batch) {
    FERRY_RETURN_IF_ERROR(ReadBatch(*batch, &p->batch));
  }
  FERRY_ASSIGN_OR_RETURN(auto writer, t.Table("writer"));
  if (writer) {
    FERRY_RETURN_IF_ERROR(ReadWriter(*writer, &p->writer));
  }
  FERRY_ASSIGN_OR_RETURN(auto maintenance, t.Table("maintenance"));
  if (maintenance) {
    FERRY_RETURN_IF_ERROR(ReadMaintenance(*maintenance, &p->maintenance));
  }
  FERRY_RETURN_IF_ERROR(ReadDerivedColumns(t, &p->columns));
  FERRY_ASSIGN_OR_RETURN(auto where, t.String("where"));
  Set(where, &p->where);
  FERRY_ASSIGN_OR_RETURN(auto on_bad, t.OneOf("on_bad_record", {"fail", "dead_letter", "skip"},
                                              "expected fail, dead_letter or skip"));
  Set(on_bad, &p->on_bad_record);
  FERRY_ASSIGN_OR_RETURN(auto dlq, t.String("dead_letter_table"));
  if (dlq) {
    if (Result<storage::TableUri> uri = storage::ParseTableUri(*dlq, ""); !uri.ok()) {
      return t.Error("dead_letter_table", uri.status().message());
    }
  }
  Set(dlq, &p->dead_letter_table);
  FERRY_RETURN_IF_ERROR(ReadRouting(t, p));
  if (p->on_bad_record == "dead_letter" && p->dead_letter_table.empty()) {
    // The default: a sibling of the table, "<table>_dead_letter".
    p->dead_letter_table = storage::SiblingLocation(p->table, "_dead_letter");
  }
  FERRY_ASSIGN_OR_RETURN(auto dedup, t.Table("dedup"));
  if (dedup) {
    p->dedup.emplace();
    FERRY_RETURN_IF_ERROR(ReadDedup(*dedup, &*p->dedup));
  }
  FERRY_RETURN_IF_ERROR(ReadUpsert(t, p));
  FERRY_ASSIGN_OR_RETURN(auto on_gap,
                         t.OneOf("on_gap", {"fail", "continue"}, "expected fail or continue"));
  Set(on_gap, &p->on_gap);
  FERRY_ASSIGN_OR_RETURN(auto tz, t.String("time_zone"));
  Set(tz, &p->time_zone);
  FERRY_ASSIGN_OR_RETURN(auto drain, t.DurationValue("drain_timeout"));
  Set(drain, &p->drain_timeout);
  // Avro's and Protobuf's writer schema (the file's, or the registry subject's latest) is a
  // schema too.
  if (p->routing) {
    if (p->decode.format == DecodeConfig::Format::kDebeziumAvro ||
        p->decode.format == DecodeConfig::Format::kDebeziumProtobuf) {
      return t.Error("routing",
                     fmt::format("routing reads fields of plain messages: it cannot route "
                                 "format = \"{}\" (fields inside `after`)",
                                 p->decode.format == DecodeConfig::Format::kDebeziumAvro
                                     ? "debezium-avro"
                                     : "debezium-protobuf"));
    }
    return t.Finish();  // each route's table has its own schema (config_routing.cc)
  }
  if (p->create_table && p->schema.empty() && p->decode.format != DecodeConfig::Format::kAvro &&
      p->decode.format != DecodeConfig::Format::kProtobuf) {
    FERRY_ASSIGN_OR_RETURN(auto explicit_create, t.Bool("create_table"));
    if (explicit_create.value_or(false)) {
      return t.Error("create_table", "create_table = true needs a schema");
    }
    p->create_table = false;  // no schema: the table must exist
  }
  return t.Finish();
}

}  // namespace ferry::config::internal
