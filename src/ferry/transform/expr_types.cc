// Type rules of the expression engine (Spark's implicit casts and common types), result vectors,
// and the function registry.
#include <algorithm>
#include <mutex>

#include "ferry/transform/expr_internal.h"

namespace ferry::transform {

bool IsNullType(const DataTypePtr& t) {
  return t == nullptr;
}

bool IsIntegral(const DataTypePtr& t) {
  return t != nullptr && columnar::IsIntegerType(t->id());
}

bool IsNumeric(const DataTypePtr& t) {
  return t && (IsIntegral(t) || t->id() == TypeId::kFloat32 || t->id() == TypeId::kFloat64 ||
               t->id() == TypeId::kDecimal);
}

bool IsStringLike(const DataTypePtr& t) {
  return t && (t->id() == TypeId::kString || t->id() == TypeId::kJson);
}

std::string TypeName(const DataTypePtr& t) {
  return t ? t->ToString() : "NULL";
}

namespace {

// Spark's numeric precedence: byte < short < int < long < float < double (unsigned types,
// which Spark lacks, rank above the signed type of their width).
int Rank(TypeId id) {
  switch (id) {
    case TypeId::kInt8:
      return 1;
    case TypeId::kUInt8:
    case TypeId::kInt16:
      return 2;
    case TypeId::kUInt16:
    case TypeId::kInt32:
      return 3;
    case TypeId::kUInt32:
    case TypeId::kInt64:
      return 4;
    case TypeId::kUInt64:
      return 5;
    case TypeId::kFloat32:
      return 6;
    case TypeId::kFloat64:
      return 7;
    default:
      return 0;
  }
}

bool IsDatetime(const DataTypePtr& t) {
  return t && (t->id() == TypeId::kDate || t->id() == TypeId::kTimestamp);
}

bool IsAtomic(const DataTypePtr& t) {
  return t && !t->is_nested();
}

}  // namespace

DataTypePtr AsDecimal(const DataTypePtr& t) {
  switch (t->id()) {
    case TypeId::kInt8:
    case TypeId::kUInt8:
      return DataType::Decimal(3, 0);
    case TypeId::kInt16:
    case TypeId::kUInt16:
      return DataType::Decimal(5, 0);
    case TypeId::kInt32:
    case TypeId::kUInt32:
      return DataType::Decimal(10, 0);
    case TypeId::kInt64:
    case TypeId::kUInt64:
      return DataType::Decimal(20, 0);
    default:
      return t;
  }
}

DataTypePtr WiderNumeric(const DataTypePtr& a, const DataTypePtr& b) {
  if (a->Equals(*b)) {
    return a;
  }
  bool da = a->id() == TypeId::kDecimal, db = b->id() == TypeId::kDecimal;
  if (da || db) {
    DataTypePtr other = da ? b : a;
    if (other->id() == TypeId::kFloat32 || other->id() == TypeId::kFloat64) {
      return DataType::Float64();
    }
    DataTypePtr x = AsDecimal(a), y = AsDecimal(b);
    int32_t scale = std::max(x->scale(), y->scale());
    int32_t range = std::max(x->precision() - x->scale(), y->precision() - y->scale());
    return DataType::Decimal(std::min(range + scale, 38), scale);
  }
  return Rank(a->id()) >= Rank(b->id()) ? a : b;
}

DataTypePtr ComparisonType(const DataTypePtr& a, const DataTypePtr& b) {
  if (!a) {
    return b ? b : DataType::Boolean();
  }
  if (!b || a->Equals(*b)) {
    return a;
  }
  if (IsNumeric(a) && IsNumeric(b)) {
    return WiderNumeric(a, b);
  }
  if (IsDatetime(a) && IsDatetime(b)) {
    return a->id() == TypeId::kTimestamp ? a : b;
  }
  if (IsStringLike(a) || IsStringLike(b)) {
    const DataTypePtr& other = IsStringLike(a) ? b : a;
    if (IsStringLike(other)) {
      return DataType::String();
    }
    if (other->id() == TypeId::kDecimal) {
      return DataType::Float64();  // SPARK-22469: no decimal fits every string
    }
    return IsAtomic(other) ? other : nullptr;
  }
  return nullptr;
}

DataTypePtr WiderType(const DataTypePtr& a, const DataTypePtr& b) {
  if (!a) {
    return b;
  }
  if (!b || a->Equals(*b)) {
    return a;
  }
  if (IsNumeric(a) && IsNumeric(b)) {
    return WiderNumeric(a, b);
  }
  if (IsDatetime(a) && IsDatetime(b)) {
    return a->id() == TypeId::kTimestamp ? a : b;
  }
  if ((IsStringLike(a) && IsAtomic(b)) || (IsStringLike(b) && IsAtomic(a))) {
    return DataType::String();
  }
  return nullptr;
}

bool CanImplicitCast(const DataTypePtr& from, const DataTypePtr& to) {
  if (!from || !to || from->Equals(*to)) {
    return true;
  }
  if (IsNumeric(from) && IsNumeric(to)) {
    return true;
  }
  if (IsStringLike(from)) {
    return IsNumeric(to) || IsDatetime(to) || to->id() == TypeId::kBinary || IsStringLike(to);
  }
  if (IsStringLike(to)) {
    return IsAtomic(from);
  }
  return IsDatetime(from) && IsDatetime(to);
}

bool CanCast(const DataTypePtr& from, const DataTypePtr& to) {
  if (!from || from->Equals(*to)) {
    return true;
  }
  if (from->is_nested() || to->is_nested()) {
    return false;
  }
  if (IsStringLike(to) || IsStringLike(from)) {
    return true;  // every atomic type prints and parses (binary as its bytes)
  }
  bool num_from = IsNumeric(from) || from->id() == TypeId::kBoolean;
  bool num_to = IsNumeric(to) || to->id() == TypeId::kBoolean;
  if (num_from && num_to) {
    return true;
  }
  if ((num_from && to->id() == TypeId::kTimestamp) ||
      (from->id() == TypeId::kTimestamp && num_to)) {
    return true;  // seconds since the epoch
  }
  return IsDatetime(from) && IsDatetime(to);
}

Vec NewVec(const DataTypePtr& type, int64_t rows) {
  Vec v;
  v.owned = columnar::MakeColumn(type ? type : DataType::Boolean());
  v.owned->Reserve(rows);
  v.col = v.owned.get();
  return v;
}

Vec NullVec(const DataTypePtr& type, int64_t rows) {
  Vec v = NewVec(type, 1);
  v.owned->AppendNull();
  v.constant = true;
  (void)rows;
  return v;
}

const FunctionDef* FindFunction(std::string_view name) {
  static const std::vector<FunctionDef>* registry = [] {
    auto* fns = new std::vector<FunctionDef>();  // never freed: lives as long as the process
    AddOperatorFunctions(fns);
    AddStringFunctions(fns);
    AddDatetimeFunctions(fns);
    AddMiscFunctions(fns);
    return fns;
  }();
  for (const FunctionDef& f : *registry) {
    if (f.name == name) {
      return &f;
    }
  }
  return nullptr;
}

}  // namespace ferry::transform
