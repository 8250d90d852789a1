#include "ferry/parquet/writer.h"

#include <algorithm>

#include "ferry/base/endian.h"
#include "ferry/parquet/column_writer.h"
#include "ferry/parquet/compression.h"
#include "ferry/parquet/compression_pool.h"
#include "ferry/parquet/file_series.h"
#include "ferry/parquet/page_arena.h"
#include "ferry/parquet/schema_writer.h"
#include "ferry/parquet/shredder.h"

#ifndef FERRY_VERSION
#define FERRY_VERSION "0"
#endif

namespace ferry::parquet {
namespace {

// Equal types, field names aside (WriterOptions::match_fields_by_position).
bool SameLayout(const columnar::DataType& a, const columnar::DataType& b) {
  if (!a.is_nested() || !b.is_nested()) {
    return a.Equals(b);
  }
  if (a.id() != b.id() || a.fields().size() != b.fields().size()) {
    return false;
  }
  for (size_t i = 0; i < a.fields().size(); ++i) {
    const columnar::Field& x = a.fields()[i];
    const columnar::Field& y = b.fields()[i];
    if (x.nullable != y.nullable || !SameLayout(*x.type, *y.type)) {
      return false;
    }
  }
  return true;
}

bool SameLayout(const columnar::Schema& a, const columnar::Schema& b) {
  return SameLayout(*columnar::DataType::Struct(a.fields()),
                    *columnar::DataType::Struct(b.fields()));
}

}  // namespace

Status WriterOptions::Validate() const {
  auto positive = [](int64_t v, const char* name) -> Status {
    if (v <= 0) {
      return InvalidArgument("parquet writer option {} must be positive, got {}", name, v);
    }
    return Status::OK();
  };
  FERRY_RETURN_IF_ERROR(positive(row_group_max_rows, "row_group_max_rows"));
  FERRY_RETURN_IF_ERROR(positive(row_group_max_bytes, "row_group_max_bytes"));
  FERRY_RETURN_IF_ERROR(positive(page_max_rows, "page_max_rows"));
  FERRY_RETURN_IF_ERROR(positive(page_max_bytes, "page_max_bytes"));
  FERRY_RETURN_IF_ERROR(positive(dictionary_max_bytes, "dictionary_max_bytes"));
  if (compression_threads < 1 || compression_threads > 64) {
    return InvalidArgument("parquet writer option compression_threads must be 1..64, got {}",
                           compression_threads);
  }
  if (page_max_rows > INT32_MAX / 2) {
    return InvalidArgument("parquet writer option page_max_rows is too large: {}", page_max_rows);
  }
  return Status::OK();
}

FileWriter::FileWriter(std::unique_ptr<OutputStream> sink, columnar::SchemaPtr schema,
                       WriterOptions options)
    : sink_(std::move(sink)),
      schema_(std::move(schema)),
      options_(std::move(options)),
      shredded_(std::make_unique<ShreddedLeaf>()) {}

FileWriter::~FileWriter() = default;

Result<std::unique_ptr<FileWriter>> FileWriter::Open(std::unique_ptr<OutputStream> sink,
                                                     columnar::SchemaPtr schema,
                                                     WriterOptions options) {
  FERRY_RETURN_IF_ERROR(options.Validate());
  if (schema == nullptr || schema->num_fields() == 0) {
    return InvalidArgument("a Parquet file needs at least one column");
  }
  std::unique_ptr<FileWriter> w(new FileWriter(std::move(sink), std::move(schema), options));
  FERRY_RETURN_IF_ERROR(w->Init().WithContext("parquet file {}", w->sink_->name()));
  return w;
}

Status FileWriter::Init() {
  FERRY_ASSIGN_OR_RETURN(ParquetSchema ps, BuildParquetSchema(*schema_));
  parquet_schema_ = std::make_unique<ParquetSchema>(std::move(ps));
  FERRY_ASSIGN_OR_RETURN(codec_, Codec::Create(options_.codec, options_.compression_level));
  if (options_.compression_threads > 1 && options_.codec != CompressionCodec::kUncompressed) {
    FERRY_ASSIGN_OR_RETURN(pool_,
                           CompressionPool::Create(options_.codec, options_.compression_level,
                                                   options_.compression_threads));
  } else {
    arena_ = std::make_unique<PageArena>();
  }
  ColumnWriterOptions cw;
  cw.page_max_rows = options_.page_max_rows;
  cw.page_max_bytes = options_.page_max_bytes;
  cw.data_page_v2 = options_.data_page_v2;
  cw.values.enable_dictionary = options_.enable_dictionary;
  cw.values.dictionary_max_bytes = options_.dictionary_max_bytes;
  for (size_t i = 0; i < parquet_schema_->leaves.size(); ++i) {
    const LeafPath& path = parquet_schema_->paths[i];
    const std::string key =
        options_.series == nullptr ? "" : parquet_schema_->leaves[i].PathString();
    cw.values.enable_dictionary =
        options_.enable_dictionary && (key.empty() || !options_.series->StartPlain(key));
    series_keys_.push_back(cw.values.enable_dictionary ? key : "");
    FERRY_ASSIGN_OR_RETURN(
        std::unique_ptr<ColumnWriter> c,
        ColumnWriter::Create(parquet_schema_->leaves[i], path.leaf_type, path.has_repetition, cw,
                             codec_.get(), pool_.get(), arena_.get()));
    columns_.push_back(std::move(c));
  }
  return sink_->Append(kParquetMagic);
}

Status FileWriter::Fail(Status s) {
  if (!s.ok() && error_.ok()) {
    error_ = s.WithContext("parquet file {}", sink_->name());
    return error_;
  }
  return s;
}

Status FileWriter::Write(const columnar::RecordBatch& batch) {
  FERRY_RETURN_IF_ERROR(error_);
  if (closed_) {
    return Internal("parquet file {}: Write after Close", sink_->name());
  }
  if (!(options_.match_fields_by_position ? SameLayout(batch.schema(), *schema_)
                                          : batch.schema().Equals(*schema_))) {
    return InvalidArgument("parquet file {}: batch schema <{}> differs from the file's <{}>",
                           sink_->name(), batch.schema().ToString(), schema_->ToString());
  }
  int64_t n = batch.num_rows();
  for (int i = 0; i < batch.num_columns(); ++i) {
    if (batch.column(i).length() != n) {
      return InvalidArgument("parquet file {}: column '{}' has {} rows, the batch {}",
                             sink_->name(), schema_->field(i).name, batch.column(i).length(), n);
    }
  }
  int64_t row = 0;
  while (row < n) {
    int64_t take = std::min({slice_rows_, n - row, options_.row_group_max_rows - row_group_rows_,
                             options_.page_max_rows});
    FERRY_RETURN_IF_ERROR(Fail(WriteSlice(batch, row, row + take)));
    row += take;
    row_group_rows_ += take;
    num_rows_ += take;
    AdaptSliceRows();
    if (row_group_rows_ >= options_.row_group_max_rows) {
      FERRY_RETURN_IF_ERROR(Fail(FlushRowGroup()));
      continue;
    }
    int64_t buffered = 0;
    for (const auto& c : columns_) {
      buffered += c->EstimatedChunkBytes();
    }
    if (buffered >= options_.row_group_max_bytes) {
      FERRY_RETURN_IF_ERROR(Fail(FlushRowGroup()));
    }
  }
  return Status::OK();
}

void FileWriter::AdaptSliceRows() {
  int64_t widest = 1;
  for (const auto& c : columns_) {
    widest = std::max(widest, c->BytesPerRow());
  }
  slice_rows_ = std::clamp<int64_t>(options_.page_max_bytes / 8 / widest, 16, kSliceRows);
}

Status FileWriter::WriteSlice(const columnar::RecordBatch& batch, int64_t begin, int64_t end) {
  for (size_t i = 0; i < columns_.size(); ++i) {
    const LeafPath& path = parquet_schema_->paths[i];
    const ColumnDescriptor& column = parquet_schema_->leaves[i];
    FERRY_RETURN_IF_ERROR(Shredder::Shred(path, column, batch.column(path.top_level_column), begin,
                                          end, shredded_.get())
                              .WithContext("rows {}..{}", begin, end));
    FERRY_RETURN_IF_ERROR(
        columns_[i]->Write(*shredded_).WithContext("column '{}'", column.PathString()));
  }
  return Status::OK();
}

Status FileWriter::FlushRowGroup() {
  if (row_group_rows_ == 0) {
    return Status::OK();
  }
  RowGroup rg;
  rg.num_rows = row_group_rows_;
  rg.file_offset = static_cast<int64_t>(sink_->Tell());
  rg.ordinal = static_cast<int16_t>(std::min<size_t>(metadata_.row_groups.size(), INT16_MAX));
  int64_t start = static_cast<int64_t>(sink_->Tell());
  for (const auto& c : columns_) {
    ColumnChunk chunk;
    FERRY_RETURN_IF_ERROR(c->FlushChunk(sink_.get(), &chunk));
    rg.total_byte_size += chunk.meta_data->total_uncompressed_size;
    rg.columns.push_back(std::move(chunk));
  }
  if (arena_ != nullptr) {
    arena_->Reset();  // every page in it went to the sink
  }
  rg.total_compressed_size = static_cast<int64_t>(sink_->Tell()) - start;
  metadata_.row_groups.push_back(std::move(rg));
  row_group_rows_ = 0;
  return Status::OK();
}

int64_t FileWriter::estimated_file_size() const {
  int64_t size = static_cast<int64_t>(sink_->Tell());
  for (const auto& c : columns_) {
    size += c->EstimatedChunkBytes();
  }
  // Footer: roughly 100 bytes per column chunk plus the schema.
  auto chunks = static_cast<int64_t>((metadata_.row_groups.size() + 1) * columns_.size());
  return size + 100 * chunks + 64 * static_cast<int64_t>(parquet_schema_->elements.size());
}

Status FileWriter::Close() {
  FERRY_RETURN_IF_ERROR(error_);
  if (closed_) {
    return Status::OK();
  }
  FERRY_RETURN_IF_ERROR(Fail(FlushRowGroup()));
  metadata_.version = 1;
  metadata_.schema = parquet_schema_->elements;
  metadata_.num_rows = num_rows_;
  if (!options_.key_value_metadata.empty()) {
    auto& kvs = metadata_.key_value_metadata.emplace();
    for (const auto& [k, v] : options_.key_value_metadata) {
      kvs.push_back(KeyValue{k, v});
    }
  }
  metadata_.created_by = options_.created_by.empty() ? std::string("ferry version ") + FERRY_VERSION
                                                     : options_.created_by;
  metadata_.column_orders = std::vector<ColumnOrder>(columns_.size());
  std::string footer;
  SerializeFileMetaData(metadata_, &footer);
  AppendLE(&footer, static_cast<uint32_t>(footer.size()));
  footer.append(kParquetMagic);
  FERRY_RETURN_IF_ERROR(Fail(sink_->Append(footer)));
  FERRY_RETURN_IF_ERROR(Fail(sink_->Close()));
  for (size_t i = 0; i < columns_.size(); ++i) {
    statistics_.push_back(columns_[i]->FileStatistics(options_.whole_statistics_bounds));
    if (!series_keys_[i].empty()) {
      options_.series->Record(series_keys_[i], columns_[i]->FellBackToPlain());
    }
  }
  closed_ = true;
  return Status::OK();
}

}  // namespace ferry::parquet
