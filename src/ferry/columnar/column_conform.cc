#include "ferry/columnar/column_conform.h"

#include <algorithm>
#include <cctype>
#include <type_traits>

namespace ferry::columnar {
namespace {

bool IsSmallInteger(TypeId id) {
  return id == TypeId::kInt8 || id == TypeId::kInt16 || id == TypeId::kInt32;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool CanConformPrimitive(const DataType& from, const DataType& to, ConformOptions options) {
  TypeId f = from.id();
  TypeId t = to.id();
  if (options.int64_to_double && f == TypeId::kInt64 && t == TypeId::kFloat64) {
    return true;
  }
  if (SignedIntegerWidth(f) > 0 && SignedIntegerWidth(t) > 0) {
    return SignedIntegerWidth(f) <= SignedIntegerWidth(t);
  }
  if (t == TypeId::kFloat64) {
    return f == TypeId::kFloat32 || IsSmallInteger(f);
  }
  if (t == TypeId::kDecimal) {
    if (IsSmallInteger(f)) {
      return to.precision() - to.scale() >= 10;
    }
    if (f == TypeId::kInt64) {
      return to.precision() - to.scale() >= 20;
    }
    if (f == TypeId::kDecimal) {
      return to.scale() >= from.scale() &&
             to.precision() - to.scale() >= from.precision() - from.scale();
    }
    return false;
  }
  if (f == TypeId::kDate && t == TypeId::kTimestamp) {
    return !to.utc_adjusted();
  }
  return false;
}

Int128 Pow10(int n) {
  Int128 out = 1;
  for (int i = 0; i < n; ++i) {
    out *= 10;
  }
  return out;
}

int64_t TicksPerDay(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kMillis:
      return 86'400'000LL;
    case TimeUnit::kMicros:
      return 86'400'000'000LL;
    case TimeUnit::kNanos:
      return 86'400'000'000'000LL;
  }
  return 0;
}

// A primitive column cast value by value. REQUIRES: CanConformPrimitive(from, to).
std::unique_ptr<Column> CastPrimitive(const Column& from, const DataTypePtr& to) {
  std::unique_ptr<Column> out = MakeColumn(to);
  const DataType& source = *from.type();
  const int64_t n = from.length();
  VisitPrimitive(source.id(), [&]<typename In>(In*) {
    const auto& in = *from.As<In>();
    VisitPrimitive(to->id(), [&]<typename Out>(Out*) {
      using T = typename Out::ValueType;
      auto* dest = out->As<Out>();
      std::vector<T>* values = dest->mutable_values();
      values->reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        auto v = in.Value(i);
        if constexpr (std::is_same_v<T, Int128>) {
          // Decimal target: integers scaled up, decimals rescaled.
          int shift = to->scale() - (source.id() == TypeId::kDecimal ? source.scale() : 0);
          values->push_back(static_cast<Int128>(v) * Pow10(shift));
        } else if (source.id() == TypeId::kDate) {
          values->push_back(static_cast<T>(v) * static_cast<T>(TicksPerDay(to->unit())));
        } else {
          values->push_back(static_cast<T>(v));
        }
      }
    });
  });
  VisitPrimitive(to->id(), [&]<typename Out>(Out*) {
    auto* dest = out->As<Out>();
    for (int64_t i = 0; i < n; ++i) {
      dest->AppendValidity(from.IsValid(i));
    }
  });
  return out;
}

// A column of `type` with `rows` null rows.
std::unique_ptr<Column> NullColumn(const DataTypePtr& type, int64_t rows) {
  std::unique_ptr<Column> out = MakeColumn(type);
  out->Reserve(rows);
  for (int64_t i = 0; i < rows; ++i) {
    out->AppendNull();
  }
  return out;
}

Result<std::unique_ptr<Column>> Conform(std::unique_ptr<Column> column, const DataTypePtr& to,
                                        const std::string& path, ConformOptions options) {
  const DataType& from = *column->type();
  if (from.Equals(*to)) {
    return column;
  }
  auto refuse = [&]() {
    return InvalidArgument("column '{}': {} does not convert to {}", path, from.ToString(),
                           to->ToString());
  };
  if (from.id() != to->id() && (from.is_nested() || to->is_nested())) {
    return refuse();
  }
  switch (to->id()) {
    case TypeId::kStruct: {
      auto* sc = column->As<StructColumn>();
      const int64_t rows = sc->length();
      std::vector<std::unique_ptr<Column>> old = sc->TakeChildren();
      std::vector<bool> used(old.size(), false);
      std::vector<std::unique_ptr<Column>> children;
      for (const Field& field : to->fields()) {
        std::optional<size_t> i = FindFieldIgnoringCase(from.fields(), field.name);
        if (!i.has_value()) {
          children.push_back(NullColumn(field.type, rows));
          continue;
        }
        used[*i] = true;
        FERRY_ASSIGN_OR_RETURN(
            auto child, Conform(std::move(old[*i]), field.type, path + "." + field.name, options));
        children.push_back(std::move(child));
      }
      for (size_t i = 0; i < used.size(); ++i) {
        if (!used[i]) {
          return InvalidArgument("column '{}': field '{}' has no place in {}", path,
                                 from.fields()[i].name, to->ToString());
        }
      }
      sc->Reshape(to, std::move(children));
      return column;
    }
    case TypeId::kList: {
      auto* list = column->As<ListColumn>();
      FERRY_ASSIGN_OR_RETURN(
          auto child, Conform(list->TakeChild(), to->element().type, path + ".element", options));
      list->Reshape(to, std::move(child));
      return column;
    }
    case TypeId::kMap: {
      auto* map = column->As<MapColumn>();
      FERRY_ASSIGN_OR_RETURN(auto keys,
                             Conform(map->TakeKeys(), to->key().type, path + ".key", options));
      FERRY_ASSIGN_OR_RETURN(
          auto values, Conform(map->TakeValues(), to->value().type, path + ".value", options));
      map->Reshape(to, std::move(keys), std::move(values));
      return column;
    }
    default:
      if (from.is_binary_like() || to->is_binary_like() ||
          !CanConformPrimitive(from, *to, options)) {
        return refuse();
      }
      return CastPrimitive(*column, to);
  }
}

}  // namespace

