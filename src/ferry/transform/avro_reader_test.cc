// Avro binary datums into columns: the specification's own example, every type and promotion,
// nested records, arrays, maps and unions, schema resolution (skipped writer fields, missing
// columns), and bad data refused with the batch left as it was. The bytes are written here by
// hand from the specification's "Binary Encoding" section, not by the code under test.
#include "ferry/transform/avro_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "ferry/columnar/ddl.h"
#include "ferry/transform/avro_bytes_for_test.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform::avro {
namespace {

using avro_test::Long;
using avro_test::Str;

std::string Float(float f) {
  return std::string(reinterpret_cast<const char*>(&f), 4);
}
std::string Double(double d) {
  return std::string(reinterpret_cast<const char*>(&d), 8);
}

std::shared_ptr<const Schema> Writer(const std::string& json) {
  auto schema = Schema::Parse(json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return std::make_shared<const Schema>(std::move(*schema));
}

struct ReaderTable {
  columnar::SchemaPtr schema;
  columnar::RecordBatch batch;
  std::vector<int> columns;
};

ReaderTable MakeTable(const std::string& ddl) {
  auto parsed = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  ReaderTable t;
  t.schema = std::make_shared<const columnar::Schema>(*parsed);
  t.batch = columnar::RecordBatch::MakeEmpty(t.schema);
  for (int i = 0; i < t.schema->num_fields(); ++i) {
    t.columns.push_back(i);
  }
  return t;
}

std::unique_ptr<AvroRowReader> Reader(const std::string& writer, const ReaderTable& t) {
  auto reader = AvroRowReader::Create(Writer(writer), *t.schema, t.columns);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  return reader.ok() ? std::move(*reader) : nullptr;
}

TEST(AvroReaderTest, TheSpecificationsExample) {
  // "For example, the record ... {"a": 27, "b": "foo"} is encoded as 36 06 66 6f 6f".
  ReaderTable t = MakeTable("a BIGINT, b STRING");
  auto reader = Reader(R"({"type": "record", "name": "test", "fields": [
      {"name": "a", "type": "long"}, {"name": "b", "type": "string"}]})",
                       t);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Append(std::string("\x36\x06\x66\x6f\x6f"), &t.batch).ok());
  EXPECT_EQ(RowText(t.batch, 0), R"({a: 27, b: "foo"})");
}

TEST(AvroReaderTest, EveryTypeLogicalTypeAndPromotion) {
  ReaderTable t = MakeTable(
      "b BOOLEAN, i INT, il BIGINT, id DOUBLE, l BIGINT, lf FLOAT, f FLOAT, fd DOUBLE, d DOUBLE, "
      "s STRING, sb BINARY, bs STRING, e STRING, fx BINARY, dt DATE, tsm TIMESTAMP, "
      "tsu TIMESTAMP, ntz TIMESTAMP_NTZ, dec DECIMAL(12,2), decf DECIMAL(9,3), u STRING");
  auto reader = Reader(R"({"type": "record", "name": "all", "fields": [
      {"name": "b", "type": "boolean"},
      {"name": "i", "type": "int"},
      {"name": "il", "type": "int"},
      {"name": "id", "type": "int"},
      {"name": "l", "type": "long"},
      {"name": "lf", "type": "long"},
      {"name": "f", "type": "float"},
      {"name": "fd", "type": "float"},
      {"name": "d", "type": "double"},
      {"name": "s", "type": "string"},
      {"name": "sb", "type": "string"},
      {"name": "bs", "type": "bytes"},
      {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["RED", "GREEN"]}},
      {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 3}},
      {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
      {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
      {"name": "tsu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
      {"name": "ntz", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
      {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10,
                               "scale": 2}},
      {"name": "decf", "type": {"type": "fixed", "name": "D", "size": 4,
                                "logicalType": "decimal", "precision": 9, "scale": 3}},
      {"name": "u", "type": {"type": "string", "logicalType": "uuid"}}]})",
                       t);
  ASSERT_NE(reader, nullptr);
  std::string datum = std::string("\x01") + Long(-7) + Long(70000) + Long(3) + Long(-9000000000LL) +
                      Long(5) + Float(1.5f) + Float(0.25f) + Double(-2.5) + Str("héllo") +
                      Str("raw") + Str("AB") + Long(1) + std::string("\x00\xff\x10", 3) +
                      Long(20422) /* 2025-11-30 */ + Long(1764487800123LL) +
                      Long(1764487800123456LL) + Long(1764487800123LL) +
                      Str(std::string("\xfe\x0c", 2)) /* -500 -> -5.00 */ +
                      std::string("\x00\x01\xe2\x40", 4) /* 123456 -> 123.456 */ +
                      Str("0f8fad5b-d9cb-469f-a165-70867728950e");
  Status st = reader->Append(datum, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0),
            "{b: true, i: -7, il: 70000, id: 3, l: -9000000000, lf: 5, f: 1.5, fd: 0.25, d: -2.5, "
            "s: \"héllo\", sb: 0x726177, bs: \"AB\", e: \"GREEN\", fx: 0x00ff10, dt: 2025-11-30, "
            "tsm: 2025-11-30T07:30:00.123, tsu: 2025-11-30T07:30:00.123456, "
            "ntz: 2025-11-30T07:30:00.123, dec: -5.00, decf: 123.456, "
            "u: \"0f8fad5b-d9cb-469f-a165-70867728950e\"}");
}

