#include "ferry/transform/json_decoder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/schema_for_test.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform {
namespace {

using columnar::RecordBatch;
using columnar::SchemaPtr;

using columnar::Ddl;

// Decodes messages into one batch; each Append's status is kept.
struct Harness {
  explicit Harness(std::string_view ddl, JsonDecoderOptions options = {})
      : schema(Ddl(ddl)), batch(RecordBatch::MakeEmpty(schema)) {
    Result<std::unique_ptr<JsonDecoder>> d = JsonDecoder::Create(schema, std::move(options));
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (d.ok()) {
      decoder = std::move(*d);
    }
  }
  // The decoded row as text, or "ERROR: message".
  std::string Decode(std::string_view json) {
    int64_t before = batch.num_rows();
    Status st = decoder->Append(json, &batch);
    if (!st.ok()) {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
      EXPECT_EQ(batch.num_rows(), before) << "a failed message changed the batch";
      EXPECT_TRUE(batch.Validate().ok()) << batch.Validate().ToString();
      return "ERROR: " + st.message();
    }
    EXPECT_EQ(batch.num_rows(), before + 1);
    Status valid = batch.Validate();
    EXPECT_TRUE(valid.ok()) << valid.ToString();
    return RowText(batch, before);
  }

  SchemaPtr schema;
  RecordBatch batch;
  std::unique_ptr<JsonDecoder> decoder;
};

TEST(JsonDecoderTest, EveryType) {
  Harness h(
      "b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INT, i64 BIGINT, u64 UINT64, f FLOAT, d DOUBLE, "
      "s STRING, j JSON, bin BINARY, fx FIXED(2), dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, "
      "tsm TIMESTAMP_MILLIS, dec DECIMAL(12,2)");
  EXPECT_EQ(h.Decode(R"({"b": true, "i8": -128, "i16": 32767, "i32": -2147483648,
      "i64": 9223372036854775807, "u64": 18446744073709551615, "f": 1.5, "d": -2.25e-3,
      "s": "h\u00e9\n\"", "j": {"x": [1, 2]}, "bin": "aGk=", "fx": "AAE=", "dt": "2026-11-30",
      "ts": "2026-11-30T07:10:00.123456Z", "ntz": "2026-11-30 07:10:00+05:00",
      "tsm": "1970-01-01T00:00:01.5Z", "dec": 1234567890.12})"),
            "{b: true, i8: -128, i16: 32767, i32: -2147483648, i64: 9223372036854775807, "
            "u64: 18446744073709551615, f: 1.5, d: -0.00225, s: \"hé\\n\\\"\", "
            "j: \"{\\\"x\\\": [1, 2]}\", bin: 0x6869, fx: 0x0001, dt: 2026-11-30, "
            "ts: 2026-11-30T07:10:00.123456, ntz: 2026-11-30T07:10:00, tsm: 1500ms, "
            "dec: 1234567890.12}");
}

TEST(JsonDecoderTest, NestingStructsListsMaps) {
  Harness h(
      "id BIGINT, loc STRUCT<lat: DOUBLE, lon: DOUBLE>, tags ARRAY<STRING>, "
      "attrs MAP<STRING, STRING>, deep ARRAY<STRUCT<k: STRING, v: ARRAY<MAP<STRING, INT>>>>");
  EXPECT_EQ(h.Decode(R"({"id": 1, "loc": {"lon": 2.5, "lat": -1}, "tags": ["a", "b"],
      "attrs": {"x": "1", "y": null}, "deep": [{"k": "q", "v": [{"m": 1}, {}, null]}, null]})"),
            "{id: 1, loc: {lat: -1, lon: 2.5}, tags: [\"a\", \"b\"], attrs: {\"x\": \"1\", "
            "\"y\": null}, deep: [{k: \"q\", v: [{\"m\": 1}, {}, null]}, null]}");
  EXPECT_EQ(h.Decode(R"({"tags": [], "attrs": {}, "loc": null})"),
            "{id: null, loc: null, tags: [], attrs: {}, deep: null}");
}

