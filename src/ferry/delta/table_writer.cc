#include "ferry/delta/table_writer.h"

#include <algorithm>

#include "ferry/base/failpoint.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/parquet_codec.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/uuid.h"

namespace ferry::delta {

struct TableWriter::OpenFile {
  std::string relative_path;  // decoded, relative to the table root
  std::string key;            // in the store
  PartitionValues partition_values;
  std::unique_ptr<parquet::FileWriter> writer;
  // Scans only what the Parquet writer does not compute alike; the rest comes from the file's
  // column statistics when it is closed.
  StatsCollector stats;

  OpenFile(const columnar::Schema& data_schema, const StatsOptions& options)
      : stats(data_schema, options, /*parquet_leaves=*/true) {}
};

TableWriter::TableWriter(const Table& table, Snapshot snapshot, TableWriterOptions options,
                         parquet::CompressionCodec codec, StatsOptions stats_options,
                         ColumnMappingMode mapping)
    : table_(table),
      snapshot_(std::move(snapshot)),
      options_(std::move(options)),
      codec_(codec),
      stats_options_(std::move(stats_options)),
      schema_(options_.schema != nullptr ? options_.schema : snapshot_.schema()) {
  const columnar::Schema& schema = *schema_;
  std::vector<columnar::Field> data_fields;
  for (const columnar::Field& field : schema.fields()) {
    const auto& partition = snapshot_.partition_columns();
    if (std::find(partition.begin(), partition.end(), field.name) == partition.end()) {
      data_fields.push_back(field);
    }
  }
  stats_schema_ = std::make_shared<const columnar::Schema>(data_fields);
  std::vector<columnar::Field> batch_fields = schema.fields();
  for (const columnar::Field& field : options_.hidden_columns) {
    data_fields.push_back(field);
    batch_fields.push_back(field);
  }
  batch_schema_ = options_.hidden_columns.empty()
                      ? schema_
                      : std::make_shared<const columnar::Schema>(std::move(batch_fields));
  data_schema_ = options_.hidden_columns.empty()
                     ? stats_schema_
                     : std::make_shared<const columnar::Schema>(std::move(data_fields));
  for (const std::string& column : snapshot_.partition_columns()) {
    partition_indices_.push_back(*schema.FieldIndex(column));
    partition_keys_.push_back(
        mapping == ColumnMappingMode::kNone ? column : PhysicalColumnName(schema, column));
  }
  // Column mapping: files and stats use the physical names, the batches keep the table's; the
  // hidden columns keep their own names.
  if (mapping == ColumnMappingMode::kNone) {
    file_schema_ = data_schema_;
  } else {
    std::vector<columnar::Field> file_fields = PhysicalSchema(*stats_schema_)->fields();
    for (const columnar::Field& field : options_.hidden_columns) {
      file_fields.push_back(field);
    }
    file_schema_ = std::make_shared<const columnar::Schema>(std::move(file_fields));
  }
  if (mapping != ColumnMappingMode::kNone && stats_options_.stats_columns.has_value()) {
    for (std::string& path : *stats_options_.stats_columns) {
      path = PhysicalColumnPath(*stats_schema_, path);
    }
  }
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (std::find(partition_indices_.begin(), partition_indices_.end(), i) ==
        partition_indices_.end()) {
      data_indices_.push_back(i);
    }
  }
  for (size_t i = 0; i < options_.hidden_columns.size(); ++i) {
    data_indices_.push_back(schema.num_fields() + static_cast<int>(i));
  }
}

TableWriter::~TableWriter() = default;

