#include "ferry/columnar/column.h"

#include <algorithm>

namespace ferry::columnar {

void Column::TruncateValidity(int64_t rows) {
  FERRY_CHECK(rows >= 0 && rows <= length());
  for (auto i = static_cast<size_t>(rows); i < validity_.size(); i++) {
    null_count_ -= validity_[i] == 0 ? 1 : 0;
  }
  validity_.resize(static_cast<size_t>(rows));
}

std::unique_ptr<Column> Column::Take(std::span<const int64_t> indices) const {
  std::unique_ptr<Column> out = MakeColumn(type_);
  out->Reserve(static_cast<int64_t>(indices.size()));
  for (int64_t i : indices) {
    out->AppendFrom(*this, i);
  }
  return out;
}

void Column::AppendRange(const Column& other, int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; row++) {
    AppendFrom(other, row);
  }
}

void Column::AppendValidityRange(const Column& other, int64_t begin, int64_t end) {
  FERRY_CHECK(begin >= 0 && begin <= end && end <= other.length());
  auto first = other.validity_.begin() + begin;
  auto last = other.validity_.begin() + end;
  validity_.insert(validity_.end(), first, last);
  null_count_ += std::count(first, last, uint8_t{0});
}

void BinaryColumn::AppendRange(const Column& other, int64_t begin, int64_t end) {
  const auto& o = static_cast<const BinaryColumn&>(other);
  AppendValidityRange(other, begin, end);
  const int64_t from = o.offsets_[static_cast<size_t>(begin)];
  const int64_t to = o.offsets_[static_cast<size_t>(end)];
  const int64_t shift = static_cast<int64_t>(data_.size()) - from;
  data_.append(o.data_, static_cast<size_t>(from), static_cast<size_t>(to - from));
  offsets_.reserve(offsets_.size() + static_cast<size_t>(end - begin));
  for (int64_t row = begin + 1; row <= end; row++) {
    offsets_.push_back(o.offsets_[static_cast<size_t>(row)] + shift);
  }
}

void BinaryColumn::AppendFrom(const Column& other, int64_t row) {
  const auto& o = static_cast<const BinaryColumn&>(other);
  if (o.IsValid(row)) {
    Append(o.Value(row));
  } else {
    AppendNull();
  }
}

StructColumn::StructColumn(DataTypePtr type) : Column(std::move(type)) {
  for (const Field& f : type_->fields()) {
    children_.push_back(MakeColumn(f.type));
  }
}

void StructColumn::AppendNull() {
  for (auto& c : children_) {
    c->AppendNull();
  }
  PushValidity(false);
}

void StructColumn::AppendFrom(const Column& other, int64_t row) {
  const auto& o = static_cast<const StructColumn&>(other);
  for (size_t i = 0; i < children_.size(); i++) {
    children_[i]->AppendFrom(*o.children_[i], row);
  }
  PushValidity(o.IsValid(row));
}

void StructColumn::Reserve(int64_t rows) {
  ReserveGeometric(validity_, static_cast<size_t>(rows));
  for (auto& c : children_) {
    c->Reserve(rows);
  }
}

void StructColumn::Clear() {
  for (auto& c : children_) {
    c->Clear();
  }
  ClearValidity();
}

void StructColumn::Truncate(int64_t rows) {
  for (auto& c : children_) {
    c->Truncate(rows);
  }
  TruncateValidity(rows);
}

int64_t StructColumn::ByteSize() const {
  int64_t n = static_cast<int64_t>(validity_.size());
  for (const auto& c : children_) {
    n += c->ByteSize();
  }
  return n;
}

void StructColumn::Reshape(DataTypePtr type, std::vector<std::unique_ptr<Column>> children) {
  FERRY_CHECK(type->id() == TypeId::kStruct && children.size() == type->fields().size());
  type_ = std::move(type);
  children_ = std::move(children);
  FERRY_CHECK(ChildrenAligned());
}

bool StructColumn::ChildrenAligned() const {
  for (const auto& c : children_) {
    if (c->length() != length()) {
      return false;
    }
  }
  return true;
}