TEST(JsonDecoderTest, NullsMissingAndRequiredFields) {
  Harness h(
      "id BIGINT NOT NULL, name STRING, s STRUCT<a: INT NOT NULL, b: INT>, "
      "l ARRAY<INT NOT NULL>");
  EXPECT_EQ(h.Decode(R"({"id": 7})"), "{id: 7, name: null, s: null, l: null}");
  EXPECT_EQ(h.Decode(R"({"id": 7, "name": null, "s": {"a": 1}})"),
            "{id: 7, name: null, s: {a: 1, b: null}, l: null}");
  EXPECT_EQ(h.Decode(R"({"name": "x"})"), "ERROR: field 'id': missing required field");
  EXPECT_EQ(h.Decode(R"({"id": null})"), "ERROR: field 'id': null in a NOT NULL field");
  EXPECT_EQ(h.Decode(R"({"id": 1, "s": {"b": 2}})"), "ERROR: field 's.a': missing required field");
  EXPECT_EQ(h.Decode(R"({"id": 1, "l": [1, null]})"),
            "ERROR: field 'l[1]': null in a NOT NULL field");
  EXPECT_EQ(h.batch.num_rows(), 2);
}

TEST(JsonDecoderTest, ErrorsNameTheFieldPathAndTheValue) {
  Harness h("loc STRUCT<lat: DOUBLE, lon: DOUBLE>, tags ARRAY<STRUCT<n: INT>>, m MAP<STRING, INT>");
  EXPECT_EQ(h.Decode(R"({"loc": {"lat": "abc"}})"),
            "ERROR: field 'loc.lat': expected a number, found string \"abc\"");
  EXPECT_EQ(h.Decode(R"({"tags": [{"n": 1}, {"n": true}]})"),
            "ERROR: field 'tags[1].n': expected an integer, found true");
  EXPECT_EQ(h.Decode(R"({"m": {"a": 1, "b": [2]}})"),
            "ERROR: field 'm.b': expected an integer, found an array");
  EXPECT_EQ(h.Decode(R"({"loc": 5})"), "ERROR: field 'loc': expected an object, found number 5");
  EXPECT_EQ(h.Decode(R"({"tags": {}})"), "ERROR: field 'tags': expected an array, found an object");
}

TEST(JsonDecoderTest, MalformedMessages) {
  Harness h("a INT");
  EXPECT_EQ(h.Decode("[1, 2]"), "ERROR: malformed message: expected a JSON object");
  EXPECT_EQ(h.Decode("42"), "ERROR: malformed message: expected a JSON object");
  EXPECT_NE(h.Decode("").find("ERROR: malformed JSON"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"a": 1)").find("ERROR: malformed"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"a": 1}})").find("ERROR: malformed"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"a": 1} x)").find("ERROR: malformed"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"a" 1})").find("ERROR: malformed"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"a": nul})").find("ERROR:"), std::string::npos);
  // Ignored fields are still checked: On-Demand alone would skip these by counting brackets.
  EXPECT_NE(h.Decode(R"({"a": 1, "junk": [tru]})").find("ERROR: field 'junk': malformed JSON"),
            std::string::npos);
  EXPECT_NE(h.Decode(R"({"a": 1, "junk": [1, 2}})").find("ERROR:"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"junk": {"x" 1}, "a": 1})").find("ERROR:"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"junk": 01, "a": 1})").find("ERROR:"), std::string::npos);
  EXPECT_NE(h.Decode("{\"junk\": \"a\tb\", \"a\": 1}").find("ERROR:"), std::string::npos);
  EXPECT_EQ(h.Decode(R"({"a": 1, "ok": [true, {"x": null}, "s", -1.5e3]})"), "{a: 1}");
  EXPECT_EQ(h.batch.num_rows(), 1);
}

TEST(JsonDecoderTest, InvalidUtf8IsAnError) {
  Harness h("s STRING");
  EXPECT_NE(h.Decode("{\"s\": \"a\xff\"}").find("ERROR: malformed JSON"), std::string::npos);
  EXPECT_NE(h.Decode("{\"other\": \"\xc0\xaf\", \"s\": \"x\"}").find("ERROR"), std::string::npos);
  EXPECT_NE(h.Decode("{\"s\": \"\\ud800\"}").find("ERROR"), std::string::npos);  // lone surrogate
  EXPECT_EQ(h.Decode("{\"s\": \"\\ud83d\\ude00 \xe2\x82\xac\"}"), "{s: \"\xF0\x9F\x98\x80 €\"}");
}

