#include "ferry/app/registry_schemas.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ferry::app {

namespace {

using SubjectVersion = std::pair<std::string, int32_t>;

std::string Label(const SubjectVersion& key) {
  return fmt::format("\"{}\" version {}", key.first, key.second);
}

std::string Chain(const std::vector<SubjectVersion>& keys) {
  std::vector<std::string> labels;
  labels.reserve(keys.size());
  for (const SubjectVersion& key : keys) {
    labels.push_back(Label(key));
  }
  return fmt::format("{}", fmt::join(labels, " -> "));
}

// The reference texts of one id in the order Schema::Parse takes them: depth first, each
// reference after its own references (step 3 of the header).
class ReferenceResolver {
 public:
  // `type`: the schemaType every reference must have ("AVRO", "PROTOBUF").
  ReferenceResolver(registry::SchemaRegistryClient* registry, int32_t id, std::string type)
      : registry_(registry), id_(id), type_(std::move(type)) {}

  Status Visit(const registry::SchemaReference& ref) {
    SubjectVersion key{ref.subject, ref.version};
    if (std::find(open_.begin(), open_.end(), key) != open_.end()) {
      open_.push_back(key);
      return InvalidArgument("schema id {}: the schema references form a cycle: {}", id_,
                             Chain(open_));
    }
    if (done_.count(key) > 0) {
      return Status::OK();
    }
    open_.push_back(key);
    if (open_.size() > static_cast<size_t>(RegistryWriterSchemas::kMaxReferenceDepth)) {
      return InvalidArgument("schema id {}: schema references nested deeper than {}: {}", id_,
                             RegistryWriterSchemas::kMaxReferenceDepth, Chain(open_));
    }
    auto fetched = registry_->Version(ref.subject, ref.version);
    if (!fetched.ok()) {
      // A missing reference is not a missing id: the id exists but cannot be read.
      StatusCode code = fetched.status().code() == StatusCode::kNotFound
                            ? StatusCode::kInvalidArgument
                            : fetched.status().code();
      return Status(code, fmt::format("schema id {}: reference {}: {}", id_, Chain(open_),
                                      fetched.status().message()));
    }
    const registry::RegisteredSchema& schema = **fetched;
    if (schema.schema_type != type_) {
      return InvalidArgument("schema id {}: reference {}: a {} schema, not {}", id_, Chain(open_),
                             schema.schema_type, type_ == "AVRO" ? "Avro" : "Protobuf");
    }
    for (const registry::SchemaReference& dep : schema.references) {
      FERRY_RETURN_IF_ERROR(Visit(dep));
    }
    texts_.push_back(schema.schema);
    names_.push_back(ref.name);
    order_.push_back(Label(key));
    done_.insert(key);
    open_.pop_back();
    return Status::OK();
  }

  const std::vector<std::string>& texts() const { return texts_; }
  // The import path each of texts_ was referenced by (Protobuf's import names them).
  const std::vector<std::string>& names() const { return names_; }
  // "1: "country-value" version 1, 2: ...", to tell which "reference <i>" a parse error means.
  std::string Order() const {
    std::vector<std::string> numbered;
    numbered.reserve(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) {
      numbered.push_back(fmt::format("{}: {}", i + 1, order_[i]));
    }
    return fmt::format("{}", fmt::join(numbered, ", "));
  }

 private:
  registry::SchemaRegistryClient* const registry_;
  const int32_t id_;
  const std::string type_;
  std::vector<SubjectVersion> open_;  // the path from the id to the reference being visited
  std::set<SubjectVersion> done_;
  std::vector<std::string> texts_;
  std::vector<std::string> names_;
  std::vector<std::string> order_;  // the label of each of texts_
};

}  // namespace

Result<std::shared_ptr<const transform::avro::Schema>> RegistryWriterSchemas::Get(int32_t id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = by_id_.find(id); it != by_id_.end()) {
      return it->second;
    }
  }
  // The client's messages name the id already.
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<const registry::RegisteredSchema> registered,
                         registry_->SchemaById(id));
  if (registered->schema_type != "AVRO") {
    return InvalidArgument("schema id {}: a {} schema, not Avro", id, registered->schema_type);
  }
  ReferenceResolver resolver(registry_.get(), id, "AVRO");
  for (const registry::SchemaReference& ref : registered->references) {
    FERRY_RETURN_IF_ERROR(resolver.Visit(ref));
  }
  auto parsed = transform::avro::Schema::Parse(registered->schema, resolver.texts());
  if (!parsed.ok()) {
    if (resolver.texts().empty()) {
      return parsed.status().WithContext("schema id {}", id);
    }
    return parsed.status().WithContext("schema id {} (references {})", id, resolver.Order());
  }
  auto schema = std::make_shared<const transform::avro::Schema>(std::move(*parsed));
  std::lock_guard lock(mu_);
  return by_id_.emplace(id, std::move(schema)).first->second;
}

Result<std::shared_ptr<const transform::protobuf::ProtoSchema>> RegistryProtoSchemas::Get(
    int32_t id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = by_id_.find(id); it != by_id_.end()) {
      return it->second;
    }
  }
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<const registry::RegisteredSchema> registered,
                         registry_->SchemaById(id));
  if (registered->schema_type != "PROTOBUF") {
    return InvalidArgument("schema id {}: a {} schema, not Protobuf", id, registered->schema_type);
  }
  ReferenceResolver resolver(registry_.get(), id, "PROTOBUF");
  for (const registry::SchemaReference& ref : registered->references) {
    FERRY_RETURN_IF_ERROR(resolver.Visit(ref));
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < resolver.texts().size(); ++i) {
    files.emplace_back(resolver.names()[i], resolver.texts()[i]);
  }
  // The main file's own name is never imported: one no reference can take.
  files.emplace_back(fmt::format("<schema id {}>", id), registered->schema);
  auto parsed = transform::protobuf::ProtoSchema::FromProtoFiles(files);
  if (!parsed.ok()) {
    return parsed.status().WithContext("schema id {}", id);
  }
  std::lock_guard lock(mu_);
  return by_id_.emplace(id, std::move(*parsed)).first->second;
}

}  // namespace ferry::app
