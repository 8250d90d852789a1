// Test-only helpers of the reader's conformance tests (file_reader_test.cc,
// file_reader_expected_test.cc): files of apache/parquet-testing read whole, and rows rendered in
// DuckDB's JSON notation so that they compare with rows DuckDB printed.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/parquet/file_reader.h"

namespace ferry::parquet::testing {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::RecordBatch;
using columnar::TypeId;

inline const std::string kDir = FERRY_TESTDATA_DIR "/parquet-testing/";

inline RecordBatch ReadFile(const std::string& name, ReaderOptions options = {}) {
  auto reader = FileReader::OpenLocal(kDir + name, options);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) {
    return {};
  }
  auto batch = (*reader)->ReadAll();
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  if (!batch.ok()) {
    return {};
  }
  EXPECT_TRUE(batch->Validate().ok()) << name << ": " << batch->Validate().ToString();
  return std::move(*batch);
}

inline Status ReadStatus(const std::string& name, ReaderOptions options = {}) {
  auto reader = FileReader::OpenLocal(kDir + name, options);
  if (!reader.ok()) {
    return reader.status();
  }
  return (*reader)->ReadAll().status();
}

// DuckDB's JSON notation: integers unquoted, decimals as quoted text, maps as lists of
// {"key","value"}, NaN as "NaN"; timestamps and dates as their raw integers.
inline std::string Render(const Column& c, int64_t row) {
  if (c.IsNull(row)) {
    return "null";
  }
  switch (c.type_id()) {
    case TypeId::kString:
    case TypeId::kJson:
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
      return "\"" + std::string(c.As<BinaryColumn>()->Value(row)) + "\"";
    case TypeId::kStruct: {
      const auto& s = *c.As<columnar::StructColumn>();
      std::string out = "{";
      for (int i = 0; i < s.num_children(); i++) {
        out += (i > 0 ? "," : "") + ("\"" + s.type()->fields()[static_cast<size_t>(i)].name) +
               "\":" + Render(s.child(i), row);
      }
      return out + "}";
    }
    case TypeId::kList: {
      const auto& l = *c.As<columnar::ListColumn>();
      std::string out = "[";
      for (int64_t i = l.offsets()[static_cast<size_t>(row)];
           i < l.offsets()[static_cast<size_t>(row) + 1]; i++) {
        out += (i > l.offsets()[static_cast<size_t>(row)] ? "," : "") + Render(l.child(), i);
      }
      return out + "]";
    }
    case TypeId::kMap: {
      const auto& m = *c.As<columnar::MapColumn>();
      std::string out = "[";
      for (int64_t i = m.offsets()[static_cast<size_t>(row)];
           i < m.offsets()[static_cast<size_t>(row) + 1]; i++) {
        out += (i > m.offsets()[static_cast<size_t>(row)] ? "," : "") + std::string("{\"key\":") +
               Render(m.keys(), i) + ",\"value\":" + Render(m.values(), i) + "}";
      }
      return out + "]";
    }
    case TypeId::kDecimal: {
      auto v = c.As<columnar::DecimalColumn>()->Value(row);
      int scale = c.type()->scale();
      int64_t unit = 1;
      for (int i = 0; i < scale; i++) {
        unit *= 10;
      }
      auto whole = static_cast<int64_t>(v / unit);
      auto frac = static_cast<int64_t>(v % unit);
      return fmt::format("\"{}{}.{:0{}}\"", v < 0 && whole == 0 ? "-" : "", whole, std::abs(frac),
                         scale);
    }
    case TypeId::kBoolean:
      return c.As<columnar::BooleanColumn>()->Value(row) != 0 ? "true" : "false";
    case TypeId::kFloat32:
    case TypeId::kFloat64: {
      double v = c.type_id() == TypeId::kFloat32 ? c.As<columnar::FloatColumn>()->Value(row)
                                                 : c.As<columnar::DoubleColumn>()->Value(row);
      return std::isnan(v) ? "\"NaN\"" : fmt::format("{}", v);
    }
    default:
      return columnar::VisitPrimitive(c.type_id(), [&]<typename C>(C*) {
        return fmt::format("{}", static_cast<int64_t>(static_cast<const C&>(c).Value(row)));
      });
  }
}

inline std::string RenderRow(const RecordBatch& b, int64_t row) {
  std::string out = "{";
  for (int i = 0; i < b.num_columns(); i++) {
    out +=
        (i > 0 ? "," : "") + ("\"" + b.schema().field(i).name) + "\":" + Render(b.column(i), row);
  }
  return out + "}";
}

inline void ExpectRows(const std::string& file, const std::vector<std::string>& expected) {
  RecordBatch b = ReadFile(file);
  ASSERT_EQ(b.num_rows(), static_cast<int64_t>(expected.size())) << file;
  for (size_t i = 0; i < expected.size(); i++) {
    EXPECT_EQ(RenderRow(b, static_cast<int64_t>(i)), expected[i]) << file << " row " << i;
  }
}

}  // namespace ferry::parquet::testing
