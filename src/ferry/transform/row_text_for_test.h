// Test-only: one row of a RecordBatch as compact text, so decoder and expression tests can state
// whole rows: {id: 1, tags: ["a"], m: {"k": 2}, ts: 2026-11-30T07:10:00, d: 2026-11-30,
// dec: 12.50, bin: 0x00ff, missing: null}. Timestamps print as UTC (or wall clock for NTZ).
#pragma once

#include <fmt/format.h>

#include <string>

#include "ferry/columnar/record_batch.h"
#include "ferry/transform/datetime_cast.h"

namespace ferry::transform {

inline std::string DecimalText(columnar::Int128 v, int32_t scale) {
  bool neg = v < 0;
  auto mag = static_cast<columnar::UInt128>(neg ? -v : v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(mag % 10)));
    mag /= 10;
  } while (mag > 0);
  while (static_cast<int32_t>(digits.size()) <= scale) {
    digits.insert(digits.begin(), '0');
  }
  if (scale > 0) {
    digits.insert(digits.end() - scale, '.');
  }
  return (neg ? "-" : "") + digits;
}

inline std::string QuotedForTest(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

inline std::string CellText(const columnar::Column& col, int64_t row) {
  using columnar::TypeId;
  if (col.IsNull(row)) {
    return "null";
  }
  const columnar::DataType& t = *col.type();
  switch (t.id()) {
    case TypeId::kBoolean:
      return col.As<columnar::BooleanColumn>()->Value(row) ? "true" : "false";
    case TypeId::kString:
    case TypeId::kJson:
      return QuotedForTest(col.As<columnar::BinaryColumn>()->Value(row));
    case TypeId::kBinary:
    case TypeId::kFixedBinary: {
      std::string out = "0x";
      for (char c : col.As<columnar::BinaryColumn>()->Value(row)) {
        out += fmt::format("{:02x}", static_cast<uint8_t>(c));
      }
      return out;
    }
    case TypeId::kDate: {
      std::string out;
      FormatDateText(col.As<columnar::DateColumn>()->Value(row), &out);
      return out;
    }
    case TypeId::kTimestamp: {
      int64_t v = col.As<columnar::TimestampColumn>()->Value(row);
      if (t.unit() != columnar::TimeUnit::kMicros) {
        return fmt::format("{}{}", v, t.unit() == columnar::TimeUnit::kMillis ? "ms" : "ns");
      }
      std::string out;
      FormatLocalTimestampText(v, &out);
      out[out.find(' ')] = 'T';
      return out;
    }
    case TypeId::kDecimal:
      return DecimalText(col.As<columnar::DecimalColumn>()->Value(row), t.scale());
    case TypeId::kStruct: {
      const auto& s = *col.As<columnar::StructColumn>();
      std::string out = "{";
      for (int i = 0; i < s.num_children(); i++) {
        out += fmt::format("{}{}: {}", i ? ", " : "", t.fields()[static_cast<size_t>(i)].name,
                           CellText(s.child(i), row));
      }
      return out + "}";
    }
    case TypeId::kList: {
      const auto& l = *col.As<columnar::ListColumn>();
      std::string out = "[";
      for (int64_t i = l.offsets()[static_cast<size_t>(row)];
           i < l.offsets()[static_cast<size_t>(row) + 1]; i++) {
        out += (i > l.offsets()[static_cast<size_t>(row)] ? ", " : "") + CellText(l.child(), i);
      }
      return out + "]";
    }
    case TypeId::kMap: {
      const auto& m = *col.As<columnar::MapColumn>();
      std::string out = "{";
      for (int64_t i = m.offsets()[static_cast<size_t>(row)];
           i < m.offsets()[static_cast<size_t>(row) + 1]; i++) {
        out += (i > m.offsets()[static_cast<size_t>(row)] ? ", " : "") + CellText(m.keys(), i) +
               ": " + CellText(m.values(), i);
      }
      return out + "}";
    }
    default:
      return columnar::VisitPrimitive(
          t.id(), [&]<typename C>(C*) { return fmt::format("{}", col.As<C>()->Value(row)); });
  }
}

inline std::string RowText(const columnar::RecordBatch& batch, int64_t row) {
  std::string out = "{";
  for (int i = 0; i < batch.num_columns(); i++) {
    out += fmt::format("{}{}: {}", i ? ", " : "", batch.schema().field(i).name,
                       CellText(batch.column(i), row));
  }
  return out + "}";
}

}  // namespace ferry::transform