TEST(JsonDecoderTest, UnknownFieldsIgnoredOrKept) {
  JsonDecoderOptions options;
  options.unknown_fields_column = "_extra";
  Harness h("id INT, _extra STRING", options);
  EXPECT_EQ(h.Decode(R"({"id": 1, "x": {"y": [1, 2]}, "z\"q": "s", "n": null})"),
            "{id: 1, _extra: \"{\\\"x\\\":{\\\"y\\\": [1, 2]},\\\"z\\\\\\\"q\\\":\\\"s\\\","
            "\\\"n\\\":null}\"}");
  EXPECT_EQ(h.Decode(R"({"id": 2})"), "{id: 2, _extra: null}");
  Harness plain("id INT");
  EXPECT_EQ(plain.Decode(R"({"x": 1, "id": 3, "y": [{}]})"), "{id: 3}");
}

TEST(JsonDecoderTest, RepeatedKeyLastWinsAndDuplicateMapKeysFail) {
  Harness h("a INT, s STRUCT<x: INT>, m MAP<STRING, INT>");
  EXPECT_EQ(h.Decode(R"({"a": 1, "s": {"x": 1, "x": 2}, "a": 3})"), "{a: 3, s: {x: 2}, m: null}");
  EXPECT_EQ(h.Decode(R"({"m": {"k": 1, "j": 2, "k": 3}})"),
            "ERROR: field 'm': duplicate map key \"k\"");
}

TEST(JsonDecoderTest, IntegerRangesAndFractions) {
  Harness h("t TINYINT, i INT, l BIGINT, u UINT8");
  EXPECT_EQ(h.Decode(R"({"t": 127, "i": 3.0, "l": -9223372036854775808, "u": 255})"),
            "{t: 127, i: 3, l: -9223372036854775808, u: 255}");
  EXPECT_EQ(h.Decode(R"({"i": 1e3, "l": 12.50e1})"), "{t: null, i: 1000, l: 125, u: null}");
  EXPECT_EQ(h.Decode(R"({"t": 128})"), "ERROR: field 't': number 128 is out of range for TINYINT");
  EXPECT_EQ(h.Decode(R"({"u": -1})"), "ERROR: field 'u': number -1 is out of range for UINT8");
  EXPECT_EQ(h.Decode(R"({"i": 2147483648})"),
            "ERROR: field 'i': number 2147483648 is out of range for INT");
  EXPECT_EQ(h.Decode(R"({"l": 9223372036854775808})"),
            "ERROR: field 'l': number 9223372036854775808 is out of range for BIGINT");
  EXPECT_EQ(h.Decode(R"({"l": 1e30})"), "ERROR: field 'l': number 1e30 is out of range for BIGINT");
  EXPECT_EQ(h.Decode(R"({"i": 1.5})"), "ERROR: field 'i': number 1.5 is not an integer");
  EXPECT_EQ(h.Decode(R"({"l": 123456789012345678901234567890123456789012345})"),
            "ERROR: field 'l': number 123456789012345678901234567890123456789012345 is out of "
            "range for BIGINT");
}

TEST(JsonDecoderTest, FloatsAndHugeNumbers) {
  Harness h("f FLOAT, d DOUBLE");
  EXPECT_EQ(h.Decode(R"({"f": 3, "d": 1.7976931348623157e308})"),
            "{f: 3, d: 1.7976931348623157e+308}");
  EXPECT_EQ(h.Decode(R"({"f": 1e39})"), "ERROR: field 'f': number 1e39 is out of range for FLOAT");
  EXPECT_EQ(h.Decode(R"({"d": 1e400})"),
            "ERROR: field 'd': number 1e400 is out of range for DOUBLE");
  EXPECT_EQ(h.Decode(R"({"d": "NaN", "f": "-Infinity"})"), "{f: -inf, d: nan}");
  EXPECT_EQ(h.Decode(R"({"d": "1e400"})"),
            "ERROR: field 'd': string \"1e400\" is out of range for DOUBLE");
}

TEST(JsonDecoderTest, DecimalsAreExact) {
  Harness h("a DECIMAL(3,2), b DECIMAL(38,2), c DECIMAL(5,0)");
  EXPECT_EQ(h.Decode(R"({"a": 0.1, "b": 123456789012345678901234567890123456.78, "c": "42"})"),
            "{a: 0.10, b: 123456789012345678901234567890123456.78, c: 42}");
  // Rounded half up to the scale, as Spark does; 1e2 is exactly 100.
  EXPECT_EQ(h.Decode(R"({"a": 0.125, "b": -0.005, "c": 1e2})"), "{a: 0.13, b: -0.01, c: 100}");
  EXPECT_EQ(h.Decode(R"({"a": 9.995})"),
            "ERROR: field 'a': number 9.995 does not fit DECIMAL(3,2)");
  EXPECT_EQ(h.Decode(R"({"c": 123456})"),
            "ERROR: field 'c': number 123456 does not fit DECIMAL(5,0)");
  EXPECT_EQ(h.Decode(R"({"c": "12x"})"),
            "ERROR: field 'c': expected a decimal number, found string \"12x\"");
}