Result<std::unique_ptr<TableWriter>> TableWriter::Create(const Table& table,
                                                         const Snapshot& snapshot,
                                                         TableWriterOptions options) {
  if (snapshot.version() < 0) {
    return NotFound("{}: no Delta table to write to", table.Describe());
  }
  const columnar::Schema& schema = options.schema != nullptr ? *options.schema : *snapshot.schema();
  FERRY_RETURN_IF_ERROR(CheckWriteSupported(snapshot.protocol(), snapshot.metadata(), schema)
                            .WithContext("table {}", table.Describe()));
  if (schema.num_fields() == 0) {
    return NotSupported("{}: the table has no schema (its metaData has no schemaString)",
                        table.Describe());
  }
  FERRY_ASSIGN_OR_RETURN(TableProperties properties, snapshot.properties());
  FERRY_ASSIGN_OR_RETURN(parquet::CompressionCodec codec,
                         CodecFromName(options.codec_override.empty() ? properties.compression_codec
                                                                      : options.codec_override));
  if (options.target_file_size <= 0) {
    return InvalidArgument("target file size must be positive, not {}", options.target_file_size);
  }
  for (const std::string& column : snapshot.partition_columns()) {
    auto index = schema.FieldIndex(column);
    if (!index.has_value()) {
      return DataLoss("{}: partition column '{}' is not in the schema", table.Describe(), column);
    }
    FERRY_RETURN_IF_ERROR(CheckPartitionColumnType(schema.field(*index)));
  }
  StatsOptions stats;
  stats.num_indexed_cols = properties.data_skipping_num_indexed_cols;
  stats.stats_columns = properties.data_skipping_stats_columns;
  FERRY_ASSIGN_OR_RETURN(stats.always_columns,
                         ClusteringColumns(snapshot.protocol(), snapshot.domain_metadata()));
  FERRY_ASSIGN_OR_RETURN(ColumnMappingMode mapping,
                         GetColumnMappingMode(snapshot.protocol(), snapshot.metadata()));
  return std::unique_ptr<TableWriter>(
      new TableWriter(table, snapshot, std::move(options), codec, std::move(stats), mapping));
}

Status TableWriter::Fail(Status st) {
  if (!st.ok() && error_.ok()) {
    error_ = st;
  }
  return st;
}

Status TableWriter::CheckBatch(const columnar::RecordBatch& batch) const {
  const columnar::Schema& table_schema = *batch_schema_;
  const columnar::Schema& schema = batch.schema();
  if (schema.num_fields() != table_schema.num_fields()) {
    return InvalidArgument("batch has {} columns, the table {}: batch <{}>, table <{}>",
                           schema.num_fields(), table_schema.num_fields(), schema.ToString(),
                           table_schema.ToString());
  }
  for (int i = 0; i < schema.num_fields(); ++i) {
    const columnar::Field& a = schema.field(i);
    const columnar::Field& b = table_schema.field(i);
    if (a.name != b.name || !a.type->Equals(*b.type)) {
      return InvalidArgument("batch column {} is '{}' {}, the table's is '{}' {}", i, a.name,
                             a.type->ToString(), b.name, b.type->ToString());
    }
  }
  // Nulls in NOT NULL table columns (the batch's own nullability may be looser).
  for (int i = 0; i < batch.num_columns(); ++i) {
    if (!table_schema.field(i).nullable && batch.column(i).null_count() > 0) {
      return InvalidArgument("column '{}' is NOT NULL in the table but the batch holds {} nulls",
                             table_schema.field(i).name, batch.column(i).null_count());
    }
  }
  return batch.Validate();
}

Result<TableWriter::OpenFile*> TableWriter::FileFor(
    const std::string& partition_key, const std::vector<std::optional<std::string>>& log_values,
    const std::vector<std::string>& directory_values) {
  auto it = open_.find(partition_key);
  if (it != open_.end()) {
    return it->second.get();
  }
  // Stats over the file's columns without the hidden ones (they come last, so the collector's
  // column indices hold for the file's batches too).
  const bool mapped = file_schema_ != data_schema_;
  auto file = std::make_unique<OpenFile>(
      mapped ? columnar::Schema(std::vector<columnar::Field>(
                   file_schema_->fields().begin(),
                   file_schema_->fields().begin() + stats_schema_->num_fields()))
             : *stats_schema_,
      stats_options_);
  std::string extension = CodecFileExtension(codec_);
  std::string name = fmt::format("part-{:05}-{}-c000{}{}.parquet", next_file_number_++,
                                 RandomUuid(), extension.empty() ? "" : ".", extension);
  std::string directory = PartitionDirectory(partition_keys_, directory_values);
  file->relative_path = directory.empty() ? name : directory + "/" + name;
  file->key = table_.Key(file->relative_path);
  for (size_t i = 0; i < partition_keys_.size(); ++i) {
    file->partition_values[partition_keys_[i]] = log_values[i];
  }
  FERRY_ASSIGN_OR_RETURN(auto sink, table_.store().OpenAtomicWriter(file->key));
  parquet::WriterOptions parquet_options = options_.parquet;
  parquet_options.codec = codec_;
  parquet_options.match_fields_by_position = mapped;
  parquet_options.whole_statistics_bounds = true;  // the stats cut strings to a prefix
  FERRY_ASSIGN_OR_RETURN(file->writer,
                         parquet::FileWriter::Open(std::move(sink), file_schema_, parquet_options));
  OpenFile* raw = file.get();
  open_.emplace(partition_key, std::move(file));
  return raw;
}

