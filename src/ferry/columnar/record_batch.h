// RecordBatch: a schema and one column per top-level field, all of the same length. The unit
// that flows from decoders through transforms into the Parquet writer.
//
// Thread-safety: not thread-safe; a finished batch may be read from many threads.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/types.h"

namespace ferry::columnar {

class RecordBatch {
 public:
  RecordBatch() = default;
  // REQUIRES: one column per schema field, types equal to the fields' types.
  RecordBatch(SchemaPtr schema, std::vector<std::unique_ptr<Column>> columns);
  // An empty batch with a column per field, ready for appending.
  static RecordBatch MakeEmpty(SchemaPtr schema);

  RecordBatch(RecordBatch&&) = default;
  RecordBatch& operator=(RecordBatch&&) = default;

  const SchemaPtr& schema_ptr() const { return schema_; }
  const Schema& schema() const { return *schema_; }
  // Rows: the common length of the columns (0 for a batch without columns).
  int64_t num_rows() const { return columns_.empty() ? 0 : columns_[0]->length(); }
  int num_columns() const { return static_cast<int>(columns_.size()); }
  const Column& column(int i) const { return *columns_[static_cast<size_t>(i)]; }
  Column* mutable_column(int i) { return columns_[static_cast<size_t>(i)].get(); }
  // Column by top-level field name; null if absent.
  const Column* GetColumn(std::string_view name) const;
  std::vector<std::unique_ptr<Column>> ReleaseColumns() { return std::move(columns_); }

  // Every column as long as the first, nested children aligned, no nulls in non-nullable
  // fields (except placeholders under a null parent). Names the column on failure.
  Status Validate() const;
  // The rows at `indices`, in that order.
  RecordBatch Take(std::span<const int64_t> indices) const;
  int64_t ByteSize() const;
  void Clear();

 private:
  SchemaPtr schema_;
  std::vector<std::unique_ptr<Column>> columns_;
};

}  // namespace ferry::columnar
