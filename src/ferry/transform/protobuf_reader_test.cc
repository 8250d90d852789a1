// Protobuf wire messages into columns: every scalar type, enums, nested messages, repeated
// fields packed and unpacked, maps, oneofs and the well-known types, from messages libprotobuf
// serialized; then the encoding's rules on bytes written by hand (unknown fields, last one wins,
// merged messages, wrong wire types), resolution to the table, and bad data refused with the
// batch left as it was.
#include "ferry/transform/protobuf_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ferry/base/varint.h"
#include "ferry/columnar/ddl.h"
#include "ferry/transform/protobuf_test_support.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform::protobuf {
namespace {

using protobuf_test::Fixed32Field;
using protobuf_test::Fixed64Field;
using protobuf_test::LenField;
using protobuf_test::Tag;
using protobuf_test::Varint;
using protobuf_test::VarintField;

constexpr const char* kAllProto = R"(
syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";
enum Color { RED = 0; GREEN = 1; BLUE = 2; }
message Inner { string name = 1; int32 n = 2; }
message All {
  double d = 1; float f = 2; int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6;
  sint32 s32 = 7; sint64 s64 = 8; fixed32 fx32 = 9; fixed64 fx64 = 10; sfixed32 sf32 = 11;
  sfixed64 sf64 = 12; bool b = 13; string s = 14; bytes by = 15; Color color = 16;
  Inner inner = 17; repeated int32 nums = 18; repeated string tags = 19;
  repeated Inner inners = 20; map<string, int64> counts = 21; map<int32, Inner> by_id = 22;
  oneof choice { string text = 23; int64 number = 24; }
  google.protobuf.Timestamp ts = 25; google.protobuf.Duration dur = 26;
  google.protobuf.Int32Value wi32 = 27; google.protobuf.StringValue wstr = 28;
  google.protobuf.UInt64Value wu64 = 29; google.protobuf.Struct st = 30;
  google.protobuf.Value val = 31; google.protobuf.Any any = 32; optional int32 opt = 33;
  repeated double ds = 34; repeated Color colors = 35;
}
message Node { string name = 1; Node next = 2; int32 v = 3; }
)";

struct Table {
  columnar::SchemaPtr schema;
  columnar::RecordBatch batch;
  std::vector<int> columns;
};

Table MakeTable(columnar::SchemaPtr schema) {
  Table t;
  t.schema = std::move(schema);
  t.batch = columnar::RecordBatch::MakeEmpty(t.schema);
  for (int i = 0; i < t.schema->num_fields(); ++i) {
    t.columns.push_back(i);
  }
  return t;
}

Table MakeTable(const std::string& ddl) {
  auto parsed = columnar::ParseDdlSchema(ddl);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return MakeTable(std::make_shared<const columnar::Schema>(*parsed));
}

class ProtobufReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = protobuf_test::ParseProto(kAllProto);
    ASSERT_NE(file_, nullptr);
    auto all = file_->Message("t.All");
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    all_ = *all;
  }

  std::unique_ptr<ProtobufRowReader> Reader(const Table& t) {
    auto reader = ProtobufRowReader::Create(all_, *t.schema, t.columns);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    return reader.ok() ? std::move(*reader) : nullptr;
  }

  std::string Text(const std::string& text) {
    return protobuf_test::Serialize(*file_, "t.All", text);
  }

  std::shared_ptr<const ProtoSchema> file_;
  std::shared_ptr<const MessageSchema> all_;
};

TEST_F(ProtobufReaderTest, TheTableSchemaFollowsSparksMapping) {
  auto schema = ToTableSchema(*all_);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(schema.value()->ToString(),
            "d DOUBLE, f FLOAT, i32 INT, i64 BIGINT, u32 BIGINT, u64 DECIMAL(20,0), s32 INT, "
            "s64 BIGINT, fx32 BIGINT, fx64 DECIMAL(20,0), sf32 INT, sf64 BIGINT, b BOOLEAN, "
            "s STRING, by BINARY, color STRING, inner STRUCT<name: STRING, n: INT>, "
            "nums ARRAY<INT>, tags ARRAY<STRING>, inners ARRAY<STRUCT<name: STRING, n: INT>>, "
            "counts MAP<STRING, BIGINT>, by_id MAP<INT, STRUCT<name: STRING, n: INT>>, "
            "text STRING, number BIGINT, ts TIMESTAMP, "
            "dur STRUCT<seconds: BIGINT, nanos: INT>, wi32 INT, wstr STRING, "
            "wu64 DECIMAL(20,0), st STRING, val STRING, any STRING, opt INT, ds ARRAY<DOUBLE>, "
            "colors ARRAY<STRING>");
}