Status TableWriter::WriteToFile(OpenFile* file, const columnar::RecordBatch& batch) {
  FERRY_RETURN_IF_ERROR(file->writer->Write(batch));
  file->stats.Update(batch);
  return Status::OK();
}

Status TableWriter::CloseFile(const std::string& partition_key) {
  auto it = open_.find(partition_key);
  std::unique_ptr<OpenFile> file = std::move(it->second);
  open_.erase(it);
  FERRY_RETURN_IF_ERROR(file->writer->Close().WithContext("data file {}", file->key));
  FERRY_RETURN_IF_ERROR(file->stats.TakeParquetStatistics(file->writer->column_statistics())
                            .WithContext("data file {}", file->key));
  FERRY_ASSIGN_OR_RETURN(storage::ObjectInfo info, table_.store().Stat(file->key));
  AddFile add;
  add.path = EncodeUriPath(file->relative_path);
  add.partition_values = std::move(file->partition_values);
  add.size = static_cast<int64_t>(info.size);
  add.modification_time = info.modification_time_ms;
  add.data_change = true;
  add.stats = file->stats.ToJson();
  adds_.push_back(std::move(add));
  return FERRY_FAILPOINT("delta.write.after_file");
}

Status TableWriter::Write(const columnar::RecordBatch& batch) {
  FERRY_RETURN_IF_ERROR(error_);
  if (finished_) {
    return Internal("TableWriter::Write after Finish");
  }
  if (batch.num_rows() == 0) {
    return Status::OK();
  }
  FERRY_RETURN_IF_ERROR(CheckBatch(batch));
  if (partition_indices_.empty() && batch.schema().Equals(*data_schema_)) {
    // The common unpartitioned case: the batch goes to the file as it is, without a copy.
    auto file = FileFor("", {}, {});
    if (!file.ok()) {
      return Fail(file.status());
    }
    FERRY_RETURN_IF_ERROR(Fail(WriteToFile(*file, batch)));
    rows_written_ += batch.num_rows();
    if ((*file)->writer->estimated_file_size() >= options_.target_file_size) {
      FERRY_RETURN_IF_ERROR(Fail(CloseFile("")));
    }
    return Status::OK();
  }
  // Group the rows by partition (one group for an unpartitioned table).
  struct Group {
    std::vector<std::optional<std::string>> log_values;
    std::vector<std::string> directory_values;
    std::vector<int64_t> rows;
  };
  std::map<std::string, Group> groups;
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    std::string key;
    Group probe;
    for (int index : partition_indices_) {
      SerializedPartitionValue v = SerializePartitionValue(batch.column(index), row);
      key += (v.log_value ? "v" + *v.log_value : std::string("n")) + '\0';
      probe.log_values.push_back(std::move(v.log_value));
      probe.directory_values.push_back(std::move(v.directory_value));
    }
    auto [it, inserted] = groups.try_emplace(std::move(key));
    if (inserted) {
      it->second.log_values = std::move(probe.log_values);
      it->second.directory_values = std::move(probe.directory_values);
    }
    it->second.rows.push_back(row);
  }
  for (auto& [key, group] : groups) {
    std::vector<std::unique_ptr<columnar::Column>> columns;
    for (int index : data_indices_) {
      columns.push_back(batch.column(index).Take(group.rows));
    }
    columnar::RecordBatch data(data_schema_, std::move(columns));
    auto file = FileFor(key, group.log_values, group.directory_values);
    if (!file.ok()) {
      return Fail(file.status());
    }
    FERRY_RETURN_IF_ERROR(Fail(WriteToFile(*file, data)));
    rows_written_ += static_cast<int64_t>(group.rows.size());
    if ((*file)->writer->estimated_file_size() >= options_.target_file_size) {
      FERRY_RETURN_IF_ERROR(Fail(CloseFile(key)));
    }
  }
  return Status::OK();
}

Result<std::vector<AddFile>> TableWriter::Finish() {
  FERRY_RETURN_IF_ERROR(error_);
  if (finished_) {
    return Internal("TableWriter::Finish called twice");
  }
  finished_ = true;
  while (!open_.empty()) {
    FERRY_RETURN_IF_ERROR(Fail(CloseFile(open_.begin()->first)));
  }
  return std::move(adds_);
}

}  // namespace ferry::delta
