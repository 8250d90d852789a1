// Column vectors: the in-memory form of one column of a record batch, nested types included.
//
// Every column has a type, a length and a validity vector of one byte per row (1 = value,
// 0 = null). Nested columns follow Arrow's shape:
//   - StructColumn: one child per field, each exactly as long as the struct; a null struct row
//     still has a row (a placeholder, normally null) in every child.
//   - ListColumn: offsets (length + 1 entries); row i's elements are child rows
//     [offsets[i], offsets[i+1]). A null or empty list adds no child rows.
//   - MapColumn: like a list of entries, with separate keys and values children.
//
// Building: append to the leaves, then close the row on the parent:
//   auto col = MakeColumn(DataType::List(DataType::Int64()));
//   auto* list = static_cast<ListColumn*>(col.get());
//   list->mutable_child()->As<Int64Column>()->Append(7);
//   list->FinishRow();            // row 0 = [7]
//   list->AppendNull();           // row 1 = null
//
// Thread-safety: not thread-safe; a finished column may be read from many threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/check.h"
#include "ferry/columnar/types.h"

namespace ferry::columnar {

// Makes room for `n` elements in a vector or string, growing at least geometrically. Reserve()
// is called as "what I hold plus this page" once per page (the Parquet reader); an exact reserve
// would reallocate and copy the whole buffer every time, which is quadratic in the pages.
template <typename Buffer>
void ReserveGeometric(Buffer& buffer, size_t n) {
  if (n > buffer.capacity()) {
    buffer.reserve(std::max(n, buffer.capacity() * 2));
  }
}

class Column {
 public:
  explicit Column(DataTypePtr type) : type_(std::move(type)) {}
  virtual ~Column() = default;
  Column(const Column&) = delete;
  Column& operator=(const Column&) = delete;

  const DataTypePtr& type() const { return type_; }
  TypeId type_id() const { return type_->id(); }
  int64_t length() const { return static_cast<int64_t>(validity_.size()); }
  int64_t null_count() const { return null_count_; }
  bool IsValid(int64_t i) const { return validity_[static_cast<size_t>(i)] != 0; }
  bool IsNull(int64_t i) const { return validity_[static_cast<size_t>(i)] == 0; }
  const std::vector<uint8_t>& validity() const { return validity_; }

  // Appends a null row (placeholders in children of a struct).
  virtual void AppendNull() = 0;
  // Appends a copy of row `row` of `other`, which must have an equal type (deep copy for nested).
  virtual void AppendFrom(const Column& other, int64_t row) = 0;
  // Appends copies of rows [begin, end) of `other` (an equal type): one bulk copy for flat
  // columns, row by row for nested ones. REQUIRES: 0 <= begin <= end <= other.length()
  virtual void AppendRange(const Column& other, int64_t begin, int64_t end);
  virtual void Reserve(int64_t rows) = 0;
  // Removes every row (keeps capacity).
  virtual void Clear() = 0;
  // Keeps the first `rows` rows (children trimmed to match): rolls back a partly appended row.
  // REQUIRES: rows <= length()
  virtual void Truncate(int64_t rows) = 0;
  // Approximate bytes held (values, offsets, validity, children): for batch size triggers.
  virtual int64_t ByteSize() const = 0;
  // A new column with the rows at `indices`, in that order (for splitting by partition).
  std::unique_ptr<Column> Take(std::span<const int64_t> indices) const;

  template <typename T>
  T* As() {
    return static_cast<T*>(this);
  }
  template <typename T>
  const T* As() const {
    return static_cast<const T*>(this);
  }

 protected:
  void PushValidity(bool valid) {
    validity_.push_back(valid ? 1 : 0);
    null_count_ += valid ? 0 : 1;
  }
  void PushValidity(int64_t rows, bool valid) {
    validity_.resize(validity_.size() + static_cast<size_t>(rows), valid ? 1 : 0);
    null_count_ += valid ? 0 : rows;
  }
  void ClearValidity() {
    validity_.clear();
    null_count_ = 0;
  }
  void TruncateValidity(int64_t rows);
  // Validity of rows [begin, end) of `other`, appended (AppendRange).
  void AppendValidityRange(const Column& other, int64_t begin, int64_t end);

