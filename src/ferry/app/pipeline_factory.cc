#include "ferry/app/pipeline_factory.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "ferry/app/avro_input.h"
#include "ferry/app/evolution_report.h"
#include "ferry/app/protobuf_input.h"
#include "ferry/app/table_location.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/parquet_codec.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/pipeline/change_keys.h"
#include "ferry/pipeline/metadata_columns.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/pipeline/transform_stage.h"
#include "ferry/source/jetstream/jetstream_source.h"
#include "ferry/source/jetstream/partition_leases.h"
#include "ferry/source/kafka/kafka_source.h"
#include "ferry/storage/store_factory.h"
#include "ferry/transform/debezium_json_decoder.h"
#include "ferry/transform/json_decoder.h"
#include "ferry/transform/raw_decoder.h"

namespace ferry::app {
namespace {

using config::PipelineConfig;
namespace kafka = source::kafka;
namespace jetstream = source::jetstream;

Status AtKey(const config::SourceLocation& where, std::string_view key, const Status& st) {
  if (st.ok()) {
    return st;
  }
  return Status(st.code(),
                fmt::format("{}:{}:{}: {}{}{}: {}", where.file, where.line, where.column, where.key,
                            where.key.empty() || key.empty() ? "" : ".", key, st.message()));
}

// mode = "upsert": the key (and sequence) columns against the table's schema, each refused at
// its own line (`ferry config check` says so before anything runs; Pipeline::Create again).
Status CheckUpsertKey(const PipelineConfig& c, const columnar::Schema& table_schema) {
  if (c.mode != "upsert") {
    return Status::OK();
  }
  Result<pipeline::ChangeKeys> keys = pipeline::ChangeKeys::Create(table_schema, c.key, "");
  if (!keys.ok()) {
    return AtKey(c.key_location, "", keys.status());
  }
  if (!c.sequence.empty()) {
    Result<pipeline::ChangeKeys> ordered =
        pipeline::ChangeKeys::Create(table_schema, c.key, c.sequence);
    if (!ordered.ok()) {
      return AtKey(c.sequence_location, "", ordered.status());
    }
  }
  return Status::OK();
}

kafka::StartPolicy KafkaStart(config::KafkaConfig::Start s) {
  using S = config::KafkaConfig::Start;
  switch (s) {
    case S::kLatest:
      return kafka::StartPolicy::kLatest;
    case S::kGroup:
      return kafka::StartPolicy::kGroup;
    case S::kOffsets:
      return kafka::StartPolicy::kOffsets;
    case S::kTimestamp:
      return kafka::StartPolicy::kTimestamp;
    default:
      return kafka::StartPolicy::kEarliest;
  }
}

Result<kafka::KafkaSourceOptions> KafkaOptions(const PipelineConfig& c) {
  const config::KafkaConfig& k = *c.kafka;
  kafka::KafkaSourceOptions o;
  o.brokers = k.brokers;
  o.topics = k.topics;
  if (!k.topic_pattern.empty()) {
    o.topics.push_back(k.topic_pattern);
  }
  o.group_id = k.group_id;
  o.assignment = k.manual_assignment ? kafka::Assignment::kManual : kafka::Assignment::kGroup;
  o.start = KafkaStart(k.start);
  o.start_fallback = KafkaStart(k.group_fallback);
  for (const auto& [name, offset] : k.start_offsets) {
    size_t slash = name.rfind('/');
    int32_t partition = -1;
    const char* end = name.data() + name.size();
    if (slash == std::string::npos ||
        std::from_chars(name.data() + slash + 1, end, partition).ptr != end || partition < 0) {
      return AtKey(k.location, "start_offsets",
                   InvalidArgument("\"{}\": use \"topic/partition\", e.g. \"events/0\"", name));
    }
    o.start_offsets[{name.substr(0, slash), partition}] = offset;
  }
  o.start_timestamp_ms = k.start_timestamp_ms;
  o.max_rate_per_partition = k.max_rate_per_partition;
  o.fetch_wakeup = k.fetch_wakeup;
  o.read_headers = c.metadata_columns.count("headers") != 0;
  // The prefetch sized from max_memory; a property the user sets comes after these and wins.
  o.queue_max_kbytes = c.memory.queue_max_kbytes;
  o.queue_min_messages = c.memory.queue_min_messages;
  o.fetch_max_bytes = c.memory.fetch_max_bytes;
  o.properties = k.properties;
  o.on_gap = c.on_gap == "continue" ? kafka::OnGap::kContinue : kafka::OnGap::kFail;
  Status st = o.Validate();
  if (!st.ok()) {
    return AtKey(k.location, "", st);
  }
  return o;
}

Result<jetstream::JetStreamOptions> JetStreamOptions(const PipelineConfig& c) {
  const config::JetStreamConfig& j = *c.jetstream;
  jetstream::JetStreamOptions o;
  o.connection.servers = j.servers;
  o.connection.name = "ferry/" + c.id;
  o.connection.auth = {.user = j.user,
                       .password = j.password,
                       .token = j.token,
                       .nkey = j.nkey,
                       .nkey_seed_file = j.nkey_seed_file,
                       .creds_file = j.creds_file};
  o.connection.tls = {.enabled = !j.tls_ca.empty() || !j.tls_cert.empty(),
                      .ca_file = j.tls_ca,
                      .cert_file = j.tls_cert,
                      .key_file = j.tls_key,
                      .expected_hostname = j.tls_hostname};
  o.connection.connect_timeout_ms = j.connect_timeout.count();
  o.connection.reconnect_wait_ms = j.reconnect_wait.count();
  o.connection.max_reconnect = static_cast<int>(j.max_reconnects);
  o.stream = j.stream;
  o.filters = j.subjects;
  using S = config::JetStreamConfig::Start;
  switch (j.start) {
    case S::kAll:
      o.start.kind = jetstream::StartPolicy::Kind::kAll;
      break;
    case S::kNew:
      o.start.kind = jetstream::StartPolicy::Kind::kNew;
      break;
    case S::kSequence:
      o.start.kind = jetstream::StartPolicy::Kind::kSequence;
      o.start.sequence = static_cast<uint64_t>(j.start_sequence);
      break;
    case S::kTime:
      o.start.kind = jetstream::StartPolicy::Kind::kTime;
      o.start.time_ns = j.start_time_ms * 1'000'000;
      break;
  }
  o.batch_size = static_cast<size_t>(j.batch_size);
  o.heartbeat_ms = j.heartbeat.count();
  o.read_headers =
      c.metadata_columns.count("headers") != 0 || c.metadata_columns.count("msg_id") != 0;
  o.on_gap = c.on_gap == "continue" ? jetstream::OnGap::kContinue : jetstream::OnGap::kFail;
  Status st = o.Validate();
  if (!st.ok()) {
    return AtKey(j.location, "", st);
  }
  return o;
}

}  // namespace

jetstream::LeaseOptions LeaseOptionsFor(const PipelineConfig& c,
                                        const jetstream::JetStreamOptions& o) {
  const config::JetStreamConfig& j = *c.jetstream;
  return jetstream::LeaseOptions{.connection = o.connection,
                                 .bucket = j.lease_bucket,
                                 .pipeline = c.id,
                                 .stream = j.stream,
                                 .partitions = static_cast<int>(j.partition_count),
                                 .ttl = std::chrono::milliseconds(j.lease_ttl.count()),
                                 .member = {}};
}

namespace {

pipeline::TransformSpec TransformSpecOf(const PipelineConfig& c) {
  pipeline::TransformSpec spec{.where = c.where, .time_zone = c.time_zone};
  spec.where_origin =
      fmt::format("{}:{}: {}.where", c.location.file, c.location.line, c.location.key);
  for (const config::DerivedColumn& d : c.columns) {
    spec.columns.push_back({.name = d.name,
                            .expr = d.expr,
                            .origin = fmt::format("{}:{}: {}.expr", d.location.file,
                                                  d.location.line, d.location.key)});
  }
  return spec;
}

// `schema` is the input schema: the table's columns without the derived ones. `avro`, `protobuf`:
// the writer schemas of formats "avro" and "protobuf".
Result<std::unique_ptr<transform::Decoder>> MakeDecoder(const PipelineConfig& c,
                                                        const columnar::SchemaPtr& schema,
                                                        const AvroInput* avro,
                                                        const ProtobufInput* protobuf = nullptr) {
  std::set<std::string> metadata;
  for (const auto& [kind, column] : c.metadata_columns) {
    metadata.insert(column);
  }
  std::vector<std::string> columns;
  for (const columnar::Field& f : schema->fields()) {
    if (metadata.count(f.name) == 0) {
      columns.push_back(f.name);
    }
  }
  if (c.decode.format == config::DecodeConfig::Format::kAvro) {
    return MakeAvroDecoder(c, schema, std::move(columns), *avro);
  }
  if (c.decode.format == config::DecodeConfig::Format::kDebeziumAvro) {
    return MakeDebeziumAvroDecoder(c, schema, std::move(columns), *avro);
  }
  if (c.decode.format == config::DecodeConfig::Format::kProtobuf) {
    return MakeProtobufDecoder(c, schema, std::move(columns), *protobuf);
  }
  if (c.decode.format == config::DecodeConfig::Format::kDebeziumProtobuf) {
    return MakeDebeziumProtobufDecoder(c, schema, std::move(columns), *protobuf);
  }
  if (c.decode.format == config::DecodeConfig::Format::kRaw) {
    for (const std::string& name : columns) {
      if (name != c.decode.raw_column) {
        return AtKey(c.location, "decode.column",
                     InvalidArgument("format \"raw\" fills only column '{}', so column '{}' of "
                                     "the table would have no value; declare it as a metadata "
                                     "column or remove it",
                                     c.decode.raw_column, name));
      }
    }
    Result<std::unique_ptr<transform::RawDecoder>> raw =
        transform::RawDecoder::Create(schema, {.column = c.decode.raw_column});
    if (!raw.ok()) {
      return AtKey(c.location, "decode.column", raw.status());
    }
    return std::unique_ptr<transform::Decoder>(std::move(*raw));
  }
  const bool evolves = c.schema_evolution != "none";
  transform::JsonDecoderOptions o{.columns = columns,
                                  .unknown_fields_column = c.decode.unknown_fields_column,
                                  .timestamp_formats = c.decode.timestamp_formats,
                                  .date_formats = c.decode.date_formats,
                                  .time_zone = c.time_zone,
                                  .observe = evolves,
                                  .observe_misfits = evolves,
                                  .dates_keep_time = c.schema_evolution == "add_columns_and_widen"};
  if (c.decode.timestamp_epoch_unit == "millis") {
    o.epoch_unit = transform::EpochUnit::kMillis;
  } else if (c.decode.timestamp_epoch_unit == "micros") {
    o.epoch_unit = transform::EpochUnit::kMicros;
  }
  if (c.decode.format == config::DecodeConfig::Format::kDebeziumJson) {
    transform::DebeziumJsonOptions d{
        .envelope_columns = c.decode.envelope_columns,
        .decimal_handling = c.decode.decimal_handling == "string"
                                ? transform::DecimalHandling::kString
                                : transform::DecimalHandling::kPrecise};
    for (const auto& [field, column] : c.decode.envelope_columns) {
      std::erase(o.columns, column);
    }
    d.row = std::move(o);
    Result<std::unique_ptr<transform::DebeziumJsonDecoder>> debezium =
        transform::DebeziumJsonDecoder::Create(schema, std::move(d));
    if (!debezium.ok()) {
      return AtKey(c.location, "decode", debezium.status());
    }
    return std::unique_ptr<transform::Decoder>(std::move(*debezium));
  }
  Result<std::unique_ptr<transform::JsonDecoder>> json = transform::JsonDecoder::Create(schema, o);
  if (!json.ok()) {
    return AtKey(c.location, "decode", json.status());
  }
  return std::unique_ptr<transform::Decoder>(std::move(*json));
}

// The store a table location names (the config check parsed it), with the pipeline's storage
// options; its directory is created when `create`.
Result<std::shared_ptr<storage::ObjectStore>> OpenStore(const PipelineConfig& c,
                                                        const std::string& location,
                                                        std::string_view key, bool create) {
  Result<std::shared_ptr<storage::ObjectStore>> store = OpenStoreAt(
      location, c.storage, create ? storage::OpenMode::kCreate : storage::OpenMode::kExisting);
  if (!store.ok()) {
    return AtKey(c.location, std::string(key), store.status());
  }
  return store;
}

// The metadata columns the pipeline fills from the message's facts: all that the configuration
// names, but the key when key_format decodes it (a column of its own, filled by its decoder).
std::map<std::string, std::string> PipelineMetadata(const PipelineConfig& c) {
  std::map<std::string, std::string> metadata = c.metadata_columns;
  if (c.decode.key_format != "string") {
    metadata.erase("key");
  }
  return metadata;
}

// Whether the pipeline's table has a log (for `config check`, which creates nothing).
Result<bool> TableExists(const PipelineConfig& c) {
  Result<std::shared_ptr<storage::ObjectStore>> store = OpenStore(c, c.table, "table", false);
  if (store.status().code() == StatusCode::kNotFound) {
    return false;
  }
  FERRY_RETURN_IF_ERROR(store.status());
  FERRY_ASSIGN_OR_RETURN(std::vector<storage::ObjectInfo> log, (*store)->List("_delta_log/"));
  return !log.empty();
}

// The keeper's listings into the journal (the status page's lease view), each partition keyed like
// its positions ("jetstream/<stream>/<filter>").
std::function<void(const std::vector<jetstream::LeaseView>&)> LeaseJournal(
    metrics::Journal* journal, std::string pipeline, const jetstream::JetStreamOptions& o) {
  std::vector<std::string> keys;
  keys.reserve(o.filters.size());
  for (const std::string& filter : o.filters) {
    keys.push_back(jetstream::PartitionKey(o.stream, filter));
  }
  return [journal, pipeline = std::move(pipeline),
          keys = std::move(keys)](const std::vector<jetstream::LeaseView>& view) {
    std::vector<metrics::LeaseRecord> leases;
    leases.reserve(view.size());
    for (const jetstream::LeaseView& v : view) {
      if (v.partition < 0 || static_cast<size_t>(v.partition) >= keys.size()) {
        continue;
      }
      leases.push_back({.partition = keys[static_cast<size_t>(v.partition)],
                        .owner = v.owner,
                        .mine = v.mine,
                        .taken_unix_ms = v.taken_unix_ms,
                        .renewed_unix_ms = v.renewed_unix_ms});
    }
    journal->SetLeases({pipeline, ""}, std::move(leases));
  };
}

}  // namespace

Result<pipeline::SourceFactory> SourceFactoryFor(const PipelineConfig& c,
                                                 metrics::Journal* journal) {
  if (c.kafka) {
    FERRY_ASSIGN_OR_RETURN(kafka::KafkaSourceOptions o, KafkaOptions(c));
    return pipeline::SourceFactory([o]() -> Result<std::unique_ptr<source::Source>> {
      FERRY_ASSIGN_OR_RETURN(auto s, kafka::KafkaSource::Create(o));
      return std::unique_ptr<source::Source>(std::move(s));
    });
  }
  if (c.jetstream) {
    FERRY_ASSIGN_OR_RETURN(jetstream::JetStreamOptions o, JetStreamOptions(c));
    std::shared_ptr<jetstream::PartitionLeases> leases;
    if (c.jetstream->partition_count > 0) {
      // Elastic mode: the leases outlive each source the pipeline makes (fencing makes a new
      // one) and are released when the pipeline, which holds this factory, goes.
      jetstream::LeaseOptions lo = LeaseOptionsFor(c, o);
      if (journal != nullptr) {
        lo.on_view = LeaseJournal(journal, c.id, o);
      }
      Result<std::shared_ptr<jetstream::PartitionLeases>> made =
          jetstream::PartitionLeases::Create(std::move(lo));
      if (!made.ok()) {
        return AtKey(c.jetstream->location, "partitions", made.status());
      }
      leases = std::move(*made);
    }
    return pipeline::SourceFactory([o, leases]() -> Result<std::unique_ptr<source::Source>> {
      FERRY_ASSIGN_OR_RETURN(auto s, jetstream::JetStreamSource::Create(o, leases));
      return std::unique_ptr<source::Source>(std::move(s));
    });
  }
  return AtKey(c.location, "", InvalidArgument("needs a [pipeline.kafka] or [pipeline.jetstream]"));
}

Result<std::unique_ptr<pipeline::Pipeline>> BuildPipeline(const PipelineConfig& c,
                                                          metrics::Registry* registry,
                                                          const BuildOptions& build) {
  pipeline::SourceFactory factory = build.source;
  if (!factory) {
    FERRY_ASSIGN_OR_RETURN(
        factory, SourceFactoryFor(c, registry != nullptr ? registry->journal() : nullptr));
  }

  FERRY_ASSIGN_OR_RETURN(delta::SchemaEvolution evolution,
                         delta::ParseSchemaEvolution(c.schema_evolution));
  pipeline::TableSetupOptions setup{.schema_ddl = c.schema,
                                    .schema_origin = c.schema_location.ToString(),
                                    .partition_by = c.partition_by,
                                    .properties = c.table_properties,
                                    .create = c.create_table && !build.check_only,
                                    .metadata_columns = PipelineMetadata(c),
                                    .transform = TransformSpecOf(c)};
  std::optional<AvroInput> avro;
  if (c.decode.format == config::DecodeConfig::Format::kAvro ||
      c.decode.format == config::DecodeConfig::Format::kDebeziumAvro) {
    FERRY_ASSIGN_OR_RETURN(avro, OpenAvroInput(c));
    // A Debezium envelope is not the table's row: debezium-avro tables are declared (`schema`).
    if (c.schema.empty() && c.decode.format == config::DecodeConfig::Format::kAvro) {
      FERRY_ASSIGN_OR_RETURN(bool exists, TableExists(c));
      if (!exists) {
        // The table's columns come from the writer schema (the subject's latest version).
        FERRY_ASSIGN_OR_RETURN(AvroTableSchema s, AvroSchemaForNewTable(c, *avro));
        setup.schema_ddl = std::move(s.ddl);
        setup.schema_origin = std::move(s.origin);
      }
    }
  }
  std::optional<ProtobufInput> protobuf;
  if (c.decode.format == config::DecodeConfig::Format::kProtobuf ||
      c.decode.format == config::DecodeConfig::Format::kDebeziumProtobuf) {
    FERRY_ASSIGN_OR_RETURN(protobuf, OpenProtobufInput(c));
    // As debezium-avro: the envelope is not the table's row, so the table is declared.
    if (c.schema.empty() && c.decode.format == config::DecodeConfig::Format::kProtobuf) {
      FERRY_ASSIGN_OR_RETURN(bool exists, TableExists(c));
      if (!exists) {
        // The table's columns come from the writer's message (the subject's latest version).
        FERRY_ASSIGN_OR_RETURN(ProtobufTableSchema s, ProtobufSchemaForNewTable(c, *protobuf));
        setup.schema_ddl = std::move(s.ddl);
        setup.schema_origin = std::move(s.origin);
      }
    }
  }
  const AvroInput* avro_input = avro ? &*avro : nullptr;
  const ProtobufInput* protobuf_input = protobuf ? &*protobuf : nullptr;
  pipeline::OpenedTable opened;
  if (build.check_only) {
    // Validate the declared schema, then the table if it exists; create nothing.
    columnar::SchemaPtr declared_table;  // the table the declared schema creates
    if (!setup.schema_ddl.empty()) {
      Result<columnar::Schema> declared =
          columnar::ParseDdlSchema(setup.schema_ddl, setup.schema_origin);
      if (!declared.ok()) {
        return declared.status();
      }
      FERRY_ASSIGN_OR_RETURN(columnar::SchemaPtr resolved,
                             pipeline::ResolveSchema(*declared, setup.metadata_columns));
      FERRY_RETURN_IF_ERROR(MakeDecoder(c, resolved, avro_input, protobuf_input).status());
      FERRY_ASSIGN_OR_RETURN(std::unique_ptr<pipeline::TransformStage> stage,
                             pipeline::TransformStage::Create(resolved, setup.transform));
      declared_table = stage->table_schema();
    }
    FERRY_ASSIGN_OR_RETURN(bool exists, TableExists(c));
    if (!exists) {
      if (setup.schema_ddl.empty()) {
        return AtKey(
            c.location, "table",
            NotFound("{}: no Delta table there, and no `schema` to create it from", c.table));
      }
      FERRY_RETURN_IF_ERROR(CheckUpsertKey(c, *declared_table));
      return std::unique_ptr<pipeline::Pipeline>();
    }
  }
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<storage::ObjectStore> store,
                         OpenStore(c, c.table, "table", !build.check_only));
  setup.unavailable_patience = build.store_patience;
  setup.cancelled = build.cancelled;
  FERRY_ASSIGN_OR_RETURN(opened, pipeline::OpenOrCreateTable(store, "", setup));
  if (build.check_only) {
    FERRY_RETURN_IF_ERROR(CheckUpsertKey(c, *opened.snapshot.schema()));
  }
  if (build.check_only && build.report != nullptr) {
    *build.report += ExplainSchemaEvolution(c, opened.snapshot);
  }
  FERRY_ASSIGN_OR_RETURN(
      std::unique_ptr<transform::Decoder> decoder,
      MakeDecoder(c, pipeline::InputSchema(*opened.snapshot.schema(), setup.transform.columns),
                  avro_input, protobuf_input));

