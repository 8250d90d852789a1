#include "ferry/testing/table_verifier.h"

#include <algorithm>
#include <optional>

#include "ferry/columnar/column.h"
#include "ferry/columnar/column_conform.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/value_format.h"
#include "ferry/parquet/file_reader.h"

namespace ferry::testing {
namespace {

using columnar::Column;
using columnar::TypeId;

std::string RenderCell(const Column& column, int64_t row) {
  if (column.IsNull(row)) {
    return "null";
  }
  const columnar::DataType& type = *column.type();
  switch (type.id()) {
    case TypeId::kString:
    case TypeId::kJson:
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
      return std::string(column.As<columnar::BinaryColumn>()->Value(row));
    case TypeId::kDecimal:
      return delta::FormatDecimal(column.As<columnar::DecimalColumn>()->Value(row), type.scale());
    case TypeId::kDate:
      return delta::FormatDate(column.As<columnar::DateColumn>()->Value(row));
    case TypeId::kFloat32:
      return delta::FormatJavaFloat(column.As<columnar::FloatColumn>()->Value(row));
    case TypeId::kFloat64:
      return delta::FormatJavaDouble(column.As<columnar::DoubleColumn>()->Value(row));
    case TypeId::kStruct: {
      const auto* s = column.As<columnar::StructColumn>();
      std::string out = "{";
      for (int i = 0; i < s->num_children(); ++i) {
        out += (i > 0 ? "," : "") + type.fields()[static_cast<size_t>(i)].name + ":" +
               RenderCell(s->child(i), row);
      }
      return out + "}";
    }
    case TypeId::kList: {
      const auto* l = column.As<columnar::ListColumn>();
      std::string out = "[";
      for (int64_t i = l->offsets()[static_cast<size_t>(row)];
           i < l->offsets()[static_cast<size_t>(row) + 1]; ++i) {
        out += (out.size() > 1 ? "," : "") + RenderCell(l->child(), i);
      }
      return out + "]";
    }
    case TypeId::kMap: {
      const auto* m = column.As<columnar::MapColumn>();
      std::string out = "{";
      for (int64_t i = m->offsets()[static_cast<size_t>(row)];
           i < m->offsets()[static_cast<size_t>(row) + 1]; ++i) {
        out += (out.size() > 1 ? "," : "") + RenderCell(m->keys(), i) + "->" +
               RenderCell(m->values(), i);
      }
      return out + "}";
    }
    default:
      return columnar::VisitPrimitive(type.id(), [&]<typename C>(C*) -> std::string {
        auto v = column.As<C>()->Value(row);
        if constexpr (std::is_same_v<typename C::ValueType, columnar::Int128>) {
          return delta::FormatDecimal(v, 0);
        } else {
          return std::to_string(v);
        }
      });
  }
}

Result<std::string> DecodedPath(const delta::AddFile& add) {
  FERRY_ASSIGN_OR_RETURN(std::string path, delta::DecodeUriPath(add.path));
  return path;
}

}  // namespace

std::string RenderRow(const columnar::RecordBatch& batch, int64_t row) {
  std::string out;
  for (int i = 0; i < batch.num_columns(); ++i) {
    out +=
        (i > 0 ? "|" : "") + batch.schema().field(i).name + "=" + RenderCell(batch.column(i), row);
  }
  return out;
}

std::vector<std::string> RenderRows(const columnar::RecordBatch& batch) {
  std::vector<std::string> out;
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    out.push_back(RenderRow(batch, row));
  }
  return out;
}

Result<std::vector<std::string>> ReadTableRows(const delta::Table& table,
                                               const delta::Snapshot& snapshot) {
  const columnar::Schema& schema = *snapshot.schema();
  FERRY_ASSIGN_OR_RETURN(delta::ColumnMappingMode mapping,
                         delta::GetColumnMappingMode(snapshot.protocol(), snapshot.metadata()));
  std::vector<std::string> rows;
  for (const auto& [key, add] : snapshot.files()) {
    if (add.deletion_vector) {
      // Reading the whole file would show the rows the DV deletes: use delta/file_scan.h.
      return NotSupported("live file {} of version {} has a deletion vector", add.path,
                          snapshot.version());
    }
    FERRY_ASSIGN_OR_RETURN(std::string path, DecodedPath(add));
    auto file = table.store().OpenForRead(table.Key(path));
    if (!file.ok()) {
      return DataLoss("live file {} of version {}: {}", add.path, snapshot.version(),
                      file.status().ToString());
    }
    FERRY_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(*file));
    FERRY_ASSIGN_OR_RETURN(columnar::RecordBatch data, reader->ReadAll());
    // Rebuild the table's columns: data columns by name (converted to the table's type when the
    // file was written before a column widened or a struct gained fields), partition columns
    // from the log, columns the file lacks as nulls.
    const int64_t num_rows = data.num_rows();
    const columnar::SchemaPtr file_schema = data.schema_ptr();
    std::vector<std::unique_ptr<Column>> file_columns = data.ReleaseColumns();
    std::vector<std::unique_ptr<Column>> columns;
    for (const columnar::Field& field : schema.fields()) {
      std::optional<size_t> i = delta::FindFileField(file_schema->fields(), field, mapping);
      if (i.has_value() && file_columns[*i] != nullptr) {
        std::unique_ptr<Column> from = std::move(file_columns[*i]);
        if (mapping != delta::ColumnMappingMode::kNone) {
          from = delta::RenameFileColumn(std::move(from), *field.type, mapping);
        }
        Result<std::unique_ptr<Column>> column =
            columnar::ConformColumn(std::move(from), field.type, field.name);
        if (!column.ok()) {
          return DataLoss("live file {}: {}", add.path, column.status().message());
        }
        columns.push_back(std::move(*column));
        continue;
      }
      auto column = columnar::MakeColumn(field.type);
      for (int64_t row = 0; row < num_rows; ++row) {
        auto it = add.partition_values.find(mapping == delta::ColumnMappingMode::kNone
                                                ? field.name
                                                : delta::PhysicalColumnName(schema, field.name));
        FERRY_RETURN_IF_ERROR(delta::AppendPartitionValue(
            it == add.partition_values.end() ? std::nullopt : it->second, column.get()));
      }
      columns.push_back(std::move(column));
    }
    columnar::RecordBatch batch(snapshot.schema(), std::move(columns));
    for (std::string& row : RenderRows(batch)) {
      rows.push_back(std::move(row));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

Status VerifyFiles(const delta::Table& table, const delta::Snapshot& snapshot) {
  for (const auto& [key, add] : snapshot.files()) {
    FERRY_ASSIGN_OR_RETURN(std::string path, DecodedPath(add));
    auto info = table.store().Stat(table.Key(path));
    if (!info.ok()) {
      return DataLoss("live file {}: {}", add.path, info.status().ToString());
    }
    if (static_cast<int64_t>(info->size) != add.size) {
      return DataLoss("live file {}: add.size {} but the file has {} bytes", add.path, add.size,
                      info->size);
    }
    FERRY_ASSIGN_OR_RETURN(auto file, table.store().OpenForRead(table.Key(path)));
    FERRY_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(file));
    std::optional<int64_t> records =
        add.stats ? delta::StatsNumRecords(*add.stats) : std::optional<int64_t>();
    if (records != reader->num_rows()) {
      return DataLoss("live file {}: stats.numRecords {} but the footer has {} rows", add.path,
                      records ? std::to_string(*records) : "absent", reader->num_rows());
    }
  }
  return Status::OK();
}

}  // namespace ferry::testing
