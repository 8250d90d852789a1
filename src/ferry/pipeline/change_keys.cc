#include "ferry/pipeline/change_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "ferry/columnar/column.h"

namespace ferry::pipeline {

namespace {

using columnar::TypeId;

bool KeyType(TypeId id) {
  switch (id) {
    case TypeId::kBoolean:
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64:
    case TypeId::kString:
    case TypeId::kJson:
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kDecimal:
      return true;
    default:
      return false;
  }
}

// Values that fit int64: the integers but UInt64, dates and timestamps.
bool SequenceType(TypeId id) {
  return (columnar::IsIntegerType(id) && id != TypeId::kUInt64) || id == TypeId::kDate ||
         id == TypeId::kTimestamp;
}

// An integer-like value of `column` at `row` as int64 (SequenceType and the integer key types).
int64_t AsInt64(const columnar::Column& column, int64_t row) {
  switch (column.type()->id()) {
    case TypeId::kBoolean:
    case TypeId::kUInt8:
      return static_cast<const columnar::UInt8Column&>(column).Value(row);
    case TypeId::kInt8:
      return static_cast<const columnar::Int8Column&>(column).Value(row);
    case TypeId::kInt16:
      return static_cast<const columnar::Int16Column&>(column).Value(row);
    case TypeId::kUInt16:
      return static_cast<const columnar::UInt16Column&>(column).Value(row);
    case TypeId::kInt32:
    case TypeId::kDate:
      return static_cast<const columnar::Int32Column&>(column).Value(row);
    case TypeId::kUInt32:
      return static_cast<const columnar::UInt32Column&>(column).Value(row);
    case TypeId::kUInt64:
      return static_cast<int64_t>(static_cast<const columnar::UInt64Column&>(column).Value(row));
    default:  // kInt64, kTimestamp
      return static_cast<const columnar::Int64Column&>(column).Value(row);
  }
}

void AppendFixed(std::string* out, const void* data, size_t size) {
  out->append(static_cast<const char*>(data), size);
}

void EncodeValue(const columnar::Column& column, int64_t row, std::string* out) {
  switch (column.type()->id()) {
    case TypeId::kString:
    case TypeId::kJson:
    case TypeId::kBinary:
    case TypeId::kFixedBinary: {
      std::string_view v = static_cast<const columnar::BinaryColumn&>(column).Value(row);
      auto size = static_cast<uint32_t>(v.size());
      out->push_back('s');
      AppendFixed(out, &size, sizeof(size));
      out->append(v);
      return;
    }
    case TypeId::kDecimal: {
      columnar::Int128 v = static_cast<const columnar::DecimalColumn&>(column).Value(row);
      out->push_back('d');
      AppendFixed(out, &v, sizeof(v));
      return;
    }
    default: {
      int64_t v = AsInt64(column, row);
      out->push_back('i');
      AppendFixed(out, &v, sizeof(v));
      return;
    }
  }
}

}  // namespace

Result<ChangeKeys> ChangeKeys::Create(const columnar::Schema& schema, std::vector<std::string> key,
                                      std::string sequence) {
  if (key.empty()) {
    return InvalidArgument("upsert: no key columns");
  }
  for (const std::string& name : key) {
    std::optional<int> i = schema.FieldIndex(name);
    if (!i) {
      return InvalidArgument("upsert: key column '{}' is not in the table's schema ({})", name,
                             schema.ToString());
    }
    const columnar::Field& field = schema.fields()[static_cast<size_t>(*i)];
    if (!KeyType(field.type->id())) {
      return InvalidArgument(
          "upsert: key column '{}' has type {}, which cannot be a key (use an integer, string, "
          "binary, date, timestamp or decimal column)",
          name, field.type->ToString());
    }
  }
  if (!sequence.empty()) {
    std::optional<int> i = schema.FieldIndex(sequence);
    if (!i) {
      return InvalidArgument("upsert: sequence column '{}' is not in the table's schema ({})",
                             sequence, schema.ToString());
    }
    const columnar::Field& field = schema.fields()[static_cast<size_t>(*i)];
    if (!SequenceType(field.type->id())) {
      return InvalidArgument(
          "upsert: sequence column '{}' has type {}; a sequence is an integer, date or "
          "timestamp column",
          sequence, field.type->ToString());
    }
  }
  ChangeKeys keys;
  keys.key_ = std::move(key);
  keys.sequence_ = std::move(sequence);
  return keys;
}

std::vector<std::string> ChangeKeys::ScanColumns() const {
  std::vector<std::string> columns = key_;
  if (has_sequence()) {
    columns.push_back(sequence_);
  }
  return columns;
}

Result<std::vector<std::string>> ChangeKeys::Encode(const columnar::RecordBatch& batch) const {
  std::vector<const columnar::Column*> columns;
  for (const std::string& name : key_) {
    const columnar::Column* column = batch.GetColumn(name);
    if (column == nullptr) {
      return InvalidArgument("upsert: the rows have no key column '{}'", name);
    }
    columns.push_back(column);
  }
  std::vector<std::string> keys(static_cast<size_t>(batch.num_rows()));
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    std::string& out = keys[static_cast<size_t>(row)];
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c]->IsNull(row)) {
        return InvalidArgument("upsert: row {} has a null key column '{}'", row, key_[c]);
      }
      EncodeValue(*columns[c], row, &out);
    }
  }
  return keys;
}

Result<std::vector<int64_t>> ChangeKeys::Sequences(const columnar::RecordBatch& batch) const {
  std::vector<int64_t> out;
  if (!has_sequence()) {
    return out;
  }
  const columnar::Column* column = batch.GetColumn(sequence_);
  if (column == nullptr) {
    return InvalidArgument("upsert: the rows have no sequence column '{}'", sequence_);
  }
  out.resize(static_cast<size_t>(batch.num_rows()));
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    out[static_cast<size_t>(row)] = column->IsNull(row) ? kNoSequence : AsInt64(*column, row);
  }
  return out;
}

std::vector<int64_t> CollapseChanges(const std::vector<std::string>& keys,
                                     const std::vector<int64_t>& sequences) {
  std::unordered_map<std::string_view, int64_t> winner;
  winner.reserve(keys.size());
  for (size_t row = 0; row < keys.size(); ++row) {
    auto [it, inserted] = winner.emplace(keys[row], static_cast<int64_t>(row));
    if (inserted) {
      continue;
    }
    if (sequences.empty() || sequences[row] >= sequences[static_cast<size_t>(it->second)]) {
      it->second = static_cast<int64_t>(row);
    }
  }
  std::vector<int64_t> rows;
  rows.reserve(winner.size());
  for (const auto& [key, row] : winner) {
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace ferry::pipeline