TEST(AvroReaderTest, NestedRecordsArraysMapsAndUnions) {
  ReaderTable t = MakeTable(
      "id BIGINT, lines ARRAY<STRUCT<sku: STRING, qty: INT>>, tags MAP<STRING, STRING>, "
      "note STRING, v STRUCT<member0: INT, member1: STRING>, n BIGINT");
  auto reader = Reader(R"({"type": "record", "name": "Order", "fields": [
      {"name": "id", "type": "long"},
      {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line",
        "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": ["null", "int"]}]}}},
      {"name": "tags", "type": {"type": "map", "values": ["null", "string"]}},
      {"name": "note", "type": ["null", "string"]},
      {"name": "v", "type": ["null", "int", "string"]},
      {"name": "n", "type": ["int", "long"]}]})",
                       t);
  ASSERT_NE(reader, nullptr);
  // Two array blocks (the second with its byte size: a negative count), a map of two entries,
  // note null, v the string branch, n the int branch.
  std::string line1 = Str("a") + Long(1) + Long(2);   // qty 2
  std::string line2 = Str("b") + Long(0);             // qty null
  std::string line3 = Str("c") + Long(1) + Long(-4);  // qty -4
  std::string datum = Long(42) + Long(2) + line1 + line2 + Long(-1) +
                      Long(static_cast<int64_t>(line3.size())) + line3 + Long(0) + Long(2) +
                      Str("k1") + Long(1) + Str("x") + Str("k2") + Long(0) + Long(0) + Long(0) +
                      Long(2) + Str("two") + Long(0) + Long(9);
  Status st = reader->Append(datum, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0),
            "{id: 42, lines: [{sku: \"a\", qty: 2}, {sku: \"b\", qty: null}, {sku: \"c\", qty: "
            "-4}], tags: {\"k1\": \"x\", \"k2\": null}, note: null, v: {member0: null, member1: "
            "\"two\"}, n: 9}");
  // v the int branch, then null; an empty array and map.
  datum =
      Long(1) + Long(0) + Long(0) + Long(1) + Str("hi") + Long(1) + Long(5) + Long(1) + Long(-3);
  st = reader->Append(datum, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  datum = Long(2) + Long(0) + Long(0) + Long(0) + Long(0) + Long(1) + Long(7);
  st = reader->Append(datum, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 1),
            "{id: 1, lines: [], tags: {}, note: \"hi\", v: {member0: 5, member1: null}, n: -3}");
  EXPECT_EQ(RowText(t.batch, 2), "{id: 2, lines: [], tags: {}, note: null, v: null, n: 7}");
}

TEST(AvroReaderTest, WriterFieldsTheTableLacksAreSkippedAndMissingColumnsAreNull) {
  ReaderTable t = MakeTable("id BIGINT, extra STRING, last STRING");
  // The writer has fields of every shape the table lacks, in between the ones it has.
  auto reader = Reader(R"({"type": "record", "name": "r", "fields": [
      {"name": "skip_arr", "type": {"type": "array", "items": {"type": "map", "values": "long"}}},
      {"name": "ID", "type": "long"},
      {"name": "skip_rec", "type": {"type": "record", "name": "S", "fields": [
          {"name": "f", "type": {"type": "fixed", "name": "F4", "size": 4}},
          {"name": "u", "type": ["null", "double", "bytes"]},
          {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}}]}},
      {"name": "last", "type": "string"}]})",
                       t);
  ASSERT_NE(reader, nullptr);
  std::vector<std::vector<std::string>> unmatched;
  for (const UnmatchedField& field : reader->unmatched_fields()) {
    unmatched.push_back(field.path);
  }
  EXPECT_EQ(unmatched, (std::vector<std::vector<std::string>>{{"skip_arr"}, {"skip_rec"}}));
  std::string datum = Long(1) + Long(1) + Str("k") + Long(99) + Long(0) + Long(0) +  // skip_arr
                      Long(5) +                                                      // ID
                      std::string("abcd") + Long(2) + Str("zz") + Long(0) +          // skip_rec
                      Str("end");
  Status st = reader->Append(datum, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0), R"({id: 5, extra: null, last: "end"})");

  // A NOT NULL column no writer field fills, and a type that cannot be read: refused up front.
  ReaderTable strict = MakeTable("id BIGINT, must STRING NOT NULL");
  auto refused = AvroRowReader::Create(
      Writer(R"({"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}]})"),
      *strict.schema, strict.columns);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("field 'must': the column is NOT NULL"),
            std::string::npos)
      << refused.status().ToString();
  ReaderTable narrow = MakeTable("id INT");
  refused = AvroRowReader::Create(
      Writer(R"({"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}]})"),
      *narrow.schema, narrow.columns);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.status().message().find("field 'id': the writer's long cannot be read into INT"),
      std::string::npos)
      << refused.status().ToString();
}