TEST(JsonDecoderTest, CoercionsBetweenStringsNumbersAndBooleans) {
  Harness h("s STRING, i INT, d DOUBLE, b BOOLEAN");
  EXPECT_EQ(h.Decode(R"({"s": 1.50, "i": " 42 ", "d": "2.5", "b": "TRUE"})"),
            "{s: \"1.50\", i: 42, d: 2.5, b: true}");
  EXPECT_EQ(h.Decode(R"({"s": false})"), "{s: \"false\", i: null, d: null, b: null}");
  EXPECT_EQ(h.Decode(R"({"s": [1, {"a": 2}]})"),
            "{s: \"[1, {\\\"a\\\": 2}]\", i: null, d: null, b: null}");
  EXPECT_EQ(h.Decode(R"({"b": 1})"), "ERROR: field 'b': expected a boolean, found number 1");
  EXPECT_EQ(h.Decode(R"({"b": "yes"})"),
            "ERROR: field 'b': expected a boolean, found string \"yes\"");
  EXPECT_EQ(h.Decode(R"({"i": "4x"})"),
            "ERROR: field 'i': expected an integer, found string \"4x\"");

  JsonDecoderOptions strict;
  strict.numbers_as_strings = false;
  strict.strings_as_numbers = false;
  Harness s("s STRING, i INT", strict);
  EXPECT_EQ(s.Decode(R"({"s": 1})"), "ERROR: field 's': expected a string, found number 1");
  EXPECT_EQ(s.Decode(R"({"i": "1"})"), "ERROR: field 'i': expected an integer, found string \"1\"");
  EXPECT_EQ(s.Decode(R"({"s": {"a": 1}})"), "{s: \"{\\\"a\\\": 1}\", i: null}");
}

TEST(JsonDecoderTest, TimestampsFromIsoStringsAndEpochNumbers) {
  JsonDecoderOptions paris;
  paris.time_zone = "Europe/Paris";
  Harness h("ts TIMESTAMP, ntz TIMESTAMP_NTZ", paris);
  // No offset: local to the configured zone (UTC+1 in winter, UTC+2 in summer).
  EXPECT_EQ(h.Decode(R"({"ts": "2026-01-15 10:00:00", "ntz": "2026-01-15 10:00:00"})"),
            "{ts: 2026-01-15T09:00:00, ntz: 2026-01-15T10:00:00}");
  EXPECT_EQ(h.Decode(R"({"ts": "2026-07-15T10:00"})"), "{ts: 2026-07-15T08:00:00, ntz: null}");
  EXPECT_EQ(h.Decode(R"({"ts": "2026-07-15T10:00:00-03:30"})"),
            "{ts: 2026-07-15T13:30:00, ntz: null}");
  EXPECT_EQ(h.Decode(R"({"ts": 1700000000})"), "{ts: 2023-11-14T22:13:20, ntz: null}");
  EXPECT_EQ(h.Decode(R"({"ts": 1700000000.25})"), "{ts: 2023-11-14T22:13:20.25, ntz: null}");
  EXPECT_EQ(h.Decode(R"({"ts": "1700000000"})"), "{ts: 2023-11-14T22:13:20, ntz: null}");
  EXPECT_EQ(h.Decode(R"({"ts": "2026-02-30 10:00:00"})"),
            "ERROR: field 'ts': expected a timestamp, found string \"2026-02-30 10:00:00\"");
  EXPECT_EQ(h.Decode(R"({"ts": true})"), "ERROR: field 'ts': expected a timestamp, found true");
  EXPECT_EQ(h.Decode(R"({"ts": 1e300})"),
            "ERROR: field 'ts': number 1e300 is out of range for a timestamp");
  // Found by json_decoder_fuzzer (signed overflow computing the microseconds).
  EXPECT_EQ(h.Decode(R"({"ts": "400046-01-01T10:30:00Z"})"),
            "ERROR: field 'ts': expected a timestamp, found string \"400046-01-01T10:30:00Z\"");

  JsonDecoderOptions millis;
  millis.epoch_unit = EpochUnit::kMillis;
  Harness m("ts TIMESTAMP", millis);
  EXPECT_EQ(m.Decode(R"({"ts": 1700000000123})"), "{ts: 2023-11-14T22:13:20.123}");
  JsonDecoderOptions micros;
  micros.epoch_unit = EpochUnit::kMicros;
  Harness u("ts TIMESTAMP", micros);
  EXPECT_EQ(u.Decode(R"({"ts": -1})"), "{ts: 1969-12-31T23:59:59.999999}");
}

