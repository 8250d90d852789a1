// RouteSelector: which table each message of a routed pipeline goes to (router.h). Two kinds,
// as the configuration has them (docs/configuration.md, "Routing"):
//
//   TemplateSelector  the table is a TableTemplate rendered per message ({topic}, {subject},
//                     {subject:N}, {field:a.b}); a message without a value goes to the fallback
//                     table; a name `allow` refuses is a bad record carried by the fallback
//                     pipeline (its dead letters, exactly once with its positions). Fields are
//                     read from JSON text, or with RoutingFields (routing_fields.h: Avro,
//                     Protobuf), where a message that does not decode is a bad record carried
//                     by the fallback pipeline.
//   PredicateSelector static routes, each a `where` predicate (transform/expression.h) over the
//                     fields of a narrow routing schema, decoded per poll (RoutingFields; JSON
//                     unless told otherwise) and evaluated column-wise; first match wins; a
//                     message no route matches goes to the default route, or is a bad record
//                     ("no route matches") carried by the first route's pipeline.
//
// Select's errors: Unavailable when the routing decoder's writer schemas could not be fetched
// now (a schema registry that does not answer): nothing was chosen; the caller asks again later.
//
// A choice is a pure function of the message and the configuration: the same message always
// goes to the same table (docs/decisions/routing.md: a restart re-reads messages, and a message
// must meet the table that may already hold it).
//
// Thread-safety: Select is called from one thread (the router's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/pipeline/routing_fields.h"
#include "ferry/pipeline/table_template.h"
#include "ferry/source/source.h"
#include "ferry/transform/decoder.h"
#include "ferry/transform/expression.h"

namespace ferry::pipeline {

struct RouteChoice {
  // The table location: a view into the selector, valid while it lives; every choice of the same
  // table views the same characters.
  std::string_view table;
  // The selector's number for `table`: the same for every choice of it, another for each other
  // table, dense from 0 (the router indexes by it).
  uint32_t table_id = 0;
  std::string bad_reason;  // not empty: a bad record for this reason, carried by `table`
};

// Table names, each kept once with a number in order of first sight (RouteChoice's view and
// table_id).
class TableNames {
 public:
  std::pair<std::string_view, uint32_t> Intern(std::string name) {
    auto [it, added] = ids_.try_emplace(std::move(name), static_cast<uint32_t>(ids_.size()));
    return {it->first, it->second};
  }

 private:
  std::unordered_map<std::string, uint32_t> ids_;  // nodes: the views stay valid
};

class RouteSelector {
 public:
  virtual ~RouteSelector() = default;
  // One choice per message, in order.
  virtual Status Select(std::span<const source::Message> messages,
                        std::vector<RouteChoice>* out) = 0;
  // The tables known before any message (static routes, the fallback): their positions count
  // when a partition resumes.
  virtual std::vector<std::string> StaticTables() const = 0;
};

class TemplateSelector final : public RouteSelector {
 public:
  // `fallback`: the table of a message without a value, and the carrier of refused names.
  // `fields`: how {field:...} values are read (null: from JSON text, JsonFieldText); REQUIRES:
  // its schema holds every field of the template.
  TemplateSelector(TableTemplate table, std::string fallback,
                   std::unique_ptr<RoutingFields> fields = nullptr)
      : template_(std::move(table)),
        fallback_(std::move(fallback)),
        fields_(std::move(fields)),
        fallback_name_(names_.Intern(fallback_)) {}
  Status Select(std::span<const source::Message> messages, std::vector<RouteChoice>* out) override;
  std::vector<std::string> StaticTables() const override { return {fallback_}; }

 private:
  // A rendering, by the raw values it read (TableTemplate::AppendKey): the table (interned in
  // names_), and the bad reason of a refused name.
  struct Rendered {
    std::pair<std::string_view, uint32_t> table;
    std::string bad_reason;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // Cached renderings: at most this many, then the cache starts again (names_ stays).
  static constexpr size_t kMaxCached = 4096;

  const Rendered& RenderCached(const source::Message& m);

  TableTemplate template_;
  std::string fallback_;
  std::unique_ptr<RoutingFields> fields_;
  std::vector<std::optional<std::string>> values_;  // Select's scratch
  std::string key_;                                 // Select's scratch
  std::unordered_map<std::string, Rendered, KeyHash, std::equal_to<>> cache_;
  TableNames names_;  // every table chosen
  std::pair<std::string_view, uint32_t> fallback_name_;
};

struct PredicateRoute {
  std::string name;
  std::string where;  // empty: the default route (no predicate)
  std::string table;
  std::string origin;  // where `where` is written, for errors ("ferry.toml:12: route[0].where")
};

class PredicateSelector final : public RouteSelector {
 public:
  // `schema`: the fields the predicates read; `fields` decodes them (null: from JSON).
  // `unmatched_default`: a message no route matches goes to the route named "default" (else it
  // is a bad record). InvalidArgument: a predicate that does not compile or is not BOOLEAN,
  // naming its origin. REQUIRES: `fields`, when given, decodes into `schema`.
  static Result<std::unique_ptr<PredicateSelector>> Create(
      columnar::SchemaPtr schema, std::vector<PredicateRoute> routes, bool unmatched_default,
      const std::string& time_zone, std::unique_ptr<RoutingFields> fields = nullptr);
  Status Select(std::span<const source::Message> messages, std::vector<RouteChoice>* out) override;
  std::vector<std::string> StaticTables() const override;

 private:
  PredicateSelector() = default;

  columnar::SchemaPtr schema_;
  std::vector<PredicateRoute> routes_;
  TableNames names_;
  std::vector<std::pair<std::string_view, uint32_t>> route_tables_;  // routes_[i].table's name
  std::vector<std::unique_ptr<transform::Expression>> predicates_;   // null for the default
  std::unique_ptr<RoutingFields> fields_;
  int default_route_ = -1;
};

}  // namespace ferry::pipeline
