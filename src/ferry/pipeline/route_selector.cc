#include "ferry/pipeline/route_selector.h"

#include <fmt/format.h>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline {

const TemplateSelector::Rendered& TemplateSelector::RenderCached(const source::Message& m) {
  key_.clear();
  template_.AppendKey(m, values_, &key_);
  if (auto hit = cache_.find(std::string_view(key_)); hit != cache_.end()) {
    return hit->second;
  }
  if (cache_.size() >= kMaxCached) {
    cache_.clear();
  }
  RenderedTable rendered = template_.Render(m, values_);
  Rendered out;
  switch (rendered.kind) {
    case RenderedTable::Kind::kTable:
      out.table = names_.Intern(std::move(rendered.table));
      break;
    case RenderedTable::Kind::kMissing:
      out.table = fallback_name_;
      break;
    case RenderedTable::Kind::kDisallowed:
      out.table = fallback_name_;
      out.bad_reason = std::move(rendered.detail);
      break;
  }
  return cache_.emplace(key_, std::move(out)).first->second;
}

Status TemplateSelector::Select(std::span<const source::Message> messages,
                                std::vector<RouteChoice>* out) {
  out->clear();
  out->reserve(messages.size());
  const std::vector<std::string>& fields = template_.fields();
  if (fields_ != nullptr && !fields.empty()) {
    FERRY_RETURN_IF_ERROR(fields_->Decode(messages));
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const source::Message& m = messages[i];
    values_.clear();
    if (fields_ != nullptr && !fields.empty() && fields_->row(i) < 0) {
      out->push_back(
          {.table = fallback_name_.first,
           .table_id = fallback_name_.second,
           .bad_reason = fmt::format("the routing field(s) of the table template do not decode "
                                     "(a field that is not a string needs its type in "
                                     "[pipeline.routing] schema): {}",
                                     fields_->error(i))});
      continue;
    }
    for (const std::string& path : fields) {
      values_.push_back(fields_ != nullptr ? fields_->Text(i, path)
                                           : JsonFieldText(m.payload, path));
    }
    const Rendered& rendered = RenderCached(m);
    out->push_back({.table = rendered.table.first,
                    .table_id = rendered.table.second,
                    .bad_reason = rendered.bad_reason});
  }
  return Status::OK();
}

Result<std::unique_ptr<PredicateSelector>> PredicateSelector::Create(
    columnar::SchemaPtr schema, std::vector<PredicateRoute> routes, bool unmatched_default,
    const std::string& time_zone, std::unique_ptr<RoutingFields> fields) {
  if (routes.empty()) {
    return InvalidArgument("a routed pipeline needs at least one route");
  }
  std::unique_ptr<PredicateSelector> s(new PredicateSelector());
  for (size_t i = 0; i < routes.size(); ++i) {
    if (routes[i].where.empty()) {
      s->predicates_.push_back(nullptr);
      if (routes[i].name == "default") {
        s->default_route_ = static_cast<int>(i);
      }
      continue;
    }
    if (schema == nullptr) {
      return InvalidArgument("{}: a route's where needs the routing schema", routes[i].origin);
    }
    FERRY_ASSIGN_OR_RETURN(
        auto predicate,
        transform::Expression::Compile(routes[i].where, *schema,
                                       {.time_zone = time_zone, .origin = routes[i].origin}));
    if (predicate->type()->id() != columnar::TypeId::kBoolean) {
      return InvalidArgument("{}: `{}` is {}, not BOOLEAN", routes[i].origin, routes[i].where,
                             predicate->type()->ToString());
    }
    s->predicates_.push_back(std::move(predicate));
  }
  if (unmatched_default && s->default_route_ < 0) {
    return InvalidArgument("unmatched = \"default\" needs a route named default");
  }
  if (!unmatched_default) {
    s->default_route_ = -1;
  }
  if (schema != nullptr && fields == nullptr) {
    FERRY_ASSIGN_OR_RETURN(auto decoder, transform::JsonDecoder::Create(schema, {}));
    fields = std::make_unique<RoutingFields>(schema, std::move(decoder));
  }
  s->fields_ = std::move(fields);
  s->schema_ = std::move(schema);
  s->routes_ = std::move(routes);
  for (const PredicateRoute& r : s->routes_) {
    s->route_tables_.push_back(s->names_.Intern(r.table));
  }
  return s;
}

std::vector<std::string> PredicateSelector::StaticTables() const {
  std::vector<std::string> tables;
  for (const PredicateRoute& r : routes_) {
    tables.push_back(r.table);
  }
  return tables;
}

Status PredicateSelector::Select(std::span<const source::Message> messages,
                                 std::vector<RouteChoice>* out) {
  out->clear();
  // Decode the predicates' fields; a message that does not decode matches no route.
  std::vector<std::unique_ptr<columnar::Column>> results;
  if (fields_ != nullptr) {
    FERRY_RETURN_IF_ERROR(fields_->Decode(messages));
    for (const auto& predicate : predicates_) {
      results.push_back(predicate != nullptr ? predicate->Evaluate(fields_->batch()) : nullptr);
    }
  }
  auto row_of = [&](size_t i) -> int64_t { return fields_ != nullptr ? fields_->row(i) : -1; };
  for (size_t i = 0; i < messages.size(); ++i) {
    int chosen = -1;
    for (size_t r = 0; r < predicates_.size() && chosen < 0; ++r) {
      if (predicates_[r] == nullptr || row_of(i) < 0) {
        continue;
      }
      const auto* c = results[r]->As<columnar::BooleanColumn>();
      if (c->IsValid(row_of(i)) && c->Value(row_of(i)) != 0) {
        chosen = static_cast<int>(r);
      }
    }
    if (chosen < 0 && default_route_ >= 0) {
      chosen = default_route_;
    }
    if (chosen >= 0) {
      const auto& [table, id] = route_tables_[static_cast<size_t>(chosen)];
      out->push_back({.table = table, .table_id = id});
      continue;
    }
    out->push_back(
        {.table = route_tables_.front().first,
         .table_id = route_tables_.front().second,
         .bad_reason = fields_ == nullptr || fields_->error(i).empty()
                           ? std::string("no route matches")
                           : fmt::format("no route matches (the routing fields do not decode: {})",
                                         fields_->error(i))});
  }
  return Status::OK();
}

}  // namespace ferry::pipeline
