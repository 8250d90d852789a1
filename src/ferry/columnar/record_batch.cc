#include "ferry/columnar/record_batch.h"

namespace ferry::columnar {

namespace {

// Checks lengths of nested children and nulls in non-nullable positions. `parent_valid` is null
// when every row of the parent is valid; otherwise it says which rows are placeholders.
Status ValidateColumn(const Column& col, const Field& field, const std::string& path,
                      const std::vector<uint8_t>* parent_valid) {
  if (!col.type()->Equals(*field.type)) {
    return Internal("column {}: type {} does not match the schema's {}", path,
                    col.type()->ToString(), field.type->ToString());
  }
  if (!field.nullable && col.null_count() > 0) {
    for (int64_t i = 0; i < col.length(); i++) {
      bool placeholder = parent_valid != nullptr && (*parent_valid)[static_cast<size_t>(i)] == 0;
      if (col.IsNull(i) && !placeholder) {
        return InvalidArgument("column {}: null in row {} of a NOT NULL field", path, i);
      }
    }
  }
  switch (col.type_id()) {
    case TypeId::kStruct: {
      const auto& s = *col.As<StructColumn>();
      for (int c = 0; c < s.num_children(); c++) {
        const Field& f = field.type->fields()[static_cast<size_t>(c)];
        if (s.child(c).length() != s.length()) {
          return Internal("column {}.{}: {} rows, struct has {}", path, f.name, s.child(c).length(),
                          s.length());
        }
        FERRY_RETURN_IF_ERROR(ValidateColumn(s.child(c), f, path + "." + f.name, &s.validity()));
      }
      break;
    }
    case TypeId::kList: {
      const auto& l = *col.As<ListColumn>();
      if (l.offsets().back() != l.child().length()) {
        return Internal("column {}: offsets end at {}, child has {} rows", path, l.offsets().back(),
                        l.child().length());
      }
      FERRY_RETURN_IF_ERROR(
          ValidateColumn(l.child(), field.type->element(), path + ".element", nullptr));
      break;
    }
    case TypeId::kMap: {
      const auto& m = *col.As<MapColumn>();
      if (m.offsets().back() != m.keys().length() || m.keys().length() != m.values().length()) {
        return Internal("column {}: map offsets and entries disagree", path);
      }
      FERRY_RETURN_IF_ERROR(ValidateColumn(m.keys(), field.type->key(), path + ".key", nullptr));
      FERRY_RETURN_IF_ERROR(
          ValidateColumn(m.values(), field.type->value(), path + ".value", nullptr));
      break;
    }
    default:
      break;
  }
  return Status::OK();
}

}  // namespace

RecordBatch::RecordBatch(SchemaPtr schema, std::vector<std::unique_ptr<Column>> columns)
    : schema_(std::move(schema)), columns_(std::move(columns)) {
  FERRY_CHECK(static_cast<int>(columns_.size()) == schema_->num_fields());
}

RecordBatch RecordBatch::MakeEmpty(SchemaPtr schema) {
  std::vector<std::unique_ptr<Column>> columns;
  for (const Field& f : schema->fields()) {
    columns.push_back(MakeColumn(f.type));
  }
  return RecordBatch(std::move(schema), std::move(columns));
}

const Column* RecordBatch::GetColumn(std::string_view name) const {
  std::optional<int> i = schema_->FieldIndex(name);
  return i ? columns_[static_cast<size_t>(*i)].get() : nullptr;
}

Status RecordBatch::Validate() const {
  for (size_t i = 0; i < columns_.size(); i++) {
    const Field& f = schema_->field(static_cast<int>(i));
    if (columns_[i]->length() != num_rows()) {
      return Internal("column {}: {} rows, batch has {}", f.name, columns_[i]->length(),
                      num_rows());
    }
    FERRY_RETURN_IF_ERROR(ValidateColumn(*columns_[i], f, f.name, nullptr));
  }
  return Status::OK();
}

RecordBatch RecordBatch::Take(std::span<const int64_t> indices) const {
  std::vector<std::unique_ptr<Column>> out;
  out.reserve(columns_.size());
  for (const auto& c : columns_) {
    out.push_back(c->Take(indices));
  }
  return RecordBatch(schema_, std::move(out));
}

int64_t RecordBatch::ByteSize() const {
  int64_t n = 0;
  for (const auto& c : columns_) {
    n += c->ByteSize();
  }
  return n;
}

void RecordBatch::Clear() {
  for (auto& c : columns_) {
    c->Clear();
  }
}

}  // namespace ferry::columnar
