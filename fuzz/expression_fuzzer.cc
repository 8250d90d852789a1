// libFuzzer target: Spark SQL expression text (transform/expression.h), compiled against a fixed
// schema and, when it compiles, evaluated on a four-row batch (values, nulls, edge values).
// Compile must return a value or InvalidArgument; Evaluate must return one value of the
// compiled type per row (Spark semantics with ANSI off: it never fails). Anything else aborts.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/check.h"
#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/expression.h"
#include "ferry/transform/json_decoder.h"

namespace {

constexpr std::string_view kSchema =
    "id BIGINT, n INT, s STRING, d DOUBLE, b BOOLEAN, ts TIMESTAMP, dt DATE, "
    "dec DECIMAL(10,2), bin BINARY, tags ARRAY<STRING>, m MAP<STRING, INT>, "
    "st STRUCT<x: INT, y: STRING, z: ARRAY<DOUBLE>>";

constexpr std::string_view kRows[] = {
    R"({"id": 1, "n": 7, "s": "07/04/2023 - 12:30:00 +0200", "d": 1.5, "b": true,
        "ts": "2023-07-04T10:30:00Z", "dt": "2023-07-04", "dec": 12.34, "bin": "AAEC",
        "tags": ["a", "b,c", ""], "m": {"k": 1, "l": null}, "st": {"x": 1, "y": "é", "z": [1.0]}})",
    R"({"id": null})",
    R"({"id": -9223372036854775808, "n": -2147483648, "s": "", "d": -0.0, "b": false,
        "ts": "1900-01-01T00:00:00Z", "dt": "0001-01-01", "dec": -99999999.99, "tags": [],
        "m": {}, "st": {"z": []}})",
    R"({"id": 9223372036854775807, "n": 2147483647, "s": "{\"a\":[1,{\"b\":null}]}",
        "d": 1e308, "ts": "9999-12-31T23:59:59.999999Z", "dt": "9999-12-31",
        "dec": 99999999.99, "tags": [null], "st": null})",
};

struct Fixture {
  ferry::columnar::SchemaPtr schema;
  ferry::columnar::RecordBatch batch;
};

const Fixture& GetFixture() {
  static const Fixture* fixture = [] {
    auto parsed = ferry::columnar::ParseDdlSchema(kSchema);
    FERRY_CHECK(parsed.ok());
    auto* f = new Fixture;
    f->schema = std::make_shared<const ferry::columnar::Schema>(std::move(*parsed));
    f->batch = ferry::columnar::RecordBatch::MakeEmpty(f->schema);
    auto decoder = ferry::transform::JsonDecoder::Create(f->schema, {});
    FERRY_CHECK(decoder.ok());
    for (std::string_view row : kRows) {
      ferry::Status st = (*decoder)->Append(row, &f->batch);
      FERRY_CHECK_MSG(st.ok(), st.ToString());
    }
    return f;
  }();
  return *fixture;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Fixture& fixture = GetFixture();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ferry::transform::ExpressionOptions options;
  options.time_zone = "America/Los_Angeles";
  options.now = [] { return int64_t{1700000000123456}; };
  auto expr = ferry::transform::Expression::Compile(text, *fixture.schema, options);
  if (!expr.ok()) {
    FERRY_CHECK_MSG(expr.status().code() == ferry::StatusCode::kInvalidArgument,
                    expr.status().ToString());
    return 0;
  }
  std::unique_ptr<ferry::columnar::Column> column = (*expr)->Evaluate(fixture.batch);
  FERRY_CHECK(column != nullptr);
  FERRY_CHECK(column->length() == fixture.batch.num_rows());
  FERRY_CHECK(column->type()->Equals(*(*expr)->type()));
  if (column->type()->id() == ferry::columnar::TypeId::kBoolean) {
    auto rows = ferry::transform::Expression::TrueRows(*column);
    FERRY_CHECK(static_cast<int64_t>(rows.size()) <= column->length());
  }
  // The column must be well formed and hold no null where the expression says it cannot.
  std::vector<std::unique_ptr<ferry::columnar::Column>> columns;
  columns.push_back(std::move(column));
  auto schema = std::make_shared<const ferry::columnar::Schema>(
      std::vector<ferry::columnar::Field>{{"r", (*expr)->type(), (*expr)->nullable(), {}}});
  ferry::columnar::RecordBatch result(schema, std::move(columns));
  ferry::Status valid = result.Validate();
  FERRY_CHECK_MSG(valid.ok(), valid.ToString() + " for: " + std::string(text));
  return 0;
}
