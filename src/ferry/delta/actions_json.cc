#include "ferry/delta/actions_json.h"

#include <nlohmann/json.hpp>

namespace ferry::delta {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Typed access to one action object's fields; the first problem is kept in `error`.
class FieldReader {
 public:
  FieldReader(const Json& object, const char* action) : object_(object), action_(action) {}

  const Json* Find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string RequiredString(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr || !v->is_string()) {
      Fail(key, v == nullptr ? "missing" : "not a string");
      return {};
    }
    return v->get<std::string>();
  }
  std::optional<std::string> OptionalString(const char* key) {
    const Json* v = Typed(key, &Json::is_string, "not a string");
    return v == nullptr ? std::nullopt : std::optional(v->get<std::string>());
  }
  int64_t RequiredInt(const char* key) {
    if (Find(key) == nullptr) {
      Fail(key, "missing");
      return 0;
    }
    return OptionalInt(key).value_or(0);
  }
  std::optional<int64_t> OptionalInt(const char* key) {
    const Json* v = Find(key);
    if (v != nullptr && v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
      Fail(key, "out of range");
      return std::nullopt;
    }
    v = Typed(key, &Json::is_number_integer, "not an integer");
    return v == nullptr ? std::nullopt : std::optional(v->get<int64_t>());
  }
  std::optional<bool> OptionalBool(const char* key) {
    const Json* v = Typed(key, &Json::is_boolean, "not a boolean");
    return v == nullptr ? std::nullopt : std::optional(v->get<bool>());
  }
  std::optional<StringMap> OptionalStringMap(const char* key) {
    const Json* v = Typed(key, &Json::is_object, "not an object");
    if (v == nullptr) {
      return std::nullopt;
    }
    StringMap out;
    ForEachStringMember(key, *v, [&](const std::string& k, const Json* value) {
      if (value != nullptr) {
        out[k] = value->get<std::string>();
      }
    });
    return out;
  }
  PartitionValues Partitions(const char* key, bool required) {
    PartitionValues out;
    if (required && Find(key) == nullptr) {
      Fail(key, "missing");
      return out;
    }
    if (const Json* v = Typed(key, &Json::is_object, "not an object"); v != nullptr) {
      ForEachStringMember(key, *v, [&](const std::string& k, const Json* value) {
        out[k] = value == nullptr ? std::nullopt : std::optional(value->get<std::string>());
      });
    }
    return out;
  }
  std::optional<std::vector<std::string>> OptionalStringList(const char* key) {
    if (Find(key) == nullptr) {
      return std::nullopt;
    }
    std::vector<std::string> out;
    const Json* v = Typed(key, &Json::is_array, "not an array");
    if (v == nullptr) {
      return out;
    }
    for (const auto& item : *v) {
      if (!item.is_string()) {
        Fail(key, "has a non-string element");
        return out;
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  std::optional<DeletionVector> OptionalDeletionVector(const char* key) {
    const Json* v = Typed(key, &Json::is_object, "not an object");
    if (v == nullptr) {
      return std::nullopt;
    }
    FieldReader dv(*v, "deletionVector");
    DeletionVector out;
    out.storage_type = dv.RequiredString("storageType");
    out.path_or_inline_dv = dv.RequiredString("pathOrInlineDv");
    if (auto offset = dv.OptionalInt("offset")) {
      out.offset = static_cast<int32_t>(*offset);
    }
    out.size_in_bytes = static_cast<int32_t>(dv.RequiredInt("sizeInBytes"));
    out.cardinality = dv.RequiredInt("cardinality");
    out.max_row_index = dv.OptionalInt("maxRowIndex");
    if (!dv.error.empty() && error.empty()) {  // the first problem is the one named
      error = dv.error;
    }
    return out;
  }

  std::string error;

 private:
  // The field if it is present, not null and of the type `is` checks; nullptr otherwise (a field
  // of another type is also reported as `key` `what`).
  const Json* Typed(const char* key, bool (Json::*is)() const noexcept, const char* what) {
    const Json* v = Find(key);
    if (v != nullptr && !(v->*is)()) {
      Fail(key, what);
      return nullptr;
    }
    return v;
  }
  // Calls each(name, value) for each member of `object` whose value is a string (value) or null
  // (nullptr); a member of another type is reported as `key` "has a non-string value".
  template <typename Each>
  void ForEachStringMember(const char* key, const Json& object, Each each) {
    for (const auto& [k, value] : object.items()) {
      if (value.is_string()) {
        each(k, &value);
      } else if (value.is_null()) {
        each(k, nullptr);
      } else {
        Fail(key, "has a non-string value");
      }
    }
  }
  void Fail(const char* key, const char* what) {
    if (error.empty()) {
      error = fmt::format("{}.{} is {}", action_, key, what);
    }
  }
  const Json& object_;
  const char* action_;
};

Protocol ReadProtocol(FieldReader& r) {
  Protocol p;
  p.min_reader_version = static_cast<int32_t>(r.RequiredInt("minReaderVersion"));
  p.min_writer_version = static_cast<int32_t>(r.RequiredInt("minWriterVersion"));
  p.reader_features = r.OptionalStringList("readerFeatures");
  p.writer_features = r.OptionalStringList("writerFeatures");
  return p;
}

Metadata ReadMetadata(const Json& object, FieldReader& r) {
  Metadata m;
  m.id = r.RequiredString("id");
  m.name = r.OptionalString("name");
  m.description = r.OptionalString("description");
  if (const Json* format = r.Find("format"); format != nullptr && format->is_object()) {
    FieldReader f(*format, "metaData.format");
    m.format.provider = f.OptionalString("provider").value_or("parquet");
    m.format.options = f.OptionalStringMap("options").value_or(StringMap{});
    if (!f.error.empty() && r.error.empty()) {  // the first problem is the one named
      r.error = f.error;
    }
  }
  // Required by the protocol, but tables written by early Delta test tools lack it (golden
  // tables canonicalized-paths-*, deltalog-commit-info): read as "no schema".
  m.schema_string = r.OptionalString("schemaString").value_or("");
  m.partition_columns =
      r.OptionalStringList("partitionColumns").value_or(std::vector<std::string>{});
  m.configuration = r.OptionalStringMap("configuration").value_or(StringMap{});
  m.created_time = r.OptionalInt("createdTime");
  (void)object;
  return m;
}

// The fields `add` and `remove` share after their own, in the protocol's order.
template <typename File>
void ReadFileTail(FieldReader& r, File* file) {
  file->stats = r.OptionalString("stats");
  file->tags = r.OptionalStringMap("tags");
  file->deletion_vector = r.OptionalDeletionVector("deletionVector");
  file->base_row_id = r.OptionalInt("baseRowId");
  file->default_row_commit_version = r.OptionalInt("defaultRowCommitVersion");
}

AddFile ReadAdd(FieldReader& r) {
  AddFile a;
  a.path = r.RequiredString("path");
  a.partition_values = r.Partitions("partitionValues", /*required=*/true);
  a.size = r.RequiredInt("size");
  a.modification_time = r.OptionalInt("modificationTime").value_or(0);
  a.data_change = r.OptionalBool("dataChange").value_or(true);
  ReadFileTail(r, &a);
  a.clustering_provider = r.OptionalString("clusteringProvider");
  return a;
}

RemoveFile ReadRemove(FieldReader& r) {
  RemoveFile x;
  x.path = r.RequiredString("path");
  x.deletion_timestamp = r.OptionalInt("deletionTimestamp");
  x.data_change = r.OptionalBool("dataChange").value_or(true);
  x.extended_file_metadata = r.OptionalBool("extendedFileMetadata");
  if (r.Find("partitionValues") != nullptr) {
    x.partition_values = r.Partitions("partitionValues", false);
  }
  x.size = r.OptionalInt("size");
  ReadFileTail(r, &x);
  return x;
}

CommitInfo ReadCommitInfo(const Json& object, FieldReader& r) {
  CommitInfo c;
  c.timestamp = r.OptionalInt("timestamp");
  c.in_commit_timestamp = r.OptionalInt("inCommitTimestamp");
  c.operation = r.OptionalString("operation");
  c.engine_info = r.OptionalString("engineInfo");
  c.txn_id = r.OptionalString("txnId");
  c.is_blind_append = r.OptionalBool("isBlindAppend");
  c.json = object.dump(-1, ' ', false, Json::error_handler_t::replace);
  // commitInfo is free-form: a field of an unexpected type is not corruption.
  r.error.clear();
  return c;
}

std::optional<Action> ReadAction(const std::string& name, const Json& object, FieldReader& r) {
  if (name == "protocol") {
    return ReadProtocol(r);
  }
  if (name == "metaData") {
    return ReadMetadata(object, r);
  }
  if (name == "add") {
    return ReadAdd(r);
  }
  if (name == "remove") {
    return ReadRemove(r);
  }
  if (name == "txn") {
    return Txn{r.RequiredString("appId"), r.RequiredInt("version"), r.OptionalInt("lastUpdated")};
  }
  if (name == "domainMetadata") {
    return DomainMetadata{r.RequiredString("domain"), r.RequiredString("configuration"),
                          r.OptionalBool("removed").value_or(false)};
  }
  if (name == "commitInfo") {
    return ReadCommitInfo(object, r);
  }
  if (name == "cdc") {
    return AddCdcFile{r.RequiredString("path"), r.Partitions("partitionValues", false),
                      r.OptionalInt("size").value_or(0)};
  }
  if (name == "checkpointMetadata") {
    return CheckpointMetadata{r.RequiredInt("version"), r.OptionalStringMap("tags")};
  }
  if (name == "sidecar") {
    return Sidecar{r.RequiredString("path"), r.RequiredInt("sizeInBytes"),
                   r.OptionalInt("modificationTime").value_or(0), r.OptionalStringMap("tags")};
  }
  return std::nullopt;
}

// --- writing ---

void PutStringMap(OrderedJson* out, const char* key, const StringMap& map) {
  OrderedJson object = OrderedJson::object();
  for (const auto& [k, v] : map) {
    object[k] = v;
  }
  (*out)[key] = std::move(object);
}

OrderedJson PartitionsJson(const PartitionValues& values) {
  OrderedJson object = OrderedJson::object();
  for (const auto& [k, v] : values) {
    object[k] = v.has_value() ? OrderedJson(*v) : OrderedJson(nullptr);
  }
  return object;
}

OrderedJson DeletionVectorJson(const DeletionVector& dv) {
  OrderedJson out;
  out["storageType"] = dv.storage_type;
  out["pathOrInlineDv"] = dv.path_or_inline_dv;
  if (dv.offset) {
    out["offset"] = *dv.offset;
  }
  out["sizeInBytes"] = dv.size_in_bytes;
  out["cardinality"] = dv.cardinality;
  if (dv.max_row_index) {
    out["maxRowIndex"] = *dv.max_row_index;
  }
  return out;
}

template <typename T>
void PutOptional(OrderedJson* out, const char* key, const std::optional<T>& value) {
  if (value.has_value()) {
    (*out)[key] = *value;
  }
}

void PutOptionalStringMap(OrderedJson* out, const char* key, const std::optional<StringMap>& map) {
  if (map.has_value()) {
    PutStringMap(out, key, *map);
  }
}

// The fields `add` and `remove` share after their own (ReadFileTail's).
template <typename File>
void PutFileTail(OrderedJson* out, const File& file) {
  PutOptional(out, "stats", file.stats);
  PutOptionalStringMap(out, "tags", file.tags);
  if (file.deletion_vector) {
    (*out)["deletionVector"] = DeletionVectorJson(*file.deletion_vector);
  }
  PutOptional(out, "baseRowId", file.base_row_id);
  PutOptional(out, "defaultRowCommitVersion", file.default_row_commit_version);
}

struct ActionWriter {
  OrderedJson operator()(const Protocol& p) const {
    OrderedJson out;
    out["minReaderVersion"] = p.min_reader_version;
    out["minWriterVersion"] = p.min_writer_version;
    PutOptional(&out, "readerFeatures", p.reader_features);
    PutOptional(&out, "writerFeatures", p.writer_features);
    return out;
  }
  OrderedJson operator()(const Metadata& m) const {
    OrderedJson out;
    out["id"] = m.id;
    PutOptional(&out, "name", m.name);
    PutOptional(&out, "description", m.description);
    OrderedJson format;
    format["provider"] = m.format.provider;
    PutStringMap(&format, "options", m.format.options);
    out["format"] = std::move(format);
    out["schemaString"] = m.schema_string;
    out["partitionColumns"] = m.partition_columns;
    PutStringMap(&out, "configuration", m.configuration);
    PutOptional(&out, "createdTime", m.created_time);
    return out;
  }
  OrderedJson operator()(const AddFile& a) const {
    OrderedJson out;
    out["path"] = a.path;
    out["partitionValues"] = PartitionsJson(a.partition_values);
    out["size"] = a.size;
    out["modificationTime"] = a.modification_time;
    out["dataChange"] = a.data_change;
    PutFileTail(&out, a);
    PutOptional(&out, "clusteringProvider", a.clustering_provider);
    return out;
  }
  OrderedJson operator()(const RemoveFile& x) const {
    OrderedJson out;
    out["path"] = x.path;
    PutOptional(&out, "deletionTimestamp", x.deletion_timestamp);
    out["dataChange"] = x.data_change;
    PutOptional(&out, "extendedFileMetadata", x.extended_file_metadata);
    if (x.partition_values) {
      out["partitionValues"] = PartitionsJson(*x.partition_values);
    }
    PutOptional(&out, "size", x.size);
    PutFileTail(&out, x);
    return out;
  }
  OrderedJson operator()(const Txn& t) const {
    OrderedJson out;
    out["appId"] = t.app_id;
    out["version"] = t.version;
    PutOptional(&out, "lastUpdated", t.last_updated);
    return out;
  }
  OrderedJson operator()(const DomainMetadata& d) const {
    OrderedJson out;
    out["domain"] = d.domain;
    out["configuration"] = d.configuration;
    out["removed"] = d.removed;
    return out;
  }
  OrderedJson operator()(const CommitInfo& c) const {
    OrderedJson out = OrderedJson::parse(c.json, nullptr, /*allow_exceptions=*/false);
    return out.is_object() ? out : OrderedJson::object();
  }
  OrderedJson operator()(const AddCdcFile& c) const {
    OrderedJson out;
    out["path"] = c.path;
    out["partitionValues"] = PartitionsJson(c.partition_values);
    out["size"] = c.size;
    out["dataChange"] = false;
    return out;
  }
  OrderedJson operator()(const CheckpointMetadata& c) const {
    OrderedJson out;
    out["version"] = c.version;
    PutOptionalStringMap(&out, "tags", c.tags);
    return out;
  }
  OrderedJson operator()(const Sidecar& s) const {
    OrderedJson out;
    out["path"] = s.path;
    out["sizeInBytes"] = s.size_in_bytes;
    out["modificationTime"] = s.modification_time;
    PutOptionalStringMap(&out, "tags", s.tags);
    return out;
  }
};

}  // namespace

Result<std::optional<Action>> ParseActionLine(std::string_view line) {
  Json doc = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return DataLoss("not a JSON object (torn or corrupt line)");
  }
  for (const auto& [name, value] : doc.items()) {
    if (!value.is_object()) {
      continue;
    }
    FieldReader reader(value, name.c_str());
    std::optional<Action> action = ReadAction(name, value, reader);
    if (!reader.error.empty()) {
      return DataLoss("{}", reader.error);
    }
    if (action.has_value()) {
      return action;
    }
  }
  return std::optional<Action>();
}

Result<std::vector<Action>> ParseActions(std::string_view text) {
  std::vector<Action> actions;
  size_t start = 0;
  int line_number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    line_number++;
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      continue;
    }
    auto action = ParseActionLine(line);
    if (!action.ok()) {
      return action.status().WithContext("line {}", line_number);
    }
    if (action->has_value()) {
      actions.push_back(std::move(**action));
    }
  }
  return actions;
}

std::string ActionToJson(const Action& action) {
  OrderedJson line;
  line[ActionName(action)] = std::visit(ActionWriter{}, action);
  return line.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

std::string ActionsToJson(const std::vector<Action>& actions) {
  std::string out;
  for (const Action& action : actions) {
    out += ActionToJson(action);
    out.push_back('\n');
  }
  return out;
}

}  // namespace ferry::delta