TEST_F(ProtobufReaderTest, EveryTypeFromLibprotobufsBytes) {
  Table t = MakeTable(*ToTableSchema(*all_));
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  std::string bytes = Text(R"(
    d: 2.5 f: -1.5 i32: -7 i64: -9000000000 u32: 4294967295 u64: 18446744073709551615
    s32: -2147483648 s64: -9223372036854775808 fx32: 4000000000 fx64: 18446744073709551614
    sf32: -3 sf64: -4 b: true s: "h\303\251" by: "\000\377" color: BLUE
    inner { name: "in" n: 5 } nums: [1, -1, 300] tags: ["a", "b"]
    inners { name: "x" } inners { n: 2 }
    counts { key: "k" value: 9 } by_id { key: 4 value { name: "four" } }
    number: 42
    ts { seconds: 1764745800 nanos: 123456789 } dur { seconds: -5 nanos: -500 }
    wi32 { value: 0 } wstr { value: "w" } wu64 { value: 18446744073709551615 }
    st { fields { key: "a" value { number_value: 1.5 } }
         fields { key: "l" value { list_value { values { string_value: "x\"" }
                                                values { bool_value: true }
                                                values { null_value: NULL_VALUE } } } } }
    val { struct_value { } }
    any { type_url: "type.googleapis.com/t.Inner" value: "\n\001z" }
    opt: 0 ds: [0.25] colors: [RED, GREEN]
  )");
  Status st = reader->Append(bytes, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(
      RowText(t.batch, 0),
      "{d: 2.5, f: -1.5, i32: -7, i64: -9000000000, u32: 4294967295, "
      "u64: 18446744073709551615, s32: -2147483648, s64: -9223372036854775808, "
      "fx32: 4000000000, fx64: 18446744073709551614, sf32: -3, sf64: -4, b: true, "
      "s: \"h\303\251\", by: 0x00ff, color: \"BLUE\", inner: {name: \"in\", n: 5}, "
      "nums: [1, -1, 300], tags: [\"a\", \"b\"], "
      "inners: [{name: \"x\", n: null}, {name: null, n: 2}], counts: {\"k\": 9}, "
      "by_id: {4: {name: \"four\", n: null}}, text: null, number: 42, "
      "ts: 2025-12-03T07:10:00.123456, dur: {seconds: -5, nanos: -500}, wi32: 0, "
      "wstr: \"w\", wu64: 18446744073709551615, "
      "st: \"{\\\"a\\\":1.5,\\\"l\\\":[\\\"x\\\\\\\"\\\",true,null]}\", val: \"{}\", "
      "any: \"{\\\"@type\\\":\\\"type.googleapis.com/t.Inner\\\",\\\"value\\\":\\\"CgF6\\\"}\", "
      "opt: 0, ds: [0.25], colors: [\"RED\", \"GREEN\"]}");
}

TEST_F(ProtobufReaderTest, AbsentFieldsAreNullAndAbsentRepeatedFieldsEmpty) {
  Table t = MakeTable(*ToTableSchema(*all_));
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Append("", &t.batch).ok());
  EXPECT_EQ(RowText(t.batch, 0),
            "{d: null, f: null, i32: null, i64: null, u32: null, u64: null, s32: null, "
            "s64: null, fx32: null, fx64: null, sf32: null, sf64: null, b: null, s: null, "
            "by: null, color: null, inner: null, nums: [], tags: [], inners: [], counts: {}, "
            "by_id: {}, text: null, number: null, ts: null, dur: null, wi32: null, wstr: null, "
            "wu64: null, st: null, val: null, any: null, opt: null, ds: [], colors: []}");
}

TEST_F(ProtobufReaderTest, PackedAndUnpackedRepeatedFieldsMix) {
  Table t = MakeTable("nums ARRAY<INT>, ds ARRAY<DOUBLE>, colors ARRAY<STRING>");
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  double quarter = 0.25;
  std::string packed_double(reinterpret_cast<const char*>(&quarter), 8);
  std::string bytes = VarintField(18, 1) + LenField(18, Varint(2) + Varint(3)) +
                      VarintField(18, 4) + LenField(34, packed_double + packed_double) +
                      LenField(35, Varint(2) + Varint(9)) + VarintField(35, 0) + LenField(18, "");
  Status st = reader->Append(bytes, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0),
            "{nums: [1, 2, 3, 4], ds: [0.25, 0.25], colors: [\"BLUE\", \"9\", \"RED\"]}");
}

