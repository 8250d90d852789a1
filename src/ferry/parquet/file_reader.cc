#include "ferry/parquet/file_reader.h"

#include "ferry/base/endian.h"
#include "ferry/base/file.h"
#include "ferry/parquet/record_assembly.h"

namespace ferry::parquet {
namespace {

constexpr uint64_t kTailSize = 8;  // footer length + magic

}  // namespace

Result<std::unique_ptr<FileReader>> FileReader::Open(std::shared_ptr<const RandomAccessFile> file,
                                                     ReaderOptions options) {
  std::unique_ptr<FileReader> reader(new FileReader(std::move(file), options));
  FERRY_RETURN_IF_ERROR(reader->ReadFooter().WithContext(reader->name()));
  return reader;
}

Result<std::unique_ptr<FileReader>> FileReader::OpenLocal(const std::string& path,
                                                          ReaderOptions options) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<LocalRandomAccessFile> file,
                         LocalRandomAccessFile::Open(path));
  return Open(std::shared_ptr<const RandomAccessFile>(std::move(file)), options);
}

Status FileReader::ReadFooter() {
  uint64_t size = file_->size();
  if (size < 4 + kTailSize) {
    return DataLoss("a file of {} bytes is too small to be Parquet", size);
  }
  std::string tail;
  FERRY_RETURN_IF_ERROR(file_->ReadAt(size - kTailSize, kTailSize, &tail));
  std::string head;
  FERRY_RETURN_IF_ERROR(file_->ReadAt(0, 4, &head));
  if (tail.substr(4) == "PARE") {
    return NotSupported("the file is encrypted (PARE footer)");
  }
  if (tail.substr(4) != kParquetMagic || head != kParquetMagic) {
    return DataLoss("not a Parquet file (no PAR1 magic at its start and end)");
  }
  uint32_t footer_len = LoadLE<uint32_t>(tail.data());
  if (footer_len > size - 4 - kTailSize) {
    return DataLoss("the footer length {} runs past the start of the {}-byte file", footer_len,
                    size);
  }
  if (footer_len > static_cast<uint64_t>(options_.max_footer_size)) {
    return ResourceExhausted("the footer of {} bytes is larger than ReaderOptions::max_footer_size",
                             footer_len);
  }
  layout_.data_end = size - kTailSize - footer_len;
  std::string footer;
  FERRY_RETURN_IF_ERROR(file_->ReadAt(layout_.data_end, footer_len, &footer));
  auto metadata = ParseFileMetaData(footer);
  if (!metadata.ok()) {
    return metadata.status().WithContext("footer at offset {}", layout_.data_end);
  }
  metadata_ = std::move(*metadata);
  layout_.short_chunk_sizes = WriterSizesChunksShort(metadata_.created_by.value_or(""));
  if (metadata_.encrypted) {
    return NotSupported("the file is encrypted (encryption_algorithm in the footer)");
  }
  FERRY_ASSIGN_OR_RETURN(file_schema_, SchemaFromParquet(metadata_.schema));
  for (const RowGroup& rg : metadata_.row_groups) {
    if (rg.num_rows < 0 || __builtin_add_overflow(num_rows_, rg.num_rows, &num_rows_)) {
      return DataLoss("row group row counts are negative or overflow");
    }
  }
  return Status::OK();
}

Result<std::vector<int>> FileReader::Projection(std::span<const int> columns) const {
  std::vector<int> fields;
  if (columns.empty()) {
    for (int i = 0; i < schema()->num_fields(); i++) {
      fields.push_back(i);
    }
    return fields;
  }
  for (int c : columns) {
    if (c < 0 || c >= schema()->num_fields()) {
      return InvalidArgument("{}: no top-level field {} (the file has {})", name(), c,
                             schema()->num_fields());
    }
    fields.push_back(c);
  }
  return fields;
}

Result<std::vector<int>> FileReader::FieldIndices(const std::vector<std::string>& names) const {
  std::vector<int> out;
  for (const std::string& n : names) {
    std::optional<int> i = schema()->FieldIndex(n);
    if (!i.has_value()) {
      return NotFound("{}: no top-level field '{}'", name(), n);
    }
    out.push_back(*i);
  }
  return out;
}

columnar::SchemaPtr FileReader::ProjectedSchema(const std::vector<int>& fields) const {
  std::vector<columnar::Field> out;
  out.reserve(fields.size());
  for (int f : fields) {
    out.push_back(schema()->field(f));
  }
  return std::make_shared<columnar::Schema>(std::move(out));
}

