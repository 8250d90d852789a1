#include "ferry/delta/file_scan.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "ferry/columnar/column.h"
#include "ferry/columnar/column_conform.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/table.h"
#include "ferry/parquet/file_reader.h"

namespace ferry::delta {

Result<std::string> RelativeFilePath(const AddFile& add) {
  FERRY_ASSIGN_OR_RETURN(std::string path, DecodeUriPath(add.path));
  if (path.empty() || path.front() == '/' || path.find(':') < path.find('/')) {
    return InvalidArgument("file {} is not under the table root", add.path);
  }
  return path;
}

Result<columnar::RecordBatch> ReadLiveFile(const Table& table, const Snapshot& snapshot,
                                           const AddFile& add,
                                           const std::vector<std::string>& columns) {
  const columnar::Schema& schema = *snapshot.schema();
  std::vector<columnar::Field> fields;
  if (columns.empty()) {
    fields = schema.fields();
  } else {
    for (const std::string& name : columns) {
      std::optional<int> index = schema.FieldIndex(name);
      if (!index) {
        return InvalidArgument("table {} has no column '{}'", table.Describe(), name);
      }
      fields.push_back(schema.field(*index));
    }
  }
  auto where = [&](const Status& st) {
    return st.WithContext("table {}, version {}, file {}", table.Describe(), snapshot.version(),
                          add.path);
  };
  if (add.deletion_vector) {
    return where(NotSupported("the file has a deletion vector, which ferry does not apply"));
  }
  auto path = RelativeFilePath(add);
  if (!path.ok()) {
    return where(path.status());
  }
  auto file = table.store().OpenForRead(table.Key(*path));
  if (!file.ok()) {
    return where(DataLoss("live file is unreadable: {}", file.status().ToString()));
  }
  auto reader = parquet::FileReader::Open(*file);
  if (!reader.ok()) {
    return where(DataLoss("live file is not valid Parquet: {}", reader.status().ToString()));
  }
  // Project the data columns the file has.
  const columnar::Schema& file_schema = *(*reader)->schema();
  std::vector<int> projection;
  std::vector<int> batch_index(fields.size(), -1);
  for (size_t i = 0; i < fields.size(); ++i) {
    const bool is_partition =
        std::find(snapshot.partition_columns().begin(), snapshot.partition_columns().end(),
                  fields[i].name) != snapshot.partition_columns().end();
    std::optional<int> index;
    if (!is_partition) {
      // Delta matches names ignoring case.
      std::optional<size_t> found =
          columnar::FindFieldIgnoringCase(file_schema.fields(), fields[i].name);
      if (found) {
        index = static_cast<int>(*found);
      }
    }
    if (index) {
      batch_index[i] = static_cast<int>(projection.size());
      projection.push_back(*index);
    }
  }
  std::vector<std::unique_ptr<columnar::Column>> data;
  int64_t num_rows = (*reader)->num_rows();
  if (!projection.empty()) {
    auto read = (*reader)->ReadAll(projection);
    if (!read.ok()) {
      return where(DataLoss("live file is unreadable: {}", read.status().ToString()));
    }
    num_rows = read->num_rows();
    data = read->ReleaseColumns();
  }
  std::vector<std::unique_ptr<columnar::Column>> out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const columnar::Field& field = fields[i];
    if (batch_index[i] >= 0) {
      std::unique_ptr<columnar::Column>& column = data[static_cast<size_t>(batch_index[i])];
      if (!field.type->Equals(*column->type())) {
        // Written before the column widened or its structs gained fields (type_widening.h).
        if (!columnar::CanConform(*column->type(), *field.type)) {
          return where(NotSupported("column '{}' has type {} in the file but {} in the table",
                                    field.name, column->type()->ToString(),
                                    field.type->ToString()));
        }
        auto conformed = columnar::ConformColumn(std::move(column), field.type, field.name);
        if (!conformed.ok()) {
          return where(conformed.status());
        }
        column = std::move(*conformed);
      }
      out.push_back(std::move(column));
      continue;
    }
    auto column = columnar::MakeColumn(field.type);
    {
      auto it = add.partition_values.find(field.name);
      const bool known = it != add.partition_values.end();
      for (int64_t row = 0; row < num_rows; ++row) {
        if (known) {
          Status st = AppendPartitionValue(it->second, column.get());
          if (!st.ok()) {
            return where(st);
          }
        } else {
          column->AppendNull();
        }
      }
    }
    out.push_back(std::move(column));
  }
  return columnar::RecordBatch(std::make_shared<const columnar::Schema>(std::move(fields)),
                               std::move(out));
}

}  // namespace ferry::delta