  DataTypePtr type_;
  std::vector<uint8_t> validity_;
  int64_t null_count_ = 0;
};

// Fixed-width values: booleans (uint8_t 0/1), integers, floats, dates, timestamps, decimals.
template <typename T>
class PrimitiveColumn final : public Column {
 public:
  using ValueType = T;
  explicit PrimitiveColumn(DataTypePtr type) : Column(std::move(type)) {}

  void Append(T v) {
    values_.push_back(v);
    PushValidity(true);
  }
  void AppendNull() override {
    values_.push_back(T{});
    PushValidity(false);
  }
  void AppendFrom(const Column& other, int64_t row) override {
    const auto& o = static_cast<const PrimitiveColumn<T>&>(other);
    values_.push_back(o.values_[static_cast<size_t>(row)]);
    PushValidity(o.IsValid(row));
  }
  void AppendRange(const Column& other, int64_t begin, int64_t end) override {
    const auto& o = static_cast<const PrimitiveColumn<T>&>(other);
    values_.insert(values_.end(), o.values_.begin() + begin, o.values_.begin() + end);
    AppendValidityRange(other, begin, end);
  }
  void Reserve(int64_t rows) override {
    ReserveGeometric(values_, static_cast<size_t>(rows));
    ReserveGeometric(validity_, static_cast<size_t>(rows));
  }
  void Clear() override {
    values_.clear();
    ClearValidity();
  }
  void Truncate(int64_t rows) override {
    values_.resize(static_cast<size_t>(rows));
    TruncateValidity(rows);
  }
  int64_t ByteSize() const override {
    return static_cast<int64_t>(values_.size() * (sizeof(T) + 1));
  }

  T Value(int64_t i) const { return values_[static_cast<size_t>(i)]; }
  const std::vector<T>& values() const { return values_; }
  // Direct access for bulk builders (decoders). Keep validity in step via AppendValidity.
  std::vector<T>* mutable_values() { return &values_; }
  void AppendValidity(bool valid) { PushValidity(valid); }
  // `rows` validity entries at once (rows >= 0).
  void AppendValidity(int64_t rows, bool valid) { PushValidity(rows, valid); }

 private:
  std::vector<T> values_;
};

using BooleanColumn = PrimitiveColumn<uint8_t>;
using Int8Column = PrimitiveColumn<int8_t>;
using Int16Column = PrimitiveColumn<int16_t>;
using Int32Column = PrimitiveColumn<int32_t>;
using Int64Column = PrimitiveColumn<int64_t>;
using UInt8Column = PrimitiveColumn<uint8_t>;
using UInt16Column = PrimitiveColumn<uint16_t>;
using UInt32Column = PrimitiveColumn<uint32_t>;
using UInt64Column = PrimitiveColumn<uint64_t>;
using FloatColumn = PrimitiveColumn<float>;
using DoubleColumn = PrimitiveColumn<double>;
using DateColumn = PrimitiveColumn<int32_t>;
using TimestampColumn = PrimitiveColumn<int64_t>;
using DecimalColumn = PrimitiveColumn<Int128>;

// Variable-length bytes: STRING, JSON, BINARY, FIXED_LEN_BYTE_ARRAY.
// offsets() has length() + 1 entries; row i is data()[offsets[i], offsets[i+1]).
class BinaryColumn final : public Column {
 public:
  explicit BinaryColumn(DataTypePtr type) : Column(std::move(type)) { offsets_.push_back(0); }

  void Append(std::string_view v) {
    data_.append(v);
    offsets_.push_back(static_cast<int64_t>(data_.size()));
    PushValidity(true);
  }
  void AppendNull() override {
    offsets_.push_back(static_cast<int64_t>(data_.size()));
    PushValidity(false);
  }
  void AppendFrom(const Column& other, int64_t row) override;
  void AppendRange(const Column& other, int64_t begin, int64_t end) override;
  void Reserve(int64_t rows) override {
    ReserveGeometric(offsets_, static_cast<size_t>(rows) + 1);
    ReserveGeometric(validity_, static_cast<size_t>(rows));
  }
  void ReserveData(int64_t bytes) { ReserveGeometric(data_, static_cast<size_t>(bytes)); }
  void Clear() override {
    data_.clear();
    offsets_.assign(1, 0);
    ClearValidity();
  }
  void Truncate(int64_t rows) override {
    offsets_.resize(static_cast<size_t>(rows) + 1);
    data_.resize(static_cast<size_t>(offsets_.back()));
    TruncateValidity(rows);
  }
  int64_t ByteSize() const override {
    return static_cast<int64_t>(data_.size() + offsets_.size() * sizeof(int64_t) +
                                validity_.size());
  }