  FERRY_ASSIGN_OR_RETURN(parquet::CompressionCodec codec, delta::CodecFromName(c.writer.codec));
  pipeline::PipelineOptions options{
      .id = c.id,
      .max_rows = c.batch.max_rows,
      // A batch is cut at the budget's unit when max_bytes asks for more (memory_budget.h).
      .max_bytes = std::min(c.batch.max_bytes, c.memory.batch),
      .max_latency = c.batch.max_latency,
      .max_in_flight = static_cast<int>(c.batch.max_in_flight),
      .metadata_columns = setup.metadata_columns,
      .transform = setup.transform,
      .on_bad_record = c.on_bad_record == "skip"          ? pipeline::OnBadRecord::kSkip
                       : c.on_bad_record == "dead_letter" ? pipeline::OnBadRecord::kDeadLetter
                                                          : pipeline::OnBadRecord::kFail,
      .schema_evolution = evolution,
      .evolution_limits = {.max_new_fields = c.max_new_columns_per_batch,
                           .max_fields = c.max_columns},
      .unknown_fields_column = c.decode.unknown_fields_column,
      .until_caught_up = build.until_caught_up,
      .max_wait = build.max_wait,
  };
  if (c.decode.format == config::DecodeConfig::Format::kJson ||
      c.decode.format == config::DecodeConfig::Format::kDebeziumJson) {
    // The pipeline follows the table's schema: its own changes and anyone else's.
    options.decoder_factory = [c](const columnar::SchemaPtr& input) {
      return MakeDecoder(c, input, nullptr);
    };
  } else if (avro) {
    // The same, with the writer schemas every decoder shares (each id fetched once).
    options.decoder_factory = [c, input = *avro](const columnar::SchemaPtr& schema) {
      return MakeDecoder(c, schema, &input);
    };
  } else if (protobuf) {
    options.decoder_factory = [c, input = *protobuf](const columnar::SchemaPtr& schema) {
      return MakeDecoder(c, schema, nullptr, &input);
    };
  }
  if (avro && c.decode.key_format == "avro") {
    options.key_decoder_factory = [c, input = *avro](const columnar::SchemaPtr& schema) {
      return MakeAvroKeyDecoder(c, schema, input);
    };
  }
  if (protobuf && c.decode.key_format == "protobuf") {
    options.key_decoder_factory = [c, input = *protobuf](const columnar::SchemaPtr& schema) {
      return MakeProtobufKeyDecoder(c, schema, input);
    };
  }
  if (c.dedup) {
    options.dedup =
        pipeline::DedupSpec{.key = c.dedup->key,
                            .window = c.dedup->window,
                            .max_keys = c.dedup->max_keys,
                            .origin = fmt::format("{}:{}: {}.key", c.dedup->location.file,
                                                  c.dedup->location.line, c.dedup->location.key),
                            .time_zone = c.time_zone};
  }
  if (c.mode == "upsert") {
    options.upsert =
        pipeline::UpsertSpec{.key = c.key,
                             .sequence = c.sequence,
                             .origin = fmt::format("{}:{}: {}", c.key_location.file,
                                                   c.key_location.line, c.key_location.key),
                             .persist_every = c.key_index_persist_every,
                             .tombstone_retention = c.tombstone_retention,
                             .max_tombstones = c.max_tombstones};
    auto key_column = c.metadata_columns.find("key");
    options.tombstone_key_from_metadata =
        key_column != c.metadata_columns.end() &&
        std::find(c.key.begin(), c.key.end(), key_column->second) != c.key.end();
  }
  options.writer.target_file_size = c.writer.target_file_size;
  options.writer.codec_override = c.writer.codec;
  options.writer.parquet.codec = codec;
  options.writer.parquet.compression_level = c.writer.compression_level;
  // A file's pages wait in memory until their row group is flushed (parquet/writer.h).
  options.writer.parquet.row_group_max_bytes =
      std::min(options.writer.parquet.row_group_max_bytes, c.memory.batch);
  options.writer.parquet.compression_threads =
      c.writer.compression_threads > 0
          ? c.writer.compression_threads
          : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1U, 4U));
  if (build.check_only) {
    return std::unique_ptr<pipeline::Pipeline>();
  }
  if (build.adjust) {
    build.adjust(&options);
  }
  bool dead_letter = options.on_bad_record == pipeline::OnBadRecord::kDeadLetter;
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<pipeline::Pipeline> built,
                         pipeline::Pipeline::Create(std::move(options), std::move(opened.table),
                                                    std::move(opened.snapshot), std::move(factory),
                                                    std::move(decoder), registry));
  if (dead_letter) {
    FERRY_ASSIGN_OR_RETURN(std::shared_ptr<storage::ObjectStore> dead_store,
                           OpenStore(c, c.dead_letter_table, "dead_letter_table", true));
    FERRY_ASSIGN_OR_RETURN(pipeline::OpenedTable dead,
                           pipeline::OpenOrCreateTable(
                               std::move(dead_store), "",
                               {.schema_ddl = pipeline::kDeadLetterSchema,
                                .schema_origin = "dead-letter table",
                                .allow_missing_columns = evolution != delta::SchemaEvolution::kNone,
                                .unavailable_patience = build.store_patience,
                                .cancelled = build.cancelled}));
    FERRY_RETURN_IF_ERROR(
        built->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
  }
  return built;
}

Result<kafka::KafkaSourceOptions> KafkaSourceOptionsFor(const PipelineConfig& c) {
  if (!c.kafka) {
    return InvalidArgument("pipeline {} has no [pipeline.kafka]", c.id);
  }
  return KafkaOptions(c);
}

Result<jetstream::JetStreamOptions> JetStreamOptionsFor(const PipelineConfig& c) {
  if (!c.jetstream) {
    return InvalidArgument("pipeline {} has no [pipeline.jetstream]", c.id);
  }
  return JetStreamOptions(c);
}

}  // namespace ferry::app