Result<columnar::RecordBatch> FileReader::ReadRowGroup(int row_group,
                                                       std::span<const int> columns) {
  if (row_group < 0 || row_group >= num_row_groups()) {
    return InvalidArgument("{}: no row group {} (the file has {})", name(), row_group,
                           num_row_groups());
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<int> fields, Projection(columns));
  columnar::SchemaPtr schema = ProjectedSchema(fields);
  std::vector<std::unique_ptr<columnar::Column>> out;
  for (const auto& f : schema->fields()) {
    out.push_back(columnar::MakeColumn(f.type));
  }
  DecodeBudget budget(options_.max_batch_bytes);
  FERRY_RETURN_IF_ERROR(ReadRowGroupInto(row_group, fields, &out, &budget));
  return columnar::RecordBatch(std::move(schema), std::move(out));
}

Result<columnar::RecordBatch> FileReader::ReadAll(std::span<const int> columns) {
  FERRY_ASSIGN_OR_RETURN(std::vector<int> fields, Projection(columns));
  columnar::SchemaPtr schema = ProjectedSchema(fields);
  std::vector<std::unique_ptr<columnar::Column>> out;
  for (const auto& f : schema->fields()) {
    out.push_back(columnar::MakeColumn(f.type));
  }
  DecodeBudget budget(options_.max_batch_bytes);
  int64_t rows = 0;
  for (int rg = 0; rg < num_row_groups(); rg++) {
    rows += std::max<int64_t>(0, metadata_.row_groups[static_cast<size_t>(rg)].num_rows);
    if (rows > options_.max_batch_rows) {
      return ResourceExhausted("{}: more than ReaderOptions::max_batch_rows ({}) rows", name(),
                               options_.max_batch_rows);
    }
    FERRY_RETURN_IF_ERROR(ReadRowGroupInto(rg, fields, &out, &budget));
  }
  return columnar::RecordBatch(std::move(schema), std::move(out));
}

Status FileReader::ReadBatches(std::span<const int> columns, int64_t max_rows, const BatchFn& fn) {
  if (max_rows <= 0) {
    return InvalidArgument("{}: batches of {} rows", name(), max_rows);
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<int> fields, Projection(columns));
  columnar::SchemaPtr schema = ProjectedSchema(fields);
  bool flat = true;
  for (int f : fields) {
    const AssemblyNode& node = file_schema_.fields[static_cast<size_t>(f)];
    flat = flat && node.kind == AssemblyNode::Kind::kLeaf &&
           file_schema_.leaves[static_cast<size_t>(node.first_leaf)].max_rep == 0;
  }
  std::vector<std::unique_ptr<columnar::Column>> out;
  for (const auto& f : schema->fields()) {
    out.push_back(columnar::MakeColumn(f.type));
  }
  columnar::RecordBatch batch(schema, std::move(out));
  for (int rg = 0; rg < num_row_groups(); rg++) {
    const RowGroup& group = metadata_.row_groups[static_cast<size_t>(rg)];
    if (flat && group.num_rows > max_rows && group.columns.size() == file_schema_.leaves.size()) {
      FERRY_RETURN_IF_ERROR(StreamRowGroup(rg, fields, max_rows, &batch, fn));
      continue;
    }
    std::vector<std::unique_ptr<columnar::Column>> reused = batch.ReleaseColumns();
    for (auto& column : reused) {
      column->Clear();
    }
    DecodeBudget budget(options_.max_batch_bytes);
    FERRY_RETURN_IF_ERROR(ReadRowGroupInto(rg, fields, &reused, &budget));
    batch = columnar::RecordBatch(schema, std::move(reused));
    FERRY_RETURN_IF_ERROR(fn(batch));
  }
  return Status::OK();
}