TEST(JsonDecoderTest, CustomTimestampAndDateFormats) {
  JsonDecoderOptions options;
  options.timestamp_formats = {"MM/dd/yyyy - HH:mm:ss Z", "yyyyMMddHHmmss"};
  options.date_formats = {"dd.MM.yyyy"};
  options.time_zone = "America/New_York";
  Harness h("ts TIMESTAMP, d DATE", options);
  EXPECT_EQ(h.Decode(R"({"ts": "11/30/2026 - 07:10:00 +0000", "d": "30.11.2026"})"),
            "{ts: 2026-11-30T07:10:00, d: 2026-11-30}");
  EXPECT_EQ(h.Decode(R"({"ts": "20260101120000"})"), "{ts: 2026-01-01T17:00:00, d: null}");
  EXPECT_EQ(h.Decode(R"({"ts": "2026-01-01 12:00:00"})"),
            "ERROR: field 'ts': expected a timestamp, found string \"2026-01-01 12:00:00\"");
  EXPECT_EQ(h.Decode(R"({"d": "2026-11-30"})"),
            "ERROR: field 'd': expected a date, found string \"2026-11-30\"");
  Harness iso("d DATE");
  EXPECT_EQ(iso.Decode(R"({"d": "2024-02-29"})"), "{d: 2024-02-29}");
  EXPECT_EQ(iso.Decode(R"({"d": "2024-2-9T10:00"})"), "{d: 2024-02-09}");
  EXPECT_EQ(iso.Decode(R"({"d": "2023-02-29"})"),
            "ERROR: field 'd': expected a date, found string \"2023-02-29\"");
  EXPECT_EQ(iso.Decode(R"({"d": 19000})"),
            "ERROR: field 'd': expected a date string, found number 19000");
}

TEST(JsonDecoderTest, BinaryFromBase64) {
  Harness h("b BINARY, f FIXED(3)");
  EXPECT_EQ(h.Decode(R"({"b": "AP8", "f": "YWJj"})"), "{b: 0x00ff, f: 0x616263}");
  EXPECT_EQ(h.Decode(R"({"b": "_-8="})"), "{b: 0xffef, f: null}");
  EXPECT_EQ(h.Decode(R"({"b": "a!=="})"),
            "ERROR: field 'b': expected base64, found string \"a!==\"");
  EXPECT_EQ(h.Decode(R"({"f": "YWI="})"),
            "ERROR: field 'f': expected 3 bytes, found 2 in base64 string \"YWI=\"");
  EXPECT_EQ(h.Decode(R"({"b": 12})"),
            "ERROR: field 'b': expected a base64 string, found number 12");
}

TEST(JsonDecoderTest, FailedMessageLeavesForeignAndOwnColumnsUnchanged) {
  // `_offset` belongs to the pipeline: the decoder neither fills nor truncates it.
  JsonDecoderOptions options;
  options.columns = {"id", "items"};
  Harness h("_offset BIGINT, id BIGINT, items ARRAY<STRUCT<k: STRING, v: ARRAY<INT>>>", options);
  EXPECT_EQ(h.decoder->output_columns(), (std::vector<int>{1, 2}));
  auto* offsets = h.batch.mutable_column(0)->As<columnar::Int64Column>();
  offsets->Append(100);
  ASSERT_TRUE(h.decoder->Append(R"({"id": 1, "items": [{"k": "a", "v": [1]}]})", &h.batch).ok());
  offsets->Append(101);
  Status bad = h.decoder->Append(
      R"({"id": 2, "items": [{"k": "b", "v": [1, 2]}, {"k": "c", "v": [3, "x"]}]})", &h.batch);
  EXPECT_EQ(bad.message(), "field 'items[1].v[1]': expected an integer, found string \"x\"");
  EXPECT_EQ(h.batch.column(1).length(), 1);
  EXPECT_EQ(h.batch.column(2).length(), 1);
  const auto& items = h.batch.column(2).As<columnar::ListColumn>()->child();
  EXPECT_EQ(items.length(), 1);
  ASSERT_TRUE(h.decoder->Append(R"({"id": 3, "items": [{"k": "d", "v": []}]})", &h.batch).ok());
  EXPECT_EQ(offsets->length(), 2);
  EXPECT_TRUE(h.batch.Validate().ok());
  EXPECT_EQ(RowText(h.batch, 1), "{_offset: 101, id: 3, items: [{k: \"d\", v: []}]}");
}