TEST(AvroReaderTest, BadDataIsRefusedAndLeavesTheBatchAsItWas) {
  ReaderTable t =
      MakeTable("id BIGINT, s STRING, e STRING, u STRING, tags ARRAY<BIGINT>, dec DECIMAL(4,2)");
  auto reader = Reader(R"({"type": "record", "name": "r", "fields": [
      {"name": "id", "type": "long"},
      {"name": "s", "type": "string"},
      {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
      {"name": "u", "type": ["null", "string"]},
      {"name": "tags", "type": {"type": "array", "items": "long"}},
      {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4,
                               "scale": 2}}]})",
                       t);
  ASSERT_NE(reader, nullptr);
  const std::string good = Long(7) + Str("ok") + Long(1) + Long(1) + Str("u") + Long(2) + Long(10) +
                           Long(20) + Long(0) + Str(std::string("\x04\xd2", 2));
  ASSERT_TRUE(reader->Append(good, &t.batch).ok());
  const std::string first_row = RowText(t.batch, 0);
  EXPECT_EQ(first_row, R"({id: 7, s: "ok", e: "B", u: "u", tags: [10, 20], dec: 12.34})");

  // Every proper prefix of a good datum ends early.
  for (size_t n = 0; n < good.size(); ++n) {
    Status st = reader->Append(good.substr(0, n), &t.batch);
    ASSERT_FALSE(st.ok()) << n;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  }
  struct Case {
    std::string datum;
    std::string message;
  };
  const std::vector<Case> cases = {
      {good + "x", "1 bytes left over"},
      {Long(7) + Long(-1) + "", "field 's': a length of -1"},
      {Long(7) + Long(1000) + "abc", "field 's': a length of 1000 with 3 bytes left"},
      {Long(7) + Str("\xc3\x28") + Long(0), "field 's': the string at byte 1 is not UTF-8"},
      {Long(7) + Str("ok") + Long(2), "field 'e': enum index 2 of 2 symbols"},
      {Long(7) + Str("ok") + Long(0) + Long(3), "field 'u': union branch 3 of 2"},
      {Long(7) + Str("ok") + Long(0) + Long(0) + Long(1000000000), "1000000000 items"},
      {Long(7) + Str("ok") + Long(0) + Long(0) + Long(0) + Str(std::string("\x27\x10", 2)),
       "field 'dec': a decimal with more than 4 digits"},
      {std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "over-long varint"},
  };
  for (const Case& c : cases) {
    Status st = reader->Append(c.datum, &t.batch);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_NE(st.message().find(c.message), std::string::npos)
        << "gave: " << st.ToString() << "\nwanted: " << c.message;
  }
  // Nothing of the failed datums is left: one row, every column as long.
  EXPECT_EQ(t.batch.num_rows(), 1);
  for (int c = 0; c < t.batch.num_columns(); ++c) {
    EXPECT_EQ(t.batch.column(c).length(), 1) << c;
  }
  EXPECT_EQ(RowText(t.batch, 0), first_row);
  ASSERT_TRUE(reader->Append(good, &t.batch).ok());
  EXPECT_EQ(RowText(t.batch, 1), first_row);
}

// Items of zero bytes (null, an empty record) cost no input, so the items a datum may announce
// are bounded per datum: its size plus 65,536. Per array, nested arrays of them made a few KiB
// announce billions of items to skip.
TEST(AvroReaderTest, ZeroByteItemsAreBoundedPerDatum) {
  ReaderTable t = MakeTable("id BIGINT");
  auto reader = Reader(R"({"type": "record", "name": "r", "fields": [
      {"name": "nulls", "type": {"type": "array", "items": {"type": "array", "items": "null"}}},
      {"name": "id", "type": "long"}]})",
                       t);
  ASSERT_NE(reader, nullptr);
  // 60,000 nulls in two arrays: within the bound, skipped.
  const std::string fine =
      Long(2) + Long(30000) + Long(0) + Long(30000) + Long(0) + Long(0) + Long(1);
  Status st = reader->Append(fine, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  // 1,000 arrays of 60,000 nulls each in 4 KB: refused at the second array.
  std::string datum = Long(1000);
  for (int i = 0; i < 1000; ++i) {
    datum += Long(60000) + Long(0);
  }
  datum += Long(0) + Long(2);
  st = reader->Append(datum, &t.batch);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("field 'nulls': 60000 items with"), std::string::npos)
      << st.ToString();
  EXPECT_EQ(t.batch.num_rows(), 1);
  EXPECT_EQ(RowText(t.batch, 0), "{id: 1}");
}

}  // namespace
}  // namespace ferry::transform::avro
