#include "ferry/app/routed_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "ferry/app/table_location.h"
#include "ferry/columnar/ddl.h"
#include "ferry/pipeline/route_selector.h"
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

Result<std::unique_ptr<pipeline::RouteSelector>> MakeSelector(const config::PipelineConfig& c) {
  const config::TableNameRulesConfig& r = c.table_name_rules;
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
    return std::unique_ptr<pipeline::RouteSelector>(
        std::make_unique<pipeline::TemplateSelector>(std::move(*t), r.fallback));
  }
  columnar::SchemaPtr schema;
  if (!c.routing->schema.empty()) {
    Result<columnar::Schema> parsed =
        columnar::ParseDdlSchema(c.routing->schema, c.routing->schema_location.ToString());
    if (!parsed.ok()) {
      return parsed.status();
    }
    schema = std::make_shared<const columnar::Schema>(std::move(*parsed));
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
      schema, std::move(routes), c.routing->unmatched == "default", c.time_zone);
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

config::PipelineConfig RoutedTableConfig(const config::PipelineConfig& c,
                                         const std::string& table) {
  config::PipelineConfig d = c;
  d.table = table;
  d.table_is_template = false;
  d.routes.clear();
  d.routing.reset();
  // Every open table's batch counts against the pipeline's share of max_memory.
  const int64_t open = std::max<int64_t>(1, c.routing ? c.routing->max_open_tables : 1);
  d.memory.batch = std::max<int64_t>(int64_t{1} << 20, c.memory.batch / open);
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
  FERRY_ASSIGN_OR_RETURN(pipeline::SourceFactory source, SourceFactoryFor(c));
  Result<std::shared_ptr<storage::ObjectStore>> store =
      OpenStoreAt(c.routing->positions_table, c.storage, storage::OpenMode::kCreate);
  if (!store.ok()) {
    return RoutingError(c, "routing.positions_table", store.status());
  }
  FERRY_ASSIGN_OR_RETURN(pipeline::OpenedTable positions,
                         pipeline::OpenOrCreateTable(std::move(*store), "",
                                                     {.schema_ddl = kRoutingPositionsSchema,
                                                      .schema_origin = "routing positions table"}));
  pipeline::InnerFactory inners =
      [c,
       registry](const pipeline::InnerSpec& spec) -> Result<std::unique_ptr<pipeline::Pipeline>> {
    BuildOptions inner{.source = spec.source, .adjust = [spec](pipeline::PipelineOptions* o) {
                         o->seal_hook = spec.seal_hook;
                         o->dead_letter_id = spec.dead_letter_id;
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
                                   .registry = registry},
                                  std::move(source), std::move(selector), std::move(inners),
                                  std::move(reader), std::move(positions.table),
                                  std::move(positions.snapshot));
}

}  // namespace ferry::app
