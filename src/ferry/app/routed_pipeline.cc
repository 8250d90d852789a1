#include "ferry/app/routed_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ferry/app/avro_input.h"
#include "ferry/app/protobuf_input.h"
#include "ferry/app/table_location.h"
#include "ferry/columnar/ddl.h"
#include "ferry/pipeline/route_selector.h"
#include "ferry/pipeline/routing_fields.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/pipeline/table_template.h"

namespace ferry::app {

namespace {

// The positions table's columns: one row per routed table is planned (docs/decisions/routing.md);
// today it holds txns only.
constexpr char kRoutingPositionsSchema[] = "table STRING, first_seen TIMESTAMP";

Status RoutingError(const config::PipelineConfig& c, std::string_view key, const Status& st) {
  return InvalidArgument("{}:{}: {}.{}: {}", c.location.file, c.location.line, c.location.key, key,
                         st.message());
}

// routing.schema parsed; null when it is not set.
Result<columnar::SchemaPtr> RoutingSchema(const config::PipelineConfig& c) {
  if (c.routing->schema.empty()) {
    return columnar::SchemaPtr();
  }
  Result<columnar::Schema> parsed =
      columnar::ParseDdlSchema(c.routing->schema, c.routing->schema_location.ToString());
  if (!parsed.ok()) {
    return parsed.status();
  }
  return std::make_shared<const columnar::Schema>(std::move(*parsed));
}

// The routing fields of a pipeline whose format has writer schemas (Avro, Protobuf): a decoder
// of the pipeline's format into `schema` alone (the writer's other fields are skipped), with
// writer schemas of its own (fetched once per id, as each table's pipeline does). Null for JSON:
// the selectors read JSON themselves.
Result<std::unique_ptr<pipeline::RoutingFields>> MakeRoutingFields(
    const config::PipelineConfig& c, const columnar::SchemaPtr& schema) {
  config::PipelineConfig d = c;
  d.schema_evolution = "none";  // nothing to observe: the routing schema never grows
  std::unique_ptr<transform::Decoder> decoder;
  if (c.decode.format == config::DecodeConfig::Format::kAvro) {
    FERRY_ASSIGN_OR_RETURN(AvroInput avro, OpenAvroInput(d));
    FERRY_ASSIGN_OR_RETURN(decoder, MakeAvroDecoder(d, schema, {}, avro));
  } else if (c.decode.format == config::DecodeConfig::Format::kProtobuf) {
    FERRY_ASSIGN_OR_RETURN(ProtobufInput protobuf, OpenProtobufInput(d));
    FERRY_ASSIGN_OR_RETURN(decoder, MakeProtobufDecoder(d, schema, {}, protobuf));
  } else {
    return std::unique_ptr<pipeline::RoutingFields>();
  }
  return std::make_unique<pipeline::RoutingFields>(schema, std::move(decoder));
}

Result<std::unique_ptr<pipeline::RouteSelector>> MakeSelector(const config::PipelineConfig& c) {
  const config::TableNameRulesConfig& r = c.table_name_rules;
  FERRY_ASSIGN_OR_RETURN(columnar::SchemaPtr schema, RoutingSchema(c));
  if (c.table_is_template) {
    Result<pipeline::TableTemplate> t =
        pipeline::TableTemplate::Parse(c.table, {.lower_case = r.lower_case,
                                                 .allowed_characters = r.allowed_characters,
                                                 .replacement = r.replacement,
                                                 .max_length = r.max_length,
                                                 .allow = r.allow});
    if (!t.ok()) {
      return RoutingError(c, "table", t.status());
    }
    std::unique_ptr<pipeline::RoutingFields> fields;
    if (!t->fields().empty()) {
      // Avro, Protobuf: the template's fields, typed by routing.schema, else each a STRING.
      Result<std::unique_ptr<pipeline::RoutingFields>> made = MakeRoutingFields(
          c, schema != nullptr ? schema : pipeline::RoutingFields::StringSchema(t->fields()));
      if (!made.ok()) {
        return made.status().WithContext("pipeline {}: the routing fields of table", c.id);
      }
      fields = std::move(*made);
    }
    return std::unique_ptr<pipeline::RouteSelector>(
        std::make_unique<pipeline::TemplateSelector>(std::move(*t), r.fallback, std::move(fields)));
  }
  std::unique_ptr<pipeline::RoutingFields> fields;
  if (schema != nullptr) {
    Result<std::unique_ptr<pipeline::RoutingFields>> made = MakeRoutingFields(c, schema);
    if (!made.ok()) {
      return made.status().WithContext("pipeline {}: the routing fields of routing.schema", c.id);
    }
    fields = std::move(*made);
  }
  std::vector<pipeline::PredicateRoute> routes;
  for (const config::RouteConfig& route : c.routes) {
    routes.push_back({.name = route.name,
                      .where = route.where,
                      .table = route.table,
                      .origin = fmt::format("{}:{}: {}.where", route.location.file,
                                            route.location.line, route.location.key)});
  }
  Result<std::unique_ptr<pipeline::PredicateSelector>> s = pipeline::PredicateSelector::Create(
      schema, std::move(routes), c.routing->unmatched == "default", c.time_zone, std::move(fields));
  if (!s.ok()) {
    return s.status();
  }
  return std::unique_ptr<pipeline::RouteSelector>(std::move(*s));
}

// The latest snapshot of `table`, nullopt when it has no log yet.
Result<std::optional<delta::Snapshot>> ReadRoutedTable(const config::PipelineConfig& c,
                                                       const std::string& table) {
  Result<std::unique_ptr<delta::Table>> opened =
      OpenTableAt(table, c.storage, storage::OpenMode::kExisting);
  if (opened.status().code() == StatusCode::kNotFound) {
    return std::optional<delta::Snapshot>();
  }
  FERRY_RETURN_IF_ERROR(opened.status());
  Result<delta::Snapshot> snap = (*opened)->LoadSnapshot();
  if (snap.status().code() == StatusCode::kNotFound) {
    return std::optional<delta::Snapshot>();
  }
  FERRY_RETURN_IF_ERROR(snap.status());
  return std::optional<delta::Snapshot>(std::move(*snap));
}

}  // namespace

Result<std::vector<std::string>> RoutedTablesOf(const config::PipelineConfig& c) {
  std::vector<std::string> candidates;
  if (c.table_is_template) {
    candidates.push_back(c.table_name_rules.fallback);
  }
  for (const config::RouteConfig& route : c.routes) {
    candidates.push_back(route.table);
  }
  FERRY_ASSIGN_OR_RETURN(std::optional<delta::Snapshot> positions,
                         ReadRoutedTable(c, c.routing->positions_table));
  if (positions) {
    const std::string prefix = pipeline::RoutingLedger::TableAppId(c.id, "");
    for (const auto& [app_id, txn] : positions->txns()) {
      if (app_id.starts_with(prefix)) {
        candidates.push_back(app_id.substr(prefix.size()));
      }
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<std::string> tables;
  for (const std::string& table : candidates) {
    FERRY_ASSIGN_OR_RETURN(std::optional<delta::Snapshot> snapshot, ReadRoutedTable(c, table));
    if (snapshot) {
      tables.push_back(table);
    }
  }
  return tables;
}

config::PipelineConfig RoutedTableConfig(const config::PipelineConfig& c,
                                         const std::string& table) {
  config::PipelineConfig d = c;
  d.table = table;
  d.table_is_template = false;
  d.routes.clear();
  d.routing.reset();
  // Each table's batch may grow to the pipeline's unit; together the open batches share one
  // (SharedBatchBudget, given by BuildRoutedPipeline).
  for (const config::RouteConfig& route : c.routes) {
    if (route.table != table) {
      continue;
    }
    if (!route.schema.empty()) {
      d.schema = route.schema;
      d.schema_location = route.schema_location;
    }
    d.partition_by = route.partition_by;
    d.columns = route.columns;
    d.dedup = route.dedup;
    for (const auto& [k, v] : route.table_properties) {
      d.table_properties[k] = v;
    }
    d.location = route.location;
  }
  return d;
}

Result<std::unique_ptr<pipeline::Router>> BuildRoutedPipeline(const config::PipelineConfig& c,
                                                              metrics::Registry* registry,
                                                              const BuildOptions& build) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<pipeline::RouteSelector> selector, MakeSelector(c));
  if (build.check_only) {
    // The tables known now (routes, the fallback) are checked as one-table pipelines are.
    for (const std::string& table : selector->StaticTables()) {
      FERRY_RETURN_IF_ERROR(BuildPipeline(RoutedTableConfig(c, table), registry, build).status());
    }
    return std::unique_ptr<pipeline::Router>();
  }
  // Elastic JetStream: the keeper's listings go to the routed pipeline's own journal record, the
  // status page's lease view, as for a one-table pipeline.
  FERRY_ASSIGN_OR_RETURN(pipeline::SourceFactory source,
                         SourceFactoryFor(c, registry != nullptr ? registry->journal() : nullptr));
  Result<std::shared_ptr<storage::ObjectStore>> store =
      OpenStoreAt(c.routing->positions_table, c.storage, storage::OpenMode::kCreate);
  if (!store.ok()) {
    return RoutingError(c, "routing.positions_table", store.status());
  }
  FERRY_ASSIGN_OR_RETURN(pipeline::OpenedTable positions,
                         pipeline::OpenOrCreateTable(std::move(*store), "",
                                                     {.schema_ddl = kRoutingPositionsSchema,
                                                      .schema_origin = "routing positions table",
                                                      .unavailable_patience = build.store_patience,
                                                      .cancelled = build.cancelled}));
  // The open batches of all the tables count against one batch unit of the pipeline's share of
  // max_memory (docs/memory.md), as one table's would.
  auto budget =
      std::make_shared<pipeline::SharedBatchBudget>(std::min(c.batch.max_bytes, c.memory.batch));
  pipeline::InnerFactory inners =
      [c, registry,
       budget](const pipeline::InnerSpec& spec) -> Result<std::unique_ptr<pipeline::Pipeline>> {
    BuildOptions inner{.source = spec.source,
                       .adjust = [spec, budget](pipeline::PipelineOptions* o) {
                         o->shared_batch_budget = budget;
                         o->seal_hook = spec.seal_hook;
                         o->dead_letter_id = spec.dead_letter_id;
                         o->seal_now = spec.seal_now;
                         o->metrics_table = spec.table;
                       }};
    return BuildPipeline(RoutedTableConfig(c, spec.table), registry, inner);
  };
  pipeline::TableReader reader = [c](const std::string& table) {
    return ReadRoutedTable(c, table);
  };
  const config::RoutingConfig& r = *c.routing;
  return pipeline::Router::Create({.id = c.id,
                                   .queue_messages = static_cast<size_t>(r.queue_messages),
                                   .max_open_tables = static_cast<size_t>(r.max_open_tables),
                                   .max_tables = static_cast<size_t>(r.max_tables),
                                   .position_commit_interval = r.position_commit_interval,
                                   .drain_timeout = c.drain_timeout,
                                   .until_caught_up = build.until_caught_up,
                                   .max_wait = build.max_wait,
                                   .registry = registry},
                                  std::move(source), std::move(selector), std::move(inners),
                                  std::move(reader), std::move(positions.table),
                                  std::move(positions.snapshot));
}

}  // namespace ferry::app