TEST_F(ProtobufReaderTest, UnknownFieldsAndWrongWireTypesAreSkipped) {
  Table t = MakeTable("i32 INT, s STRING");
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  std::string group = Tag(103, 3) + VarintField(1, 5) + Tag(7, 3) + Tag(7, 4) + Tag(103, 4);
  std::string bytes = VarintField(99, 1) + LenField(100, "zz") + Fixed32Field(101, 7) +
                      Fixed64Field(102, 8) + group + LenField(3, "not a varint") +
                      Fixed32Field(14, 1) + VarintField(3, 12) + VarintField(4, 1);
  Status st = reader->Append(bytes, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0), "{i32: 12, s: null}");
  EXPECT_EQ(reader->unmatched_fields().size(), all_->root().fields.size() - 2);
}

TEST_F(ProtobufReaderTest, LastScalarWinsMessagesMergeAndTheLastOneofMemberWins) {
  Table t = MakeTable(
      "i32 INT, inner STRUCT<name: STRING, n: INT>, text STRING, number BIGINT, "
      "ts TIMESTAMP, wi32 INT");
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  std::string bytes = VarintField(3, 1) + VarintField(3, 2) + LenField(17, LenField(1, "a")) +
                      LenField(23, "t") + LenField(17, VarintField(2, 7) + LenField(1, "b")) +
                      VarintField(24, 5) + LenField(25, VarintField(1, 60)) +
                      LenField(25, VarintField(2, 1000)) + LenField(27, "");
  Status st = reader->Append(bytes, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0),
            "{i32: 2, inner: {name: \"b\", n: 7}, text: null, number: 5, "
            "ts: 1970-01-01T00:01:00.000001, wi32: 0}");
  // The other order: the string member came last.
  ASSERT_TRUE(reader->Append(VarintField(24, 5) + LenField(23, "t"), &t.batch).ok());
  EXPECT_EQ(RowText(t.batch, 1),
            "{i32: null, inner: null, text: \"t\", number: null, ts: null, wi32: null}");
}

TEST_F(ProtobufReaderTest, IntegerEdgeCases) {
  Table t = MakeTable("i32 INT, u32 BIGINT, u64 DECIMAL(20,0), s32 INT, color STRING");
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  // A negative int32 is written as ten bytes (sign-extended to 64 bits); an enum number the
  // enum does not name keeps its number.
  std::string bytes = VarintField(3, static_cast<uint64_t>(int64_t{-1})) +
                      VarintField(5, 0xffffffffULL) + VarintField(6, ~uint64_t{0}) +
                      VarintField(7, 1) + VarintField(16, static_cast<uint64_t>(int64_t{-3}));
  ASSERT_EQ(bytes.size(), (1 + 10) + (1 + 5) + (1 + 10) + (1 + 1) + (2 + 10));
  Status st = reader->Append(bytes, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0),
            "{i32: -1, u32: 4294967295, u64: 18446744073709551615, s32: -1, color: \"-3\"}");
}

TEST_F(ProtobufReaderTest, MapEntriesWithoutKeyOrValue) {
  Table t = MakeTable("counts MAP<STRING, BIGINT>, by_id MAP<INT, STRUCT<name: STRING>>");
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  std::string bytes = LenField(21, VarintField(2, 3)) + LenField(21, LenField(1, "k")) +
                      LenField(22, LenField(2, "")) + LenField(22, VarintField(1, 8));
  Status st = reader->Append(bytes, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0),
            "{counts: {\"\": 3, \"k\": null}, by_id: {0: {name: null}, 8: null}}");
}

TEST_F(ProtobufReaderTest, ResolutionByNameWithWideningAndMissingColumns) {
  Table t = MakeTable("I32 BIGINT, f DOUBLE, nope STRING, s BINARY, u64 DECIMAL(38,0)");
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  float f = 0.5F;
  std::string fbits(reinterpret_cast<const char*>(&f), 4);
  std::string bytes =
      VarintField(3, 7) + Tag(2, 5) + fbits + LenField(14, "\xff") + VarintField(6, 3);
  Status st = reader->Append(bytes, &t.batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(t.batch, 0), "{I32: 7, f: 0.5, nope: null, s: 0xff, u64: 3}");
}

