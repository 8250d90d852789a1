// The JSON decoder's part in schema evolution: type inference for new fields (json_infer.h) and
// the observations the decoder reports (decoder.h), only when asked and only off the fast path.
#include <gtest/gtest.h>

#include <string>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/schema_for_test.h"
#include "ferry/transform/json_decoder.h"
#include "ferry/transform/json_infer.h"

namespace ferry::transform {
namespace {

using columnar::RecordBatch;
using columnar::SchemaPtr;

using columnar::Ddl;

std::string Inferred(std::string_view json) {
  Result<columnar::DataTypePtr> t = InferJsonType(json);
  if (!t.ok()) {
    return "ERROR";
  }
  return *t == nullptr ? "(wait)" : (*t)->ToString();
}

TEST(JsonInferTest, Rules) {
  EXPECT_EQ(Inferred("42"), "BIGINT");
  EXPECT_EQ(Inferred("-9223372036854775808"), "BIGINT");
  EXPECT_EQ(Inferred("9223372036854775808"), "DOUBLE");
  EXPECT_EQ(Inferred("4.0"), "DOUBLE");
  EXPECT_EQ(Inferred("1e3"), "DOUBLE");
  EXPECT_EQ(Inferred("true"), "BOOLEAN");
  EXPECT_EQ(Inferred(R"("2024-01-01")"), "STRING");
  EXPECT_EQ(Inferred("null"), "(wait)");
  EXPECT_EQ(Inferred("{}"), "(wait)");
  EXPECT_EQ(Inferred("[]"), "(wait)");
  EXPECT_EQ(Inferred("[null, null]"), "(wait)");
  EXPECT_EQ(Inferred(R"({"a": null, "b": {"c": null}})"), "(wait)");
  EXPECT_EQ(Inferred("[1, 2.5, null]"), "ARRAY<DOUBLE>");
  EXPECT_EQ(Inferred(R"([1, "x"])"), "ARRAY<BIGINT>");  // first wins; "x" is then a bad record
  EXPECT_EQ(Inferred(R"({"a": 1, "b": {"c": "x", "d": null}, "e\u00e9": [true]})"),
            "STRUCT<a: BIGINT, b: STRUCT<c: STRING>, `eé`: ARRAY<BOOLEAN>>");
  EXPECT_EQ(Inferred(R"([{"a": 1}, {"b": 2.5}, {"a": 0.5}])"),
            "ARRAY<STRUCT<a: DOUBLE, b: DOUBLE>>");
  std::string deep;
  for (int i = 0; i < 40; ++i) {
    deep += "[";
  }
  deep += "1";
  for (int i = 0; i < 40; ++i) {
    deep += "]";
  }
  EXPECT_EQ(Inferred(deep), "ERROR");
}

struct Observed {
  Status status;
  std::vector<std::string> seen;  // "path TYPE" or "path TYPE (misfit)"
};

Observed Decode(JsonDecoder& decoder, RecordBatch& batch, std::string_view json) {
  Observed out;
  out.status = decoder.Append(json, &batch);
  for (const FieldObservation& o : decoder.TakeObservations()) {
    std::string path;
    for (const std::string& p : o.path) {
      path += (path.empty() ? "" : ".") + p;
    }
    out.seen.push_back(path + " " + (o.type ? o.type->ToString() : "(wait)") +
                       (o.missing ? "" : " (misfit)"));
  }
  return out;
}

TEST(JsonObserveTest, ReportsUnknownFieldsAtEveryDepth) {
  SchemaPtr schema =
      Ddl("id BIGINT, loc STRUCT<lat: DOUBLE>, items ARRAY<STRUCT<sku: STRING>>, "
          "m MAP<STRING, STRUCT<q: INT>>");
  auto decoder = *JsonDecoder::Create(schema, {.observe = true});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  Observed o =
      Decode(*decoder, batch,
             R"({"id": 1, "loc": {"lat": 1.5, "alt": 20}, "items": [{"sku": "a", "qty": 2}],
                          "m": {"k": {"q": 1, "note": "x"}}, "tags": ["a"], "nothing": null})");
  ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(o.seen, (std::vector<std::string>{"loc.alt BIGINT", "items.element.qty BIGINT",
                                              "m.value.note STRING", "tags ARRAY<STRING>",
                                              "nothing (wait)"}));
  EXPECT_EQ(batch.num_rows(), 1);
  // Case-insensitive: ID and LOC.LAT are the columns id and loc.lat.
  o = Decode(*decoder, batch, R"({"ID": 2, "LOC": {"LAT": 2.5}})");
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.seen.empty());
  EXPECT_EQ(batch.column(0).As<columnar::Int64Column>()->Value(1), 2);
}

TEST(JsonObserveTest, ReportsValuesThatNeedAWiderType) {
  SchemaPtr schema = Ddl("i INT, f FLOAT, d DECIMAL(5,2), day DATE, n BIGINT");
  auto decoder = *JsonDecoder::Create(
      schema, {.observe = true, .observe_misfits = true, .dates_keep_time = true});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  struct Case {
    const char* json;
    const char* seen;
  };
  const Case cases[] = {
      {R"({"i": 3000000000})", "i BIGINT (misfit)"},
      {R"({"i": 40000})", ""},  // fits INT
      {R"({"i": 1.5})", "i DOUBLE (misfit)"},
      {R"({"f": 1e300})", "f DOUBLE (misfit)"},
      {R"({"d": 12345.5})", "d DECIMAL(7,2) (misfit)"},
      {R"({"d": "123456.25"})", "d DECIMAL(8,2) (misfit)"},
      {R"({"day": "2024-09-09T12:34:56"})", "day TIMESTAMP_NTZ (misfit)"},
      {R"({"day": "2024-09-09T00:00:00"})", ""},  // midnight: a date
      {R"({"n": 1.5})", "n DOUBLE (misfit)"},
      {R"({"i": "abc"})", ""},  // no wider type holds it: a bad record, nothing observed
  };
  for (const Case& c : cases) {
    Observed o = Decode(*decoder, batch, c.json);
    std::string seen = o.seen.empty() ? "" : o.seen[0];
    EXPECT_EQ(seen, c.seen) << c.json;
    EXPECT_EQ(o.status.ok(), seen.empty() && std::string_view(c.json) != R"({"i": "abc"})")
        << c.json << ": " << o.status.ToString();
  }
}

TEST(JsonObserveTest, NothingWithoutObserve) {
  SchemaPtr schema = Ddl("id BIGINT, i INT");
  auto decoder = *JsonDecoder::Create(schema, {});
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  EXPECT_TRUE(decoder->Append(R"({"id": 1, "extra": 2, "ID": 3})", &batch).ok());
  EXPECT_FALSE(decoder->Append(R"({"i": 3000000000})", &batch).ok());
  EXPECT_FALSE(decoder->has_observations());
  // Without observe a differently cased key is an unknown field, as before.
  EXPECT_EQ(batch.column(0).As<columnar::Int64Column>()->Value(0), 1);
}

}  // namespace
}  // namespace ferry::transform