Status FileReader::StreamRowGroup(int row_group, const std::vector<int>& fields, int64_t max_rows,
                                  columnar::RecordBatch* batch, const BatchFn& fn) {
  const RowGroup& rg = metadata_.row_groups[static_cast<size_t>(row_group)];
  if (rg.num_rows > options_.max_batch_rows) {
    return ResourceExhausted("{}: row group {} has {} rows (ReaderOptions::max_batch_rows is {})",
                             name(), row_group, rg.num_rows, options_.max_batch_rows);
  }
  if (field_scratch_.size() < fields.size()) {
    field_scratch_.resize(fields.size());
  }
  DecodeBudget budget(options_.max_batch_bytes);
  std::vector<ColumnChunkReader> readers;
  std::vector<const LeafColumn*> leaves;
  readers.reserve(fields.size());
  auto where = [&](size_t i) {
    return fmt::format("{}: row group {}, column {}", name(), row_group, leaves[i]->dotted_path);
  };
  for (size_t i = 0; i < fields.size(); i++) {
    const AssemblyNode& node = file_schema_.fields[static_cast<size_t>(fields[i])];
    leaves.push_back(&file_schema_.leaves[static_cast<size_t>(node.first_leaf)]);
    readers.emplace_back(file_.get(), layout_, leaves[i], &options_, &budget, &field_scratch_[i]);
    FERRY_RETURN_IF_ERROR(readers[i]
                              .Begin(rg.columns[static_cast<size_t>(node.first_leaf)])
                              .WithContext("{}", where(i)));
  }
  for (int64_t done = 0; done < rg.num_rows;) {
    const int64_t want = std::min(max_rows, rg.num_rows - done);
    budget = DecodeBudget(options_.max_batch_bytes);
    for (size_t i = 0; i < readers.size(); i++) {
      columnar::Column* column = batch->mutable_column(static_cast<int>(i));
      column->Clear();
      FERRY_RETURN_IF_ERROR(readers[i].ReadRows(column, want).WithContext("{}", where(i)));
      if (column->length() < want) {
        return DataLoss("{}: the chunk holds {} rows, the row group {}", where(i),
                        done + column->length(), rg.num_rows);
      }
    }
    done += want;
    FERRY_RETURN_IF_ERROR(fn(*batch));
  }
  for (size_t i = 0; i < readers.size(); i++) {
    if (!readers[i].done()) {
      return DataLoss("{}: the chunk holds more rows than the row group's {}", where(i),
                      rg.num_rows);
    }
  }
  return Status::OK();
}

Status FileReader::ReadRowGroupInto(int row_group, const std::vector<int>& fields,
                                    std::vector<std::unique_ptr<columnar::Column>>* columns,
                                    DecodeBudget* budget) {
  const RowGroup& rg = metadata_.row_groups[static_cast<size_t>(row_group)];
  if (rg.columns.size() != file_schema_.leaves.size()) {
    return DataLoss("{}: row group {} has {} column chunks, the schema {} leaf columns", name(),
                    row_group, rg.columns.size(), file_schema_.leaves.size());
  }
  if (rg.num_rows < 0 || rg.num_rows > options_.max_batch_rows) {
    return ResourceExhausted("{}: row group {} has {} rows (ReaderOptions::max_batch_rows is {})",
                             name(), row_group, rg.num_rows, options_.max_batch_rows);
  }
  for (size_t i = 0; i < fields.size(); i++) {
    FERRY_RETURN_IF_ERROR(ReadField(row_group, fields[i], (*columns)[i].get(), budget));
  }
  return Status::OK();
}

Status FileReader::ReadField(int row_group, int field, columnar::Column* column,
                             DecodeBudget* budget) {
  const RowGroup& rg = metadata_.row_groups[static_cast<size_t>(row_group)];
  const AssemblyNode& node = file_schema_.fields[static_cast<size_t>(field)];
  std::vector<columnar::Column*> leaf_columns;
  CollectLeafColumns(node, column, &leaf_columns);
  bool nested = node.kind != AssemblyNode::Kind::kLeaf;
  std::vector<LeafLevels> levels(nested ? file_schema_.leaves.size() : 0);
  int64_t rows_before = column->length();
  for (int k = 0; k < node.num_leaves; k++) {
    auto leaf = static_cast<size_t>(node.first_leaf + k);
    const LeafColumn& lc = file_schema_.leaves[leaf];
    ColumnChunkReader reader(file_.get(), layout_, &lc, &options_, budget, &scratch_);
    FERRY_RETURN_IF_ERROR(
        reader
            .Read(rg.columns[leaf], leaf_columns[static_cast<size_t>(k)],
                  nested ? &levels[leaf] : nullptr)
            .WithContext("{}: row group {}, column {}", name(), row_group, lc.dotted_path));
  }
  const std::string& field_name = schema()->field(field).name;
  if (nested) {
    FERRY_RETURN_IF_ERROR(
        AssembleNested(node, levels, column)
            .WithContext("{}: row group {}, field {}", name(), row_group, field_name));
  }
  int64_t rows = column->length() - rows_before;
  if (rows != rg.num_rows) {
    return DataLoss("{}: row group {}: field {} has {} rows, the row group {}", name(), row_group,
                    field_name, rows, rg.num_rows);
  }
  return Status::OK();
}

}  // namespace ferry::parquet