TEST(JsonDecoderTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  Harness h("a INT, s STRING, l ARRAY<STRING>");
  EXPECT_NE(h.Decode(R"({"x": )" + deep + R"(, "a": 1})").find("nesting deeper than 1000"),
            std::string::npos);
  EXPECT_NE(h.Decode(R"({"s": )" + deep + "}").find("ERROR"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"l": )" + deep + "}").find("ERROR"), std::string::npos);
  std::string objects;
  for (int i = 0; i < 100000; i++) {
    objects += "{\"a\":";
  }
  objects += "1" + std::string(100000, '}');
  EXPECT_NE(h.Decode(objects).find("ERROR"), std::string::npos);
  std::string ok = "{\"s\": " + std::string(999, '[') + std::string(999, ']') + "}";
  EXPECT_EQ(h.Decode(ok).substr(0, 10), "{a: null, ");
}

TEST(JsonDecoderTest, TenMegabyteMessage) {
  Harness h("id INT, big STRING, nums ARRAY<BIGINT>");
  std::string big(10 << 20, 'x');
  std::string msg = "{\"id\": 1, \"big\": \"" + big + "\", \"nums\": [";
  for (int i = 0; i < 100000; i++) {
    fmt::format_to(std::back_inserter(msg), "{}{}", i ? "," : "", i);
  }
  msg += "]}";
  ASSERT_TRUE(h.decoder->Append(msg, &h.batch).ok());
  const auto& col = *h.batch.column(1).As<columnar::BinaryColumn>();
  EXPECT_EQ(col.Value(0).size(), big.size());
  const auto& nums = *h.batch.column(2).As<columnar::ListColumn>();
  EXPECT_EQ(nums.ListLength(0), 100000);
  EXPECT_EQ(nums.child().As<columnar::Int64Column>()->Value(99999), 99999);
  // The next, small message reuses the buffers.
  EXPECT_EQ(h.Decode(R"({"id": 2})"), "{id: 2, big: null, nums: null}");
}