ListColumn::ListColumn(DataTypePtr type) : Column(std::move(type)) {
  offsets_.push_back(0);
  child_ = MakeColumn(type_->element().type);
}

void ListColumn::AppendFrom(const Column& other, int64_t row) {
  const auto& o = static_cast<const ListColumn&>(other);
  if (o.IsNull(row)) {
    AppendNull();
    return;
  }
  auto r = static_cast<size_t>(row);
  for (int64_t i = o.offsets_[r]; i < o.offsets_[r + 1]; i++) {
    child_->AppendFrom(*o.child_, i);
  }
  FinishRow();
}

void ListColumn::Reshape(DataTypePtr type, std::unique_ptr<Column> child) {
  FERRY_CHECK(type->id() == TypeId::kList && child->length() == offsets_.back());
  type_ = std::move(type);
  child_ = std::move(child);
}

void ListColumn::Reserve(int64_t rows) {
  ReserveGeometric(offsets_, static_cast<size_t>(rows) + 1);
  ReserveGeometric(validity_, static_cast<size_t>(rows));
}

void ListColumn::Clear() {
  child_->Clear();
  offsets_.assign(1, 0);
  ClearValidity();
}

void ListColumn::Truncate(int64_t rows) {
  offsets_.resize(static_cast<size_t>(rows) + 1);
  child_->Truncate(offsets_.back());
  TruncateValidity(rows);
}

int64_t ListColumn::ByteSize() const {
  return static_cast<int64_t>(validity_.size() + offsets_.size() * sizeof(int64_t)) +
         child_->ByteSize();
}

MapColumn::MapColumn(DataTypePtr type) : Column(std::move(type)) {
  offsets_.push_back(0);
  keys_ = MakeColumn(type_->key().type);
  values_ = MakeColumn(type_->value().type);
}

void MapColumn::AppendFrom(const Column& other, int64_t row) {
  const auto& o = static_cast<const MapColumn&>(other);
  if (o.IsNull(row)) {
    AppendNull();
    return;
  }
  auto r = static_cast<size_t>(row);
  for (int64_t i = o.offsets_[r]; i < o.offsets_[r + 1]; i++) {
    keys_->AppendFrom(*o.keys_, i);
    values_->AppendFrom(*o.values_, i);
  }
  FinishRow();
}

void MapColumn::Reshape(DataTypePtr type, std::unique_ptr<Column> keys,
                        std::unique_ptr<Column> values) {
  FERRY_CHECK(type->id() == TypeId::kMap && keys->length() == offsets_.back() &&
              values->length() == offsets_.back());
  type_ = std::move(type);
  keys_ = std::move(keys);
  values_ = std::move(values);
}

void MapColumn::Reserve(int64_t rows) {
  ReserveGeometric(offsets_, static_cast<size_t>(rows) + 1);
  ReserveGeometric(validity_, static_cast<size_t>(rows));
}

void MapColumn::Clear() {
  keys_->Clear();
  values_->Clear();
  offsets_.assign(1, 0);
  ClearValidity();
}

void MapColumn::Truncate(int64_t rows) {
  offsets_.resize(static_cast<size_t>(rows) + 1);
  keys_->Truncate(offsets_.back());
  values_->Truncate(offsets_.back());
  TruncateValidity(rows);
}

int64_t MapColumn::ByteSize() const {
  return static_cast<int64_t>(validity_.size() + offsets_.size() * sizeof(int64_t)) +
         keys_->ByteSize() + values_->ByteSize();
}

std::unique_ptr<Column> MakeColumn(const DataTypePtr& type) {
  switch (type->id()) {
    case TypeId::kString:
    case TypeId::kJson:
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
      return std::make_unique<BinaryColumn>(type);
    case TypeId::kStruct:
      return std::make_unique<StructColumn>(type);
    case TypeId::kList:
      return std::make_unique<ListColumn>(type);
    case TypeId::kMap:
      return std::make_unique<MapColumn>(type);
    default:
      return VisitPrimitive(type->id(), [&]<typename C>(C*) -> std::unique_ptr<Column> {
        return std::make_unique<C>(type);
      });
  }
}

}  // namespace ferry::columnar
