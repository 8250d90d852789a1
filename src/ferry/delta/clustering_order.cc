#include "ferry/delta/clustering_order.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string_view>

#include "ferry/columnar/column.h"
#include "ferry/columnar/column_conform.h"

namespace ferry::delta {
namespace {

// The field of `fields` a path segment names: by physical name under column mapping, else by
// name ignoring case.
std::optional<size_t> FindSegment(const std::vector<columnar::Field>& fields,
                                  std::string_view segment, ColumnMappingMode mode) {
  if (mode != ColumnMappingMode::kNone) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (PhysicalName(fields[i]).value_or(fields[i].name) == segment) {
        return i;
      }
    }
    return std::nullopt;
  }
  return columnar::FindFieldIgnoringCase(fields, segment);
}

// Step 1-2 for one column: spread ranks, one per row (0 for null).
template <typename Less>
std::vector<uint32_t> SpreadRanks(const std::vector<uint8_t>& valid, Less less) {
  const auto n = static_cast<int64_t>(valid.size());
  std::vector<int64_t> rows;
  rows.reserve(valid.size());
  for (int64_t row = 0; row < n; ++row) {
    if (valid[static_cast<size_t>(row)] != 0) {
      rows.push_back(row);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), less);
  std::vector<uint64_t> rank(valid.size(), 0);
  uint64_t distinct = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    if (k == 0 || less(rows[k - 1], rows[k])) {
      ++distinct;
    }
    rank[static_cast<size_t>(rows[k])] = distinct;
  }
  std::vector<uint32_t> out(valid.size());
  for (size_t i = 0; i < rank.size(); ++i) {
    // rank <= distinct, so the quotient is below 2^32.
    out[i] = static_cast<uint32_t>((rank[i] << 32) / (distinct + 1));
  }
  return out;
}

Result<std::vector<uint32_t>> ColumnRanks(const columnar::Column& column,
                                          const std::vector<uint8_t>& valid) {
  const columnar::TypeId id = column.type_id();
  if (column.type()->is_binary_like()) {
    const auto* c = column.As<columnar::BinaryColumn>();
    return SpreadRanks(valid, [c](int64_t a, int64_t b) { return c->Value(a) < c->Value(b); });
  }
  if (column.type()->is_nested()) {
    return NotSupported("a clustering column of type {} cannot be ordered",
                        column.type()->ToString());
  }
  return columnar::VisitPrimitive(id, [&]<typename C>(C*) -> Result<std::vector<uint32_t>> {
    const auto* c = column.As<C>();
    using T = typename C::ValueType;
    if constexpr (std::is_floating_point_v<T>) {
      // NaN after every number (Spark orders NaN above +infinity).
      return SpreadRanks(valid, [c](int64_t a, int64_t b) {
        const T x = c->Value(a);
        const T y = c->Value(b);
        if (std::isnan(x) || std::isnan(y)) {
          return !std::isnan(x) && std::isnan(y);
        }
        return x < y;
      });
    } else {
      return SpreadRanks(valid, [c](int64_t a, int64_t b) { return c->Value(a) < c->Value(b); });
    }
  });
}

// Z-order comparison of two points without building their interleaved keys: the dimension whose
// differing bit is the most significant decides (the classic "less_msb" test).
bool ZLess(const uint32_t* a, const uint32_t* b, size_t dims) {
  size_t decisive = 0;
  uint32_t highest = 0;
  for (size_t d = 0; d < dims; ++d) {
    const uint32_t diff = a[d] ^ b[d];
    if (highest < diff && highest < (highest ^ diff)) {
      decisive = d;
      highest = diff;
    }
  }
  return a[decisive] < b[decisive];
}

}  // namespace

Result<std::vector<ColumnPath>> ResolveClusteringColumns(const columnar::Schema& schema,
                                                         const std::vector<std::string>& columns,
                                                         ColumnMappingMode mode) {
  std::vector<ColumnPath> paths;
  for (const std::string& column : columns) {
    ColumnPath path;
    const std::vector<columnar::Field>* fields = &schema.fields();
    const columnar::Field* field = nullptr;
    std::string_view rest = column;
    while (true) {
      const size_t dot = rest.find('.');
      std::string_view segment = rest.substr(0, dot);
      if (fields == nullptr) {
        return NotSupported("clustering column '{}' is not in the table's schema", column);
      }
      std::optional<size_t> index = FindSegment(*fields, segment, mode);
      if (!index.has_value()) {
        return NotSupported("clustering column '{}' is not in the table's schema", column);
      }
      path.push_back(static_cast<int>(*index));
      field = &(*fields)[*index];
      if (dot == std::string_view::npos) {
        break;
      }
      rest = rest.substr(dot + 1);
      fields = field->type->id() == columnar::TypeId::kStruct ? &field->type->fields() : nullptr;
    }
    if (field->type->is_nested()) {
      return NotSupported("clustering column '{}' is of type {}, which cannot be ordered", column,
                          field->type->ToString());
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

Result<std::vector<int64_t>> ClusteringOrder(const columnar::RecordBatch& batch,
                                             const std::vector<ColumnPath>& paths) {
  const int64_t n = batch.num_rows();
  if (n >= (int64_t{1} << 32)) {
    return InvalidArgument("cannot cluster {} rows at once (at most 2^32 - 1)", n);
  }
  const size_t dims = paths.size();
  // keys[row * dims + d]: the spread rank of row in dimension d.
  std::vector<uint32_t> keys(static_cast<size_t>(n) * dims);
  for (size_t d = 0; d < dims; ++d) {
    const columnar::Column* column = &batch.column(paths[d][0]);
    std::vector<uint8_t> valid(column->validity().begin(), column->validity().end());
    for (size_t step = 1; step < paths[d].size(); ++step) {
      // A field under a null struct is null.
      column = &column->As<columnar::StructColumn>()->child(paths[d][step]);
      for (int64_t row = 0; row < n; ++row) {
        if (column->IsNull(row)) {
          valid[static_cast<size_t>(row)] = 0;
        }
      }
    }
    FERRY_ASSIGN_OR_RETURN(std::vector<uint32_t> ranks, ColumnRanks(*column, valid));
    for (int64_t row = 0; row < n; ++row) {
      keys[static_cast<size_t>(row) * dims + d] = ranks[static_cast<size_t>(row)];
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (dims == 0) {
    return order;
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return ZLess(&keys[static_cast<size_t>(a) * dims], &keys[static_cast<size_t>(b) * dims], dims);
  });
  return order;
}

}  // namespace ferry::delta