// Mutated messages decode or fail with InvalidArgument; the batch stays valid either way.
TEST(JsonDecoderTest, MutatedMessagesNeverCorruptTheBatch) {
  Harness h(
      "id BIGINT NOT NULL, s STRING, l ARRAY<STRUCT<k: STRING, v: DECIMAL(9,2)>>, "
      "m MAP<STRING, DOUBLE>, ts TIMESTAMP, b BINARY");
  const std::string seed =
      R"({"id": 1, "s": "h\u00e9", "l": [{"k": "a", "v": 1.25}, {"k": null, "v": "7"}],)"
      R"( "m": {"x": 1e3}, "ts": "2026-01-01T00:00:00Z", "b": "AAE=", "extra": [true, null]})";
  ASSERT_TRUE(h.decoder->Append(seed, &h.batch).ok());
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]\":,0123456789.eE-+ntrufalsx\\\xff\xc3";
  for (int iter = 0; iter < 5000; iter++) {
    std::string msg = seed;
    for (size_t k = rng() % 4 + 1; k > 0; k--) {
      size_t at = rng() % msg.size();
      switch (rng() % 3) {
        case 0:
          msg[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          msg.erase(at, 1 + rng() % 3);
          break;
        default:
          msg.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    int64_t before = h.batch.num_rows();
    Status st = h.decoder->Append(msg, &h.batch);
    ASSERT_TRUE(st.ok() || st.code() == StatusCode::kInvalidArgument) << st.ToString();
    ASSERT_EQ(h.batch.num_rows(), before + (st.ok() ? 1 : 0));
  }
  Status valid = h.batch.Validate();
  EXPECT_TRUE(valid.ok()) << valid.ToString();
}

TEST(JsonDecoderTest, FieldOrderDoesNotMatter) {
  Harness h("a INT, b STRING, c DOUBLE");
  EXPECT_EQ(h.Decode(R"({"c": 1, "b": "x", "a": 2})"), "{a: 2, b: \"x\", c: 1}");
  EXPECT_EQ(h.Decode(R"({"a": 3, "c": 2})"), "{a: 3, b: null, c: 2}");
  EXPECT_EQ(h.Decode(R"({"b\u0022": 1, "\u0061": 4})"), "{a: 4, b: null, c: null}");
  // Keys are compared raw in the expected order first: prefixes, longer keys and escapes.
  Harness k("id INT, idx INT, i INT");
  EXPECT_EQ(k.Decode(R"({"id": 1, "idx": 2, "i": 3})"), "{id: 1, idx: 2, i: 3}");
  EXPECT_EQ(k.Decode(R"({"idx": 1, "id": 2})"), "{id: 2, idx: 1, i: null}");
  EXPECT_EQ(k.Decode(R"({"i": 1, "id\"": 5, "idxx": 6, "\u0069d": 2})"),
            "{id: 2, idx: null, i: 1}");
  EXPECT_EQ(k.Decode(R"({"i\u0064": 4, "id\u0078": 5, "\u0069": 6})"), "{id: 4, idx: 5, i: 6}");
  EXPECT_EQ(k.Decode(R"({"": 1, "ID": 2, "id ": 3})"), "{id: null, idx: null, i: null}");
}

// Strings without a backslash are taken from the message as they are; the others are
// unescaped. Both must give the same values, wherever the string goes.
TEST(JsonDecoderTest, StringsWithAndWithoutEscapes) {
  Harness h("s STRING, l ARRAY<STRING>, m MAP<STRING, STRING>, i INT, d DATE, ts TIMESTAMP");
  EXPECT_EQ(h.Decode(R"({"s": "plain", "l": ["", "a\"b", "\\", "c\\\\"], "m": {"k\u0031": "\/"}})"),
            "{s: \"plain\", l: [\"\", \"a\\\"b\", \"\\\\\", \"c\\\\\\\\\"], m: {\"k1\": \"/\"}, "
            "i: null, d: null, ts: null}");
  EXPECT_EQ(h.Decode("{\"s\" : \"x y\"  ,\n \"l\": [ \"a\" , \"b\"\t] , \"i\": \"42\" }"),
            "{s: \"x y\", l: [\"a\", \"b\"], m: null, i: 42, d: null, ts: null}");
  EXPECT_EQ(h.Decode("{\"s\": \"h\xc3\xa9 \\u00e9\\ud83d\\ude00\", \"d\": \"2026\\u002d01-02\"}"),
            "{s: \"h\xc3\xa9 \xc3\xa9\xf0\x9f\x98\x80\", l: null, m: null, i: null, d: 2026-01-02, "
            "ts: null}");
  EXPECT_EQ(h.Decode(R"({"ts": "2026-01-02T03:04:05\u002E5Z", "i": "4\u0032"})"),
            "{s: null, l: null, m: null, i: 42, d: null, ts: 2026-01-02T03:04:05.5}");
  EXPECT_EQ(h.Decode(R"({"s": "\"", "d": "2026-01-02"})"),
            "{s: \"\\\"\", l: null, m: null, i: null, d: 2026-01-02, ts: null}");
  // The same messages for mismatches, with or without escapes.
  EXPECT_EQ(h.Decode(R"({"i": "4x"})"),
            "ERROR: field 'i': expected an integer, found string \"4x\"");
  EXPECT_EQ(h.Decode(R"({"i": "4\"x"})"),
            "ERROR: field 'i': expected an integer, found string \"4\"x\"");
  EXPECT_EQ(h.Decode(R"({"d": "2023-02-29"})"),
            "ERROR: field 'd': expected a date, found string \"2023-02-29\"");
  EXPECT_EQ(h.Decode(R"({"d": "2023-02-2\u0039"})"),
            "ERROR: field 'd': expected a date, found string \"2023-02-29\"");
  EXPECT_EQ(h.Decode(R"({"l": ["a", 1, "b"]})"),
            "{s: null, l: [\"a\", \"1\", \"b\"], m: null, i: null, d: null, ts: null}");
  EXPECT_EQ(h.Decode(R"({"ts": "x\ty"})"),
            "ERROR: field 'ts': expected a timestamp, found string \"x\ty\"");
  EXPECT_NE(h.Decode("{\"s\": \"a\tb\"}").find("ERROR: malformed JSON"), std::string::npos);
  EXPECT_NE(h.Decode(R"({"s": "a\x"})").find("ERROR: field 's': malformed JSON"),
            std::string::npos);
  EXPECT_NE(h.Decode(R"({"s": "a\ud800b"})").find("ERROR: field 's': malformed JSON"),
            std::string::npos);

  JsonDecoderOptions strict;
  strict.numbers_as_strings = false;
  strict.strings_as_numbers = false;
  Harness s("s STRING, i INT", strict);
  EXPECT_EQ(s.Decode(R"({"s": "a", "i": 1})"), "{s: \"a\", i: 1}");
  EXPECT_EQ(s.Decode(R"({"i": "1"})"), "ERROR: field 'i': expected an integer, found string \"1\"");
  EXPECT_EQ(s.Decode(R"({"i": "\u0031"})"),
            "ERROR: field 'i': expected an integer, found string \"\\u0031\"");
}

