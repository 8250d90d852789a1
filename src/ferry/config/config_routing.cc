// ReadRouting (config_internal.h): a pipeline's templated table or static routes, and the
// [pipeline.routing] settings of its router (pipeline/router.h).
#include <fmt/format.h>

#include <set>

#include "ferry/config/config_internal.h"
#include "ferry/pipeline/table_template.h"
#include "ferry/storage/table_uri.h"

namespace ferry::config::internal {

namespace {

Status ReadTableNameRules(TomlTable& t, TableNameRulesConfig* r) {
  r->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(auto lower, t.Bool("lower_case"));
  FERRY_ASSIGN_OR_RETURN(auto allowed, t.String("allowed_characters"));
  FERRY_ASSIGN_OR_RETURN(auto replacement, t.String("replacement"));
  FERRY_ASSIGN_OR_RETURN(auto max_length, t.Int("max_length"));
  FERRY_ASSIGN_OR_RETURN(auto fallback, t.String("fallback"));
  FERRY_ASSIGN_OR_RETURN(auto allow, t.String("allow"));
  if (allowed && allowed->empty()) {
    return t.Error("allowed_characters", "must name at least one character (e.g. \"a-z0-9_-\")");
  }
  if (replacement && replacement->find_first_of("/{}") != std::string::npos) {
    return t.Error("replacement", "must not hold '/', '{' or '}'");
  }
  if (max_length && (*max_length < 1 || *max_length > 1024)) {
    return t.Error("max_length", "must be between 1 and 1024");
  }
  if (fallback) {
    if (fallback->find('{') != std::string::npos) {
      return t.Error("fallback", "is a table location, not a template");
    }
    if (Result<storage::TableUri> uri = storage::ParseTableUri(*fallback, ""); !uri.ok()) {
      return t.Error("fallback", uri.status().message());
    }
  }
  Set(lower, &r->lower_case);
  Set(allowed, &r->allowed_characters);
  Set(replacement, &r->replacement);
  Set(max_length, &r->max_length);
  Set(fallback, &r->fallback);
  Set(allow, &r->allow);
  return t.Finish();
}

pipeline::TableNameRules RulesOf(const TableNameRulesConfig& r) {
  return {.lower_case = r.lower_case,
          .allowed_characters = r.allowed_characters,
          .replacement = r.replacement,
          .max_length = r.max_length,
          .allow = r.allow};
}

Status ReadRoutingSettings(TomlTable& t, RoutingConfig* r) {
  r->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(auto unmatched, t.OneOf("unmatched", {"default", "dead_letter"},
                                                 "expected default or dead_letter"));
  FERRY_ASSIGN_OR_RETURN(auto schema, t.String("schema"));
  FERRY_ASSIGN_OR_RETURN(auto positions, t.String("positions_table"));
  FERRY_ASSIGN_OR_RETURN(auto interval, t.DurationValue("position_commit_interval"));
  FERRY_ASSIGN_OR_RETURN(auto max_open, t.Int("max_open_tables"));
  FERRY_ASSIGN_OR_RETURN(auto max_tables, t.Int("max_tables"));
  FERRY_ASSIGN_OR_RETURN(auto queue, t.Int("queue_messages"));
  if (positions) {
    if (Result<storage::TableUri> uri = storage::ParseTableUri(*positions, ""); !uri.ok()) {
      return t.Error("positions_table", uri.status().message());
    }
  }
  if (interval && interval->count() < 100) {
    return t.Error("position_commit_interval", "must be at least 100ms");
  }
  if (max_open && (*max_open < 1 || *max_open > 10000)) {
    return t.Error("max_open_tables", "must be between 1 and 10000");
  }
  if (max_tables && (*max_tables < 1 || *max_tables > 1000000)) {
    return t.Error("max_tables", "must be between 1 and 1000000");
  }
  if (queue && (*queue < 1 || *queue > 10000000)) {
    return t.Error("queue_messages", "must be between 1 and 10000000");
  }
  Set(unmatched, &r->unmatched);
  if (schema) {
    r->schema = *schema;
    r->schema_location = t.Location("schema");
  }
  Set(positions, &r->positions_table);
  Set(interval, &r->position_commit_interval);
  Set(max_open, &r->max_open_tables);
  Set(max_tables, &r->max_tables);
  Set(queue, &r->queue_messages);
  return t.Finish();
}

Status ReadRoute(TomlTable& t, size_t index, RouteConfig* r) {
  r->location = t.Location("");
  FERRY_ASSIGN_OR_RETURN(auto name, t.String("name"));
  FERRY_ASSIGN_OR_RETURN(auto where, t.String("where"));
  FERRY_ASSIGN_OR_RETURN(
      r->table, t.RequiredString("table", "a route needs a table (its Delta table's path)"));
  if (r->table.find('{') != std::string::npos) {
    return t.Error("table", "a route's table is a location, not a template");
  }
  if (Result<storage::TableUri> uri = storage::ParseTableUri(r->table, ""); !uri.ok()) {
    return t.Error("table", uri.status().message());
  }
  r->name = name.value_or(fmt::format("route[{}]", index));
  if (name && name->empty()) {
    return t.Error("name", "must not be empty");
  }
  Set(where, &r->where);
  if (r->name == "default" && !r->where.empty()) {
    return t.Error("where",
                   "the route named default takes what no other route matches: it has "
                   "no where");
  }
  if (r->name != "default" && r->where.empty()) {
    return t.Error("", fmt::format("route {} needs a where (only the route named default has "
                                   "none)",
                                   r->name));
  }
  FERRY_ASSIGN_OR_RETURN(auto schema, t.String("schema"));
  if (schema) {
    r->schema = *schema;
    r->schema_location = t.Location("schema");
  }
  FERRY_ASSIGN_OR_RETURN(auto partition_by, t.StringList("partition_by"));
  Set(partition_by, &r->partition_by);
  FERRY_RETURN_IF_ERROR(ReadTableProperties(t, &r->table_properties));
  FERRY_RETURN_IF_ERROR(ReadDerivedColumns(t, &r->columns));
  FERRY_ASSIGN_OR_RETURN(auto dedup, t.Table("dedup"));
  if (dedup) {
    r->dedup.emplace();
    FERRY_RETURN_IF_ERROR(ReadDedup(*dedup, &*r->dedup));
  }
  return t.Finish();
}

// The directory of the first table: `location` up to its last '/' before any placeholder
// ("s3://lake/raw/{topic}" -> "s3://lake/raw/"), or "" for a bare name.
std::string RoutingDirectory(const std::string& location) {
  std::string fixed = location.substr(0, location.find('{'));
  size_t slash = fixed.rfind('/');
  return slash == std::string::npos ? std::string() : fixed.substr(0, slash + 1);
}

}  // namespace

Status ReadRouting(TomlTable& t, PipelineConfig* p) {
  FERRY_ASSIGN_OR_RETURN(auto routes, t.TableArray("route"));
  FERRY_ASSIGN_OR_RETURN(auto rules, t.Table("table_name_rules"));
  FERRY_ASSIGN_OR_RETURN(auto routing, t.Table("routing"));
  if (!p->table_is_template && routes.empty()) {
    if (rules || routing) {
      return t.Error(rules ? "table_name_rules" : "routing",
                     "applies to a pipeline that routes: a table template (e.g. table = "
                     "\"lake/{topic}\") or [[pipeline.route]] entries");
    }
    return Status::OK();
  }
  p->routing.emplace();
  if (routing) {
    FERRY_RETURN_IF_ERROR(ReadRoutingSettings(*routing, &*p->routing));
  }
  RoutingConfig& r = *p->routing;
  std::string first_table;
  if (p->table_is_template) {
    if (rules) {
      FERRY_RETURN_IF_ERROR(ReadTableNameRules(*rules, &p->table_name_rules));
    }
    Result<pipeline::TableTemplate> parsed =
        pipeline::TableTemplate::Parse(p->table, RulesOf(p->table_name_rules));
    if (!parsed.ok()) {
      // A placeholder error quotes the template; the rest (allow, allowed_characters) is a rule's.
      return rules && !parsed.status().message().starts_with("\"")
                 ? rules->Error("", parsed.status().message())
                 : t.Error("table", parsed.status().message());
    }
    if (Result<storage::TableUri> uri = storage::ParseTableUri(parsed->Example(), ""); !uri.ok()) {
      return t.Error("table", uri.status().message());
    }
    if (!parsed->fields().empty() && p->decode.format == DecodeConfig::Format::kRaw) {
      return t.Error("table",
                     "{field:...} placeholders read a field of the decoded message; format "
                     "\"raw\" has none (use json, avro or protobuf)");
    }
    if (p->table_name_rules.fallback.empty()) {
      return t.Error("table",
                     "a table template needs table_name_rules.fallback: the table of a message "
                     "whose placeholder has no value, and the carrier of the dead letters of "
                     "names `allow` refuses");
    }
    if (r.unmatched == "default") {
      return routing->Error("unmatched",
                            "unmatched = \"default\" applies to [[pipeline.route]]; "
                            "a template sends a message without a value to "
                            "table_name_rules.fallback");
    }
    first_table = p->table;
  } else {
    if (rules) {
      return t.Error("table_name_rules", "applies to a table template, not to routes");
    }
    std::set<std::string> names;
    std::set<std::string> tables;
    bool has_default = false;
    for (size_t i = 0; i < routes.size(); ++i) {
      RouteConfig route;
      FERRY_RETURN_IF_ERROR(ReadRoute(routes[i], i, &route));
      if (!names.insert(route.name).second) {
        return routes[i].Error("name", fmt::format("route name \"{}\" is used twice", route.name));
      }
      if (!tables.insert(route.table).second) {
        return routes[i].Error("table", fmt::format("table \"{}\" is the table of two routes "
                                                    "(one route per table)",
                                                    route.table));
      }
      has_default = has_default || route.name == "default";
      p->routes.push_back(std::move(route));
    }
    if (r.unmatched == "default" && !has_default) {
      return routing->Error("unmatched",
                            "unmatched = \"default\" needs a [[pipeline.route]] "
                            "named default");
    }
    bool has_where = names.size() > (has_default ? 1U : 0U);
    if (has_where && p->decode.format == DecodeConfig::Format::kRaw) {
      return t.Error("route",
                     "routes with `where` read fields of the decoded message; format \"raw\" "
                     "has none (use json, avro or protobuf)");
    }
    if (has_where && r.schema.empty()) {
      return t.Error("route",
                     "routes with `where` need [pipeline.routing] schema: the fields "
                     "their predicates read (Spark DDL, e.g. \"event_type STRING\")");
    }
    first_table = p->routes.front().table;
  }
  // A message no route matches, or whose table name is not allowed, is a bad record: it goes
  // where on_bad_record says (with `fail`, it stops the pipeline naming the message).
  const bool dead_letters = p->on_bad_record == "dead_letter";
  std::string dir = RoutingDirectory(first_table);
  if (r.positions_table.empty()) {
    r.positions_table = fmt::format("{}_ferry_routing_{}", dir, p->id);
  }
  if (dead_letters && p->dead_letter_table.empty()) {
    p->dead_letter_table = fmt::format("{}{}_dead_letter", dir, p->id);
  }
  return Status::OK();
}

}  // namespace ferry::config::internal