TEST_F(ProtobufReaderTest, ColumnsItCannotFillFailCreate) {
  for (const char* ddl : {"u64 BIGINT", "i64 INT", "s INT", "inner STRING", "nums INT",
                          "counts ARRAY<STRING>", "ts BIGINT", "d FLOAT", "nope INT NOT NULL"}) {
    Table t = MakeTable(ddl);
    auto reader = ProtobufRowReader::Create(all_, *t.schema, t.columns);
    EXPECT_FALSE(reader.ok()) << ddl;
    if (!reader.ok()) {
      EXPECT_EQ(reader.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(reader.status().message().find(std::string(ddl).substr(0, 2)), std::string::npos)
          << reader.status().ToString();
    }
  }
}

TEST_F(ProtobufReaderTest, BadDataIsRefusedAndLeavesTheBatchAsItWas) {
  Table t = MakeTable(
      "i32 INT, s STRING, inner STRUCT<name: STRING>, nums ARRAY<INT>, "
      "ts TIMESTAMP, counts MAP<STRING, BIGINT>, st STRING");
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Append(VarintField(3, 1), &t.batch).ok());
  struct Case {
    std::string bytes;
    std::string reason;
  };
  const Case cases[] = {
      {Tag(3, 0), "truncated"},
      {Tag(3, 0) + std::string(11, '\x80') + "\x01", "over-long varint"},
      {Tag(14, 2) + Varint(5) + "abc", "length beyond"},
      {Varint(0) + Varint(1), "field number 0"},
      {Tag(9, 6) + Varint(1), "wire type 6"},
      {Tag(9, 7), "wire type 7"},
      {Tag(9, 4), "group end"},
      {Tag(9, 3) + VarintField(1, 1), "group without its end"},
      {Tag(9, 3) + Tag(8, 4), "does not match"},
      {LenField(14, "\xc3"), "UTF-8"},
      {LenField(17, LenField(1, "\xff")), "UTF-8"},
      {LenField(17, Tag(1, 2) + Varint(9)), "length beyond"},
      {LenField(18, Varint(1) + "\x80"), "packed array"},
      {LenField(25, VarintField(1, static_cast<uint64_t>(int64_t{-62135596801}))), "out of range"},
      {LenField(25, VarintField(2, 1000000000)), "out of range"},
      {LenField(21, LenField(1, "\xfe")), "UTF-8"},
      {LenField(30, "\xff"), "malformed"},
      {std::string(1, '\x80'), "truncated"},
  };
  for (const Case& c : cases) {
    Status st = reader->Append(c.bytes, &t.batch);
    ASSERT_FALSE(st.ok()) << c.reason;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.reason), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("Protobuf message"), std::string::npos) << st.ToString();
    for (int i = 0; i < t.batch.num_columns(); ++i) {
      EXPECT_EQ(t.batch.column(i).length(), 1) << c.reason;
    }
  }
  ASSERT_TRUE(reader->Append(VarintField(3, 2), &t.batch).ok());
  EXPECT_EQ(RowText(t.batch, 1),
            "{i32: 2, s: null, inner: null, nums: [], ts: null, counts: {}, st: null}");
}

TEST_F(ProtobufReaderTest, EveryPrefixOfAMessageIsRefusedOrRead) {
  Table t = MakeTable(*ToTableSchema(*all_));
  auto reader = Reader(t);
  ASSERT_NE(reader, nullptr);
  std::string bytes = Text(R"(i32: 300 s: "abc" inner { name: "in" n: 5 } nums: [1, 2]
                              counts { key: "k" value: 9 } ts { seconds: 5 })");
  int64_t rows = 0;
  for (size_t n = 0; n <= bytes.size(); ++n) {
    Status st = reader->Append(bytes.substr(0, n), &t.batch);
    rows += st.ok() ? 1 : 0;
    for (int i = 0; i < t.batch.num_columns(); ++i) {
      ASSERT_EQ(t.batch.column(i).length(), rows) << n;
    }
  }
  EXPECT_GE(rows, 2);
}

TEST_F(ProtobufReaderTest, RecursiveMessagesHaveNoTableButReadIntoOne) {
  auto node = file_->Message("t.Node");
  ASSERT_TRUE(node.ok());
  auto schema = ToTableSchema(**node);
  ASSERT_FALSE(schema.ok());
  EXPECT_NE(schema.status().message().find("field 'next': the message \"t.Node\" contains itself"),
            std::string::npos)
      << schema.status().ToString();
  Table t = MakeTable("name STRING, next STRUCT<v: INT>, v INT");
  auto reader = ProtobufRowReader::Create(*node, *t.schema, t.columns);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::string bytes = LenField(1, "a") +
                      LenField(2, VarintField(3, 2) + LenField(2, LenField(1, "c"))) +
                      VarintField(3, 1);
  ASSERT_TRUE((*reader)->Append(bytes, &t.batch).ok());
  EXPECT_EQ(RowText(t.batch, 0), "{name: \"a\", next: {v: 2}, v: 1}");
}