int SignedIntegerWidth(TypeId id) {
  switch (id) {
    case TypeId::kInt8:
      return 1;
    case TypeId::kInt16:
      return 2;
    case TypeId::kInt32:
      return 4;
    case TypeId::kInt64:
      return 8;
    default:
      return 0;
  }
}

std::optional<size_t> FindFieldIgnoringCase(const std::vector<Field>& fields,
                                            std::string_view name) {
  std::optional<size_t> found;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) {
      return i;
    }
    if (EqualsIgnoringCase(fields[i].name, name)) {
      if (found.has_value()) {
        return std::nullopt;  // ambiguous
      }
      found = i;
    }
  }
  return found;
}

bool CanConform(const DataType& from, const DataType& to, ConformOptions options) {
  if (from.Equals(to)) {
    return true;
  }
  if (from.id() != to.id() && (from.is_nested() || to.is_nested())) {
    return false;
  }
  switch (to.id()) {
    case TypeId::kStruct: {
      std::vector<bool> used(from.fields().size(), false);
      for (const Field& field : to.fields()) {
        std::optional<size_t> i = FindFieldIgnoringCase(from.fields(), field.name);
        if (!i.has_value()) {
          if (!field.nullable) {
            return false;
          }
          continue;
        }
        used[*i] = true;
        if (!CanConform(*from.fields()[*i].type, *field.type, options)) {
          return false;
        }
      }
      return std::all_of(used.begin(), used.end(), [](bool u) { return u; });
    }
    case TypeId::kList:
      return CanConform(*from.element().type, *to.element().type, options);
    case TypeId::kMap:
      return CanConform(*from.key().type, *to.key().type, options) &&
             CanConform(*from.value().type, *to.value().type, options);
    default:
      return !from.is_binary_like() && !to.is_binary_like() &&
             CanConformPrimitive(from, to, options);
  }
}

Result<std::unique_ptr<Column>> ConformColumn(std::unique_ptr<Column> column, const DataTypePtr& to,
                                              std::string_view name, ConformOptions options) {
  if (!CanConform(*column->type(), *to, options)) {
    return InvalidArgument("column '{}': {} does not convert to {}", name,
                           column->type()->ToString(), to->ToString());
  }
  return Conform(std::move(column), to, std::string(name), options);
}

}  // namespace ferry::columnar
