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
    const Json* v = Find(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_string()) {
      Fail(key, "not a string");
      return std::nullopt;
    }
    return v->get<std::string>();
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
    if (v == nullptr) {
      return std::nullopt;
    }
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
      Fail(key, "out of range");
      return std::nullopt;
    }
    if (v->is_number_integer()) {
      return v->get<int64_t>();
    }
    Fail(key, "not an integer");
    return std::nullopt;
  }
  std::optional<bool> OptionalBool(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_boolean()) {
      Fail(key, "not a boolean");
      return std::nullopt;
    }
    return v->get<bool>();
  }
  std::optional<StringMap> OptionalStringMap(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_object()) {
      Fail(key, "not an object");
      return std::nullopt;
    }
    StringMap out;
    for (const auto& [k, value] : v->items()) {
      if (value.is_string()) {
        out[k] = value.get<std::string>();
      } else if (!value.is_null()) {
        Fail(key, "has a non-string value");
      }
    }
    return out;
  }
  PartitionValues Partitions(const char* key, bool required) {
    const Json* v = Find(key);
    PartitionValues out;
    if (v == nullptr) {
      if (required) {
        Fail(key, "missing");
      }
      return out;
    }
    if (!v->is_object()) {
      Fail(key, "not an object");
      return out;
    }
    for (const auto& [k, value] : v->items()) {
      if (value.is_string()) {
        out[k] = value.get<std::string>();
      } else if (value.is_null()) {
        out[k] = std::nullopt;
      } else {
        Fail(key, "has a non-string value");
      }
    }
    return out;
  }
  std::optional<std::vector<std::string>> OptionalStringList(const char* key) {
    const Json* v = Find(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    std::vector<std::string> out;
    if (!v->is_array()) {
      Fail(key, "not an array");
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
    const Json* v = Find(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_object()) {
      Fail(key, "not an object");
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
    if (!dv.error.empty()) {
      error = dv.error;
    }
    return out;
  }

  std::string error;

 private:
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
    if (!f.error.empty()) {
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

AddFile ReadAdd(FieldReader& r) {
  AddFile a;
  a.path = r.RequiredString("path");
  a.partition_values = r.Partitions("partitionValues", /*required=*/true);
  a.size = r.RequiredInt("size");
  a.modification_time = r.OptionalInt("modificationTime").value_or(0);
  a.data_change = r.OptionalBool("dataChange").value_or(true);
  a.stats = r.OptionalString("stats");
  a.tags = r.OptionalStringMap("tags");
  a.deletion_vector = r.OptionalDeletionVector("deletionVector");
  a.base_row_id = r.OptionalInt("baseRowId");
  a.default_row_commit_version = r.OptionalInt("defaultRowCommitVersion");
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
  x.stats = r.OptionalString("stats");
  x.tags = r.OptionalStringMap("tags");
  x.deletion_vector = r.OptionalDeletionVector("deletionVector");
  x.base_row_id = r.OptionalInt("baseRowId");
  x.default_row_commit_version = r.OptionalInt("defaultRowCommitVersion");
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
    PutOptional(&out, "stats", a.stats);
    if (a.tags) {
      PutStringMap(&out, "tags", *a.tags);
    }
    if (a.deletion_vector) {
      out["deletionVector"] = DeletionVectorJson(*a.deletion_vector);
    }
    PutOptional(&out, "baseRowId", a.base_row_id);
    PutOptional(&out, "defaultRowCommitVersion", a.default_row_commit_version);
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
    PutOptional(&out, "stats", x.stats);
    if (x.tags) {
      PutStringMap(&out, "tags", *x.tags);
    }
    if (x.deletion_vector) {
      out["deletionVector"] = DeletionVectorJson(*x.deletion_vector);
    }
    PutOptional(&out, "baseRowId", x.base_row_id);
    PutOptional(&out, "defaultRowCommitVersion", x.default_row_commit_version);
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
    if (c.tags) {
      PutStringMap(&out, "tags", *c.tags);
    }
    return out;
  }
  OrderedJson operator()(const Sidecar& s) const {
    OrderedJson out;
    out["path"] = s.path;
    out["sizeInBytes"] = s.size_in_bytes;
    out["modificationTime"] = s.modification_time;
    if (s.tags) {
      PutStringMap(&out, "tags", *s.tags);
    }
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