  std::string_view Value(int64_t i) const {
    auto b = static_cast<size_t>(offsets_[static_cast<size_t>(i)]);
    auto e = static_cast<size_t>(offsets_[static_cast<size_t>(i) + 1]);
    return std::string_view(data_).substr(b, e - b);
  }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  const std::string& data() const { return data_; }
  // For bulk builders: append bytes to mutable_data(), then CommitValue().
  std::string* mutable_data() { return &data_; }
  void CommitValue() {
    offsets_.push_back(static_cast<int64_t>(data_.size()));
    PushValidity(true);
  }

 private:
  std::vector<int64_t> offsets_;
  std::string data_;
};

class StructColumn final : public Column {
 public:
  // Children are created empty from the type's fields.
  explicit StructColumn(DataTypePtr type);

  int num_children() const { return static_cast<int>(children_.size()); }
  const Column& child(int i) const { return *children_[static_cast<size_t>(i)]; }
  Column* mutable_child(int i) { return children_[static_cast<size_t>(i)].get(); }

  // Marks a valid row after the caller appended exactly one row to every child.
  void FinishRow() {
    PushValidity(true);
    FERRY_CHECK(ChildrenAligned());
  }
  // A null row: appends a null placeholder to every child.
  void AppendNull() override;
  void AppendFrom(const Column& other, int64_t row) override;
  void Reserve(int64_t rows) override;
  void Clear() override;
  void Truncate(int64_t rows) override;
  int64_t ByteSize() const override;
  // For bulk builders that filled children directly: appends validity only.
  void AppendValidity(bool valid) { PushValidity(valid); }
  bool ChildrenAligned() const;

  // For converters (column_conform.h): takes the children out, then gives the column a new
  // struct type and children. REQUIRES (Reshape): one child per field of `type`, each as long as
  // the struct.
  std::vector<std::unique_ptr<Column>> TakeChildren() { return std::move(children_); }
  void Reshape(DataTypePtr type, std::vector<std::unique_ptr<Column>> children);

 private:
  std::vector<std::unique_ptr<Column>> children_;
};

class ListColumn final : public Column {
 public:
  explicit ListColumn(DataTypePtr type);

  const Column& child() const { return *child_; }
  Column* mutable_child() { return child_.get(); }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  int64_t ListLength(int64_t i) const {
    return offsets_[static_cast<size_t>(i) + 1] - offsets_[static_cast<size_t>(i)];
  }

  // Closes a valid row holding every child row appended since the previous row.
  void FinishRow() {
    offsets_.push_back(child_->length());
    PushValidity(true);
  }
  void AppendNull() override {
    offsets_.push_back(offsets_.back());
    PushValidity(false);
  }
  // For bulk builders (the Parquet reader) that fill the child separately: closes a row whose
  // elements end at child row `end`. The builder checks child().length() == offsets().back()
  // when done. REQUIRES: end >= offsets().back(); end == offsets().back() if !valid.
  void AppendRowEndingAt(int64_t end, bool valid) {
    FERRY_CHECK(end >= offsets_.back() && (valid || end == offsets_.back()));
    offsets_.push_back(end);
    PushValidity(valid);
  }
  void AppendFrom(const Column& other, int64_t row) override;
  void Reserve(int64_t rows) override;
  void Clear() override;
  void Truncate(int64_t rows) override;
  int64_t ByteSize() const override;

  // For converters (column_conform.h), as StructColumn's. REQUIRES (Reshape): `child` has the
  // element type of `type` and as many rows as the old child.
  std::unique_ptr<Column> TakeChild() { return std::move(child_); }
  void Reshape(DataTypePtr type, std::unique_ptr<Column> child);

