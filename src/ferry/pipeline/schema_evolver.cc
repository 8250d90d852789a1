#include "ferry/pipeline/schema_evolver.h"

#include <algorithm>
#include <cctype>

#include "ferry/columnar/column_conform.h"
#include "ferry/delta/type_widening.h"

namespace ferry::pipeline {
namespace {

using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::TypeId;
using transform::FieldObservation;

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A type reported twice for one new field (array elements, a repeated key): structs and arrays
// merge; BIGINT and DOUBLE give DOUBLE; otherwise the first stays.
DataTypePtr Combine(const DataTypePtr& a, const DataTypePtr& b) {
  if (a->Equals(*b)) {
    return a;
  }
  if ((a->id() == TypeId::kInt64 && b->id() == TypeId::kFloat64) ||
      (a->id() == TypeId::kFloat64 && b->id() == TypeId::kInt64)) {
    return DataType::Float64();
  }
  if (a->id() == TypeId::kStruct && b->id() == TypeId::kStruct) {
    std::vector<Field> fields = a->fields();
    for (const Field& f : b->fields()) {
      std::optional<size_t> i = columnar::FindFieldIgnoringCase(fields, f.name);
      if (i) {
        fields[*i].type = Combine(fields[*i].type, f.type);
      } else {
        fields.push_back(f);
      }
    }
    return DataType::Struct(std::move(fields));
  }
  if (a->id() == TypeId::kList && b->id() == TypeId::kList) {
    return DataType::List(Combine(a->element().type, b->element().type), a->element().nullable);
  }
  return a;
}

// The type at a leaf the observation names.
DataTypePtr Leaf(const DataTypePtr& existing, const FieldObservation& o, bool pending) {
  if (o.missing) {
    return Combine(existing, o.type);
  }
  if (pending && existing->id() == TypeId::kInt64 && o.type->id() == TypeId::kFloat64) {
    return o.type;  // a field this batch added as BIGINT now holds a fraction
  }
  if (columnar::CanConform(*o.type, *existing)) {
    return existing;
  }
  return o.type;  // MergeSchema decides whether the table may widen to it
}

std::vector<Field> OverlayFields(std::vector<Field> fields, const FieldObservation& o, size_t at,
                                 bool pending);

DataTypePtr OverlayType(const DataTypePtr& type, const FieldObservation& o, size_t at,
                        bool pending) {
  const std::string& segment = o.path[at];
  const bool last = at + 1 == o.path.size();
  switch (type->id()) {
    case TypeId::kStruct:
      return DataType::Struct(OverlayFields(type->fields(), o, at, pending));
    case TypeId::kList:
      if (segment != "element") {
        return type;
      }
      return DataType::List(last ? Leaf(type->element().type, o, pending)
                                 : OverlayType(type->element().type, o, at + 1, pending),
                            type->element().nullable);
    case TypeId::kMap:
      if (segment == "key") {
        return DataType::Map(last ? Leaf(type->key().type, o, pending)
                                  : OverlayType(type->key().type, o, at + 1, pending),
                             type->value().type, type->value().nullable);
      }
      if (segment == "value") {
        return DataType::Map(type->key().type,
                             last ? Leaf(type->value().type, o, pending)
                                  : OverlayType(type->value().type, o, at + 1, pending),
                             type->value().nullable);
      }
      return type;
    default:
      return type;
  }
}

std::vector<Field> OverlayFields(std::vector<Field> fields, const FieldObservation& o, size_t at,
                                 bool pending) {
  std::optional<size_t> i = columnar::FindFieldIgnoringCase(fields, o.path[at]);
  if (at + 1 == o.path.size()) {
    if (!i) {
      if (o.missing) {
        fields.push_back({.name = o.path[at], .type = o.type, .nullable = true});
      }
    } else {
      fields[*i].type = Leaf(fields[*i].type, o, pending);
    }
    return fields;
  }
  if (i) {
    fields[*i].type = OverlayType(fields[*i].type, o, at + 1, pending);
  }
  return fields;
}

// Whether `path` leads somewhere in `schema`.
bool HasPath(const std::vector<Field>& fields, const std::vector<std::string>& path, size_t at) {
  std::optional<size_t> i = columnar::FindFieldIgnoringCase(fields, path[at]);
  if (!i) {
    return false;
  }
  const DataType* type = fields[*i].type.get();
  for (size_t k = at + 1; k < path.size(); ++k) {
    if (type->id() == TypeId::kStruct) {
      return HasPath(type->fields(), path, k);
    }
    if (type->id() == TypeId::kList && path[k] == "element") {
      type = type->element().type.get();
    } else if (type->id() == TypeId::kMap && (path[k] == "key" || path[k] == "value")) {
      type = (path[k] == "key" ? type->key() : type->value()).type.get();
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

Status ConformBatch(columnar::RecordBatch* batch, const columnar::SchemaPtr& schema,
                    columnar::ConformOptions options) {
  const columnar::Schema& from = batch->schema();
  if (batch->schema_ptr() == schema || from.Equals(*schema)) {
    if (batch->schema_ptr() != schema) {
      *batch = columnar::RecordBatch(schema, batch->ReleaseColumns());
    }
    return Status::OK();
  }
  if (batch->num_rows() == 0) {
    *batch = columnar::RecordBatch::MakeEmpty(schema);
    return Status::OK();
  }
  std::vector<int> source(static_cast<size_t>(schema->num_fields()), -1);
  std::vector<bool> used(static_cast<size_t>(from.num_fields()), false);
  for (int i = 0; i < schema->num_fields(); ++i) {
    std::optional<size_t> j = columnar::FindFieldIgnoringCase(from.fields(), schema->field(i).name);
    if (!j) {
      continue;
    }
    if (!columnar::CanConform(*from.fields()[*j].type, *schema->field(i).type, options)) {
      return InvalidArgument("column '{}' is {} in the batch, which does not convert to {}",
                             schema->field(i).name, from.fields()[*j].type->ToString(),
                             schema->field(i).type->ToString());
    }
    source[static_cast<size_t>(i)] = static_cast<int>(*j);
    used[*j] = true;
  }
  for (size_t j = 0; j < used.size(); ++j) {
    if (!used[j]) {
      return InvalidArgument("column '{}' of the batch has no place in ({})", from.fields()[j].name,
                             schema->ToString());
    }
  }
  const int64_t rows = batch->num_rows();
  std::vector<std::unique_ptr<columnar::Column>> old = batch->ReleaseColumns();
  std::vector<std::unique_ptr<columnar::Column>> columns;
  for (int i = 0; i < schema->num_fields(); ++i) {
    const columnar::Field& field = schema->field(i);
    int j = source[static_cast<size_t>(i)];
    if (j < 0) {
      auto column = columnar::MakeColumn(field.type);
      column->Reserve(rows);
      for (int64_t r = 0; r < rows; ++r) {
        column->AppendNull();
      }
      columns.push_back(std::move(column));
      continue;
    }
    // CanConform held: this cannot fail.
    columns.push_back(*columnar::ConformColumn(std::move(old[static_cast<size_t>(j)]), field.type,
                                               field.name, options));
  }
  *batch = columnar::RecordBatch(schema, std::move(columns));
  return Status::OK();
}

SchemaEvolver::SchemaEvolver(SchemaEvolverOptions options, columnar::SchemaPtr table,
                             bool widening_off)
    : options_(std::move(options)) {
  SetTable(std::move(table), widening_off);
  batch_base_ = table_input_;
}

void SchemaEvolver::SetTable(columnar::SchemaPtr table, bool widening_off) {
  table_ = std::move(table);
  table_input_ = InputSchema(*table_, options_.transform.columns);
  widening_off_ = widening_off;
}

columnar::SchemaPtr SchemaEvolver::NextInput(const columnar::SchemaPtr& current) const {
  if (current == table_input_ || current->Equals(*table_input_, /*check_metadata=*/true)) {
    return current;  // the steady state: no decoder to rebuild
  }
  Result<delta::SchemaMerge> merge =
      delta::MergeSchema(*table_input_, *current,
                         {.mode = delta::SchemaEvolution::kAddColumnsAndWiden,
                          .limits = {.max_new_fields = INT64_MAX, .max_fields = INT64_MAX}});
  return merge.ok() && !merge->changed() ? table_input_ : current;
}

bool SchemaEvolver::Reserved(const std::string& name) const {
  std::string lower = Lower(name);
  for (const auto& [kind, column] : options_.metadata_columns) {
    if (Lower(column) == lower) {
      return true;
    }
  }
  for (const DerivedColumnSpec& d : options_.transform.columns) {
    if (Lower(d.name) == lower) {
      return true;
    }
  }
  return !options_.unknown_fields_column.empty() && Lower(options_.unknown_fields_column) == lower;
}

Status SchemaEvolver::CheckDerived(const columnar::SchemaPtr& input) const {
  auto stop = [](const Status& st) {
    return NotSupported("{}; ferry stops before writing anything", st.message());
  };
  Result<std::unique_ptr<TransformStage>> stage = TransformStage::Create(input, options_.transform);
  if (!stage.ok()) {
    return stop(stage.status().WithContext("the derived columns or `where` no longer type-check"));
  }
  for (const Field& d : (*stage)->derived_fields()) {
    std::optional<int> i = table_->FieldIndex(d.name);
    if (!i) {
      continue;
    }
    const DataTypePtr& held = table_->field(*i).type;
    const auto& partition = options_.partition_columns;
    bool widens = options_.mode == delta::SchemaEvolution::kAddColumnsAndWiden && !widening_off_ &&
                  delta::IsEvolutionTypeChange(*held, *d.type) &&
                  std::find(partition.begin(), partition.end(), d.name) == partition.end();
    if (!d.type->Equals(*held) && !columnar::CanConform(*d.type, *held) && !widens) {
      return stop(InvalidArgument(
          "derived column '{}' now yields {} (its input changed type), which the table's column "
          "of type {} cannot hold",
          d.name, d.type->ToString(), held->ToString()));
    }
  }
  if (options_.dedup) {
    Result<std::unique_ptr<DedupIndex>> dedup =
        DedupIndex::Create((*stage)->table_schema(), *options_.dedup);
    if (!dedup.ok()) {
      return stop(dedup.status().WithContext("the dedup key no longer type-checks"));
    }
  }
  return Status::OK();
}

Result<std::optional<SchemaEvolver::Evolution>> SchemaEvolver::Plan(
    const columnar::SchemaPtr& current, const std::vector<FieldObservation>& observations) const {
  // Fields that are null so far, and message fields named like the pipeline's own columns, are
  // seen in every message that has them: they cost no more than this check.
  auto relevant = [&](const FieldObservation& o) {
    return o.type != nullptr && !o.path.empty() && !(o.path.size() == 1 && Reserved(o.path[0]));
  };
  if (std::none_of(observations.begin(), observations.end(), relevant)) {
    return std::optional<Evolution>();
  }
  std::vector<Field> wanted = current->fields();
  for (const FieldObservation& o : observations) {
    if (relevant(o)) {
      bool pending = !HasPath(batch_base_->fields(), o.path, 0);
      wanted = OverlayFields(std::move(wanted), o, 0, pending);
    }
  }
  columnar::Schema wanted_schema(std::move(wanted));
  if (wanted_schema.Equals(*current)) {
    return std::optional<Evolution>();
  }
  Result<delta::SchemaMerge> merge =
      delta::MergeSchema(*batch_base_, wanted_schema,
                         {.mode = options_.mode,
                          .limits = options_.limits,
                          .partition_columns = options_.partition_columns});
  if (!merge.ok()) {
    return Status(merge.status().code(),
                  fmt::format("schema evolution: {}", merge.status().message()));
  }
  if (merge->schema->Equals(*current)) {
    return std::optional<Evolution>();
  }
  for (const delta::SchemaChange& change : merge->changes) {
    if (change.kind == delta::SchemaChange::Kind::kWidenType && widening_off_) {
      return InvalidArgument(
          "schema evolution: {} needs type widening, which the table turns off ({} is not "
          "\"true\")",
          change.Describe(), delta::kEnableTypeWideningProperty);
    }
  }
  FERRY_RETURN_IF_ERROR(CheckDerived(merge->schema));
  return std::optional<Evolution>(Evolution{.input = merge->schema, .changes = merge->changes});
}

}  // namespace ferry::pipeline