// On-Demand skips a value that was not read and takes a skipped string followed by ':' for a
// key, skipping on past the enclosing '}': strings read from the message must still be refused
// there, whether the field is decoded, kept as JSON text or unknown.
TEST(JsonDecoderTest, StringFollowedByColonIsMalformed) {
  JsonDecoderOptions keep;
  keep.unknown_fields_column = "_extra";
  Harness h("s STRING, o STRUCT<a: STRING, d: DATE>, l ARRAY<STRING>, j JSON, b INT, _extra STRING",
            keep);
  Harness ignore("s STRING, o STRUCT<a: STRING, d: DATE>, l ARRAY<STRING>, j JSON, b INT");
  for (const char* m : {
           R"({"s": "x": 1, "b": 2})",
           R"({"o": {"a": "x": 1}}, "b": 2})",
           R"({"o": {"a": "x": 1}, "b": 2}})",
           R"({"o": {"d": "2020-01-02": 1}}, "s": "y"})",
           R"({"l": ["x": 1]}, "b": 2})",
           R"({"j": "x": 1}, "b": 2})",
           R"({"zz": "x": 1}, "b": 2})",
           R"({"o": {"zz": "x": 1}}, "b": 2})",
       }) {
    EXPECT_NE(h.Decode(m).find("malformed JSON"), std::string::npos) << m;
    EXPECT_NE(ignore.Decode(m).find("malformed JSON"), std::string::npos) << m;
  }
  EXPECT_EQ(h.batch.num_rows(), 0);
  // Refused where the enclosing object meets the ':' (for a decoded field, the message from before
  // the fast path; an unknown one was skipped past the '}' then).
  const std::string improper =
      "malformed JSON: The JSON document has an improper structure: missing or superfluous "
      "commas, braces, missing keys, etc.";
  EXPECT_EQ(h.Decode(R"({"o": {"a": "x": 1, "b": 2}})"), "ERROR: field 'o': " + improper);
  EXPECT_EQ(h.Decode(R"({"o": {"zz": "x": 1, "b": 2}})"), "ERROR: field 'o': " + improper);
  EXPECT_EQ(h.Decode(R"({"zz": "x": 1, "b": 2})"), "ERROR: " + improper);
  EXPECT_EQ(h.Decode(R"({"o": {"a": "x", "zz": "y"}, "j": "z", "q": "w"})"),
            "{s: null, o: {a: \"x\", d: null}, l: null, j: \"\\\"z\\\"\", b: null, "
            "_extra: \"{\\\"q\\\":\\\"w\\\"}\"}");
}

TEST(JsonDecoderTest, CreateRejectsBadOptions) {
  SchemaPtr schema = Ddl("a INT, m MAP<INT, STRING>, e STRING");
  JsonDecoderOptions o1;
  o1.columns = {"a", "nope"};
  EXPECT_EQ(JsonDecoder::Create(schema, o1).status().message(),
            "json decoder: no column 'nope' in the schema");
  JsonDecoderOptions o2;
  EXPECT_EQ(JsonDecoder::Create(schema, o2).status().message(),
            "column 'm': JSON objects decode only into MAP<STRING, ...>, not MAP<INT, STRING>");
  JsonDecoderOptions o3;
  o3.columns = {"a"};
  o3.unknown_fields_column = "e";
  EXPECT_FALSE(JsonDecoder::Create(schema, o3).ok());
  JsonDecoderOptions o4;
  o4.columns = {"a"};
  o4.timestamp_formats = {"yyyy-ww"};
  EXPECT_NE(JsonDecoder::Create(schema, o4).status().message().find("week-based"),
            std::string::npos);
  JsonDecoderOptions o5;
  o5.columns = {"a"};
  o5.time_zone = "Mars/Olympus";
  EXPECT_EQ(JsonDecoder::Create(schema, o5).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ferry::transform