 private:
  std::vector<int64_t> offsets_;
  std::unique_ptr<Column> child_;
};

class MapColumn final : public Column {
 public:
  explicit MapColumn(DataTypePtr type);

  const Column& keys() const { return *keys_; }
  const Column& values() const { return *values_; }
  Column* mutable_keys() { return keys_.get(); }
  Column* mutable_values() { return values_.get(); }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  int64_t MapLength(int64_t i) const {
    return offsets_[static_cast<size_t>(i) + 1] - offsets_[static_cast<size_t>(i)];
  }

  // Closes a valid row holding every entry appended since the previous row.
  // REQUIRES: keys and values have the same length.
  void FinishRow() {
    FERRY_CHECK(keys_->length() == values_->length());
    offsets_.push_back(keys_->length());
    PushValidity(true);
  }
  void AppendNull() override {
    offsets_.push_back(offsets_.back());
    PushValidity(false);
  }
  // For bulk builders, as ListColumn::AppendRowEndingAt; keys and values end at `end`.
  void AppendRowEndingAt(int64_t end, bool valid) {
    FERRY_CHECK(end >= offsets_.back() && (valid || end == offsets_.back()));
    offsets_.push_back(end);
    PushValidity(valid);
  }
  void AppendFrom(const Column& other, int64_t row) override;
  void Reserve(int64_t rows) override;
  void Clear() override;
  void Truncate(int64_t rows) override;
  int64_t ByteSize() const override;

  // For converters (column_conform.h), as StructColumn's.
  std::unique_ptr<Column> TakeKeys() { return std::move(keys_); }
  std::unique_ptr<Column> TakeValues() { return std::move(values_); }
  void Reshape(DataTypePtr type, std::unique_ptr<Column> keys, std::unique_ptr<Column> values);

 private:
  std::vector<int64_t> offsets_;
  std::unique_ptr<Column> keys_;
  std::unique_ptr<Column> values_;
};

// An empty column of the right class for `type`, children included.
std::unique_ptr<Column> MakeColumn(const DataTypePtr& type);

// Calls fn(PrimitiveColumn<T>* tag) with a null pointer of the storage class of a fixed-width
// type, so templates can switch on TypeId once:
//   VisitPrimitive(type, [&]<typename C>(C*) { auto* col = column->As<C>(); ... });
// REQUIRES: type is not nested and not binary-like.
template <typename Fn>
decltype(auto) VisitPrimitive(TypeId id, Fn&& fn) {
  switch (id) {
    case TypeId::kBoolean:
    case TypeId::kUInt8:
      return fn(static_cast<PrimitiveColumn<uint8_t>*>(nullptr));
    case TypeId::kInt8:
      return fn(static_cast<PrimitiveColumn<int8_t>*>(nullptr));
    case TypeId::kInt16:
      return fn(static_cast<PrimitiveColumn<int16_t>*>(nullptr));
    case TypeId::kInt32:
    case TypeId::kDate:
      return fn(static_cast<PrimitiveColumn<int32_t>*>(nullptr));
    case TypeId::kInt64:
    case TypeId::kTimestamp:
      return fn(static_cast<PrimitiveColumn<int64_t>*>(nullptr));
    case TypeId::kUInt16:
      return fn(static_cast<PrimitiveColumn<uint16_t>*>(nullptr));
    case TypeId::kUInt32:
      return fn(static_cast<PrimitiveColumn<uint32_t>*>(nullptr));
    case TypeId::kUInt64:
      return fn(static_cast<PrimitiveColumn<uint64_t>*>(nullptr));
    case TypeId::kFloat32:
      return fn(static_cast<PrimitiveColumn<float>*>(nullptr));
    case TypeId::kFloat64:
      return fn(static_cast<PrimitiveColumn<double>*>(nullptr));
    case TypeId::kDecimal:
      return fn(static_cast<PrimitiveColumn<Int128>*>(nullptr));
    default:
      FERRY_CHECK_MSG(false, "VisitPrimitive on a non-primitive type");
  }
  __builtin_unreachable();
}

}  // namespace ferry::columnar