TEST_F(ProtobufReaderTest, AWholeMessageIntoOneStructColumn) {
  Table t = MakeTable("k STRUCT<name: STRING, n: INT>, other STRING");
  auto inner = file_->Message("t.Inner");
  ASSERT_TRUE(inner.ok());
  auto reader = ProtobufRowReader::CreateForColumn(*inner, *t.schema, 0);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_TRUE((*reader)->Append(LenField(1, "key") + VarintField(2, 3), &t.batch).ok());
  ASSERT_FALSE((*reader)->Append(LenField(1, "\xff"), &t.batch).ok());
  EXPECT_EQ(t.batch.column(0).length(), 1);
  EXPECT_EQ(CellText(t.batch.column(0), 0), "{name: \"key\", n: 3}");
  EXPECT_FALSE(ProtobufRowReader::CreateForColumn(*inner, *t.schema, 1).ok());
}

// Connect's types (ConnectTypes, for debezium-protobuf): off, an integer is not read into DATE
// (format = "protobuf" unchanged); on, integers into DATE and TIMESTAMP (in the unit given;
// repeated and packed, through a wrapper), decimal messages into DECIMAL rescaled half up, and
// an absent scalar into a NOT NULL column as its zero. Out of range is bad data.
TEST(ProtobufReaderConnectTest, DaysEpochNumbersAndDecimalMessages) {
  auto file = protobuf_test::ParseProto(R"(syntax = "proto3"; package c;
import "google/protobuf/wrappers.proto";
message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }
message Row {
  int32 id = 1; int32 day = 2; repeated int32 days = 3; google.protobuf.Int64Value at = 4;
  Decimal price = 5; sint64 at2 = 6;
})");
  ASSERT_NE(file, nullptr);
  auto row = file->Message("c.Row");
  ASSERT_TRUE(row.ok());
  Table t = MakeTable(
      "id INT NOT NULL, day DATE, days ARRAY<DATE>, at TIMESTAMP, price DECIMAL(6,1), "
      "at2 TIMESTAMP_NTZ");
  EXPECT_EQ(ProtobufRowReader::Create(*row, *t.schema, t.columns).status().message(),
            "Protobuf: field 'day': the writer's int32 cannot be read into DATE");
  auto reader = ProtobufRowReader::Create(*row, *t.schema, t.columns,
                                          {.enabled = true, .epoch_micros_per_unit = 1000});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  // 12.345 at scale 3 is 12.3 at scale 1 (half up: 0x3039 = 12345); -0.05 (0xfb at scale 2)
  // rounds to -0.1.
  std::string text = R"(day: 19675 days: [0, -1] at { value: 1700000000123 }
                        price { value: "\060\071" scale: 3 } at2: -1)";
  ASSERT_TRUE((*reader)->Append(protobuf_test::Serialize(*file, "c.Row", text), &t.batch).ok());
  ASSERT_TRUE(
      (*reader)
          ->Append(protobuf_test::Serialize(*file, "c.Row", R"(price { value: "\373" scale: 2 })"),
                   &t.batch)
          .ok());
  EXPECT_EQ(RowText(t.batch, 0),
            "{id: 0, day: 2023-11-14, days: [1970-01-01, 1969-12-31], "
            "at: 2023-11-14T22:13:20.123, price: 12.3, at2: 1969-12-31T23:59:59.999}");
  EXPECT_EQ(RowText(t.batch, 1), "{id: 0, day: null, days: [], at: null, price: -0.1, at2: null}");
  // Out of range: a day count, an epoch number, a decimal for the column.
  const std::string bad[] = {VarintField(2, 3000000), VarintField(6, ZigZagEncode(INT64_MAX / 2)),
                             LenField(5, LenField(1, std::string(17, '\x01')))};
  const std::string why[] = {
      "field 'day': the day count 3000000 is out of DATE's range at byte 0",
      "field 'at2': the epoch number 4611686018427387903 (in units of 1000 microseconds) is out "
      "of TIMESTAMP's range (timestamp_epoch_unit) at byte 0",
      "field 'price': a decimal wider than 16 bytes at byte 2"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*reader)->Append(bad[i], &t.batch).message(), "Protobuf message: " + why[i]);
  }
  EXPECT_EQ(t.batch.num_rows(), 2);
}

}  // namespace
}  // namespace ferry::transform::protobuf
