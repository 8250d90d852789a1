#include "ferry/columnar/ddl.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace ferry::columnar {
namespace {

Schema MustParse(std::string_view ddl) {
  Result<Schema> s = ParseDdlSchema(ddl);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Schema();
}

std::string ErrorOf(std::string_view ddl) {
  Result<Schema> s = ParseDdlSchema(ddl);
  EXPECT_FALSE(s.ok()) << ddl;
  EXPECT_EQ(s.ok() ? StatusCode::kOk : s.status().code(), StatusCode::kInvalidArgument);
  return s.ok() ? "" : s.status().message();
}

TEST(DdlTest, IssueExample) {
  Schema s = MustParse(
      "id BIGINT NOT NULL, ts TIMESTAMP, tags ARRAY<STRING>, attrs MAP<STRING,STRING>, "
      "loc STRUCT<lat: DOUBLE, lon: DOUBLE>, amount DECIMAL(12,2)");
  ASSERT_EQ(s.num_fields(), 6);
  EXPECT_EQ(s.field(0).name, "id");
  EXPECT_TRUE(s.field(0).type->Equals(*DataType::Int64()));
  EXPECT_FALSE(s.field(0).nullable);
  EXPECT_TRUE(s.field(1).type->Equals(*DataType::Timestamp()));
  EXPECT_TRUE(s.field(1).nullable);
  EXPECT_TRUE(s.field(2).type->Equals(*DataType::List(DataType::String())));
  EXPECT_TRUE(s.field(3).type->Equals(*DataType::Map(DataType::String(), DataType::String())));
  EXPECT_TRUE(s.field(4).type->Equals(*DataType::Struct(
      {Field{"lat", DataType::Float64(), true, {}}, Field{"lon", DataType::Float64(), true, {}}})));
  EXPECT_TRUE(s.field(5).type->Equals(*DataType::Decimal(12, 2)));
  EXPECT_EQ(s.ToString(),
            "id BIGINT NOT NULL, ts TIMESTAMP, tags ARRAY<STRING>, attrs MAP<STRING, STRING>, "
            "loc STRUCT<lat: DOUBLE, lon: DOUBLE>, amount DECIMAL(12,2)");
}

TEST(DdlTest, EveryTypeNameAndAliasCaseInsensitive) {
  struct Case {
    const char* ddl;
    DataTypePtr type;
  };
  const Case cases[] = {
      {"string", DataType::String()},
      {"VarChar(10)", DataType::String()},
      {"char(3)", DataType::String()},
      {"long", DataType::Int64()},
      {"BIGINT", DataType::Int64()},
      {"int", DataType::Int32()},
      {"Integer", DataType::Int32()},
      {"short", DataType::Int16()},
      {"SMALLINT", DataType::Int16()},
      {"byte", DataType::Int8()},
      {"tinyint", DataType::Int8()},
      {"double", DataType::Float64()},
      {"float", DataType::Float32()},
      {"REAL", DataType::Float32()},
      {"boolean", DataType::Boolean()},
      {"binary", DataType::Binary()},
      {"date", DataType::Date()},
      {"timestamp", DataType::Timestamp(TimeUnit::kMicros, true)},
      {"timestamp_ltz", DataType::Timestamp(TimeUnit::kMicros, true)},
      {"TIMESTAMP_NTZ", DataType::Timestamp(TimeUnit::kMicros, false)},
      {"decimal", DataType::Decimal(10, 0)},
      {"dec(5)", DataType::Decimal(5, 0)},
      {"NUMERIC(38, 38)", DataType::Decimal(38, 38)},
      {"Decimal ( 12 , 2 )", DataType::Decimal(12, 2)},
      // ferry extensions, so that every DataType::ToString() parses back.
      {"uint8", DataType::UInt8()},
      {"UINT64", DataType::UInt64()},
      {"json", DataType::Json()},
      {"fixed(16)", DataType::FixedBinary(16)},
      {"timestamp_millis", DataType::Timestamp(TimeUnit::kMillis, true)},
      {"timestamp_ntz_nanos", DataType::Timestamp(TimeUnit::kNanos, false)},
  };
  for (const Case& c : cases) {
    Result<DataTypePtr> t = ParseDdlType(c.ddl);
    ASSERT_TRUE(t.ok()) << c.ddl << ": " << t.status().ToString();
    EXPECT_TRUE((*t)->Equals(*c.type)) << c.ddl << " parsed as " << (*t)->ToString();
    Result<Schema> s = ParseDdlSchema(std::string("x ") + c.ddl);
    ASSERT_TRUE(s.ok()) << c.ddl;
    EXPECT_TRUE(s->field(0).type->Equals(*c.type)) << c.ddl;
  }
}

TEST(DdlTest, NestingAtAnyDepthAndOptionalColon) {
  Schema s = MustParse(
      "a array<map<string, struct<x int, `y z`: array<array<decimal(20,4)>>>>> not null, "
      "b STRUCT<>, c MAP<INT, ARRAY<STRUCT<d: DATE NOT NULL>>>");
  ASSERT_EQ(s.num_fields(), 3);
  const DataTypePtr& a = s.field(0).type;
  ASSERT_EQ(a->id(), TypeId::kList);
  const DataTypePtr& inner = a->element().type->value().type;
  ASSERT_EQ(inner->id(), TypeId::kStruct);
  EXPECT_EQ(inner->fields()[1].name, "y z");
  EXPECT_TRUE(
      inner->fields()[1].type->Equals(*DataType::List(DataType::List(DataType::Decimal(20, 4)))));
  EXPECT_FALSE(s.field(0).nullable);
  EXPECT_TRUE(s.field(1).type->fields().empty());
  EXPECT_FALSE(s.field(2).type->value().type->element().type->fields()[0].nullable);
  EXPECT_EQ(s.ToString(),
            "a ARRAY<MAP<STRING, STRUCT<x: INT, `y z`: ARRAY<ARRAY<DECIMAL(20,4)>>>>> NOT NULL, "
            "b STRUCT<>, c MAP<INT, ARRAY<STRUCT<d: DATE NOT NULL>>>");
}

TEST(DdlTest, BackquotedNamesWithEscapedBackquotes) {
  Schema s = MustParse("`a``b` INT, `select` STRING, `1st` LONG, `café` DOUBLE, `a.b` INT");
  EXPECT_EQ(s.field(0).name, "a`b");
  EXPECT_EQ(s.field(1).name, "select");
  EXPECT_EQ(s.field(2).name, "1st");
  EXPECT_EQ(s.field(3).name, "café");
  EXPECT_EQ(s.field(4).name, "a.b");
  EXPECT_EQ(s.ToString(), "`a``b` INT, select STRING, `1st` BIGINT, `café` DOUBLE, `a.b` INT");
  // Keywords are fine as bare names, as in Spark.
  Schema k = MustParse("date DATE, comment STRING COMMENT 'c', not INT NOT NULL");
  EXPECT_EQ(k.field(2).name, "not");
  EXPECT_FALSE(k.field(2).nullable);
}

TEST(DdlTest, CommentsKeptAsJsonStringMetadata) {
  Schema s = MustParse(
      "id BIGINT NOT NULL COMMENT 'the \\'id\\'', loc STRUCT<lat: DOUBLE COMMENT \"deg\\n\\u00e9\">"
      ", x INT comment 'say \"hi\"'");
  ASSERT_EQ(s.field(0).metadata.size(), 1u);
  EXPECT_EQ(s.field(0).metadata[0].first, "comment");
  EXPECT_EQ(s.field(0).metadata[0].second, "\"the 'id'\"");
  EXPECT_EQ(s.field(1).type->fields()[0].metadata[0].second, "\"deg\\né\"");
  EXPECT_EQ(s.field(2).metadata[0].second, "\"say \\\"hi\\\"\"");
  EXPECT_EQ(s.ToString(),
            "id BIGINT NOT NULL COMMENT 'the \\'id\\'', loc STRUCT<lat: DOUBLE COMMENT "
            "'deg\\né'>, x INT COMMENT 'say \"hi\"'");
  Schema again = MustParse(s.ToString());
  EXPECT_TRUE(again.Equals(s, /*check_metadata=*/true));
}

TEST(DdlTest, WhitespaceAndSqlComments) {
  Schema s = MustParse("\n  id BIGINT, -- the key\n  /* a\n block */ name\tSTRING\n");
  ASSERT_EQ(s.num_fields(), 2);
  EXPECT_EQ(s.field(1).name, "name");
}

TEST(DdlTest, ErrorsPointAtTheColumn) {
  // 1-based columns: the ',' after the map value type is character 27.
  EXPECT_EQ(ErrorOf("x INT, a MAP<STRING,STRING,INT>"),
            "schema:1:27: expected '>' after map value type, found ','");
  EXPECT_EQ(ErrorOf("id BIGINT NOT NULL, ts TIMESTAMP, tags ARRAY<STRING"),
            "schema:1:52: expected '>' after array element type, found end of input");
  EXPECT_EQ(ErrorOf("a INTEGR"), "schema:1:3: unknown type 'INTEGR'");
  EXPECT_EQ(ErrorOf("a INT b STRING"),
            "schema:1:7: expected ',' or end of input after column 'a', found 'b'");
  EXPECT_EQ(ErrorOf("a INT,"), "schema:1:7: expected a column name, found end of input");
  EXPECT_EQ(ErrorOf(""), "schema:1:1: expected a column name, found end of input");
  EXPECT_EQ(ErrorOf("a DECIMAL(39,2)"), "schema:1:3: decimal precision 39 is outside 1..38");
  EXPECT_EQ(ErrorOf("a DECIMAL(5,6)"),
            "schema:1:3: decimal scale 6 is larger than its precision 5");
  EXPECT_EQ(ErrorOf("a DECIMAL(5,x)"), "schema:1:13: expected a number in DECIMAL(...), found 'x'");
  EXPECT_EQ(ErrorOf("a STRUCT<b INT c INT>"),
            "schema:1:16: expected ',' or '>' after struct field 'b', found 'c'");
  EXPECT_EQ(ErrorOf("a INT NOT nul"), "schema:1:11: expected NULL after NOT, found 'nul'");
  EXPECT_EQ(ErrorOf("a INT, A STRING"), "schema:1:8: duplicate column name 'A'");
  EXPECT_EQ(ErrorOf("a `b"), "schema:1:3: unterminated quoted name");
  EXPECT_EQ(ErrorOf("a INT COMMENT 'x"), "schema:1:15: unterminated string");
  EXPECT_EQ(ErrorOf("a INT COMMENT 5"), "schema:1:15: expected a string after COMMENT, found '5'");
  EXPECT_EQ(ErrorOf("a INTERVAL"), "schema:1:3: type 'INTERVAL' is not supported");
  EXPECT_EQ(ErrorOf("a VARCHAR"),
            "schema:1:10: expected '(' and a length after VARCHAR, found "
            "end of input");
  EXPECT_EQ(ErrorOf("a ARRAY(INT)"), "schema:1:8: expected '<' after ARRAY, found '('");
  EXPECT_EQ(ErrorOf("a INT;"), "schema:1:6: unexpected character ';'");
  EXPECT_EQ(ErrorOf("a INT, `` INT"), "schema:1:8: empty column name");
  // Lines and columns count characters, not bytes.
  EXPECT_EQ(ErrorOf("`é` INT,\n  b MAP<INT INT>"),
            "schema:2:13: expected ',' after map key type, found 'INT'");
  EXPECT_EQ(ErrorOf("a STRING COMMENT 'x\xff'"), "schema:1:20: invalid UTF-8");
  Result<DataTypePtr> t = ParseDdlType("ARRAY<INT> x", "pipeline.columns");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "pipeline.columns:1:12: expected end of input after the type, found 'x'");
}

TEST(DdlTest, DepthLimitInsteadOfStackOverflow) {
  std::string deep;
  for (int i = 0; i < 100000; i++) {
    deep += "ARRAY<";
  }
  deep += "INT";
  Result<DataTypePtr> t = ParseDdlType(deep);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("nested deeper than"), std::string::npos);
  std::string ok;
  for (int i = 0; i < kMaxDdlDepth - 1; i++) {
    ok += "ARRAY<";
  }
  ok += "INT" + std::string(static_cast<size_t>(kMaxDdlDepth - 1), '>');
  EXPECT_TRUE(ParseDdlType(ok).ok());
}

TEST(DdlTest, JsonStringCodec) {
  EXPECT_EQ(EncodeJsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(*DecodeJsonString("\"a\\\"b\\\\c\\n\\u0001\""), "a\"b\\c\n\x01");
  EXPECT_EQ(*DecodeJsonString("\"\\ud83d\\ude00 \\u00e9\\/\""), "\xF0\x9F\x98\x80 é/");
  EXPECT_FALSE(DecodeJsonString("\"\\ud83d\"").ok());
  EXPECT_FALSE(DecodeJsonString("\"abc").ok());
  EXPECT_FALSE(DecodeJsonString("\"a\"b\"").ok());
  EXPECT_FALSE(DecodeJsonString("\"\\x\"").ok());
}

// Random types printed with ToString() parse back equal: the printer and the parser agree.
DataTypePtr RandomType(std::mt19937* rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth > 3 ? 15 : 19);
  auto name = [&](int i) {
    static const char* kNames[] = {"a", "B_1", "x y", "`q`", "1x", "é", "not", "a.b"};
    return std::string(kNames[static_cast<size_t>((i + (*rng)()) % 8)]) + std::to_string(i);
  };
  switch (pick(*rng)) {
    case 0:
      return DataType::Boolean();
    case 1:
      return DataType::Int8();
    case 2:
      return DataType::Int16();
    case 3:
      return DataType::Int32();
    case 4:
      return DataType::Int64();
    case 5:
      return DataType::Float32();
    case 6:
      return DataType::Float64();
    case 7:
      return DataType::String();
    case 8:
      return DataType::Binary();
    case 9:
      return DataType::Date();
    case 10:
      return DataType::Timestamp(TimeUnit::kMicros, ((*rng)() & 1) != 0);
    case 11:
      return DataType::Decimal(static_cast<int32_t>((*rng)() % 38 + 1), 0);
    case 12:
      return DataType::UInt32();
    case 13:
      return DataType::Json();
    case 14:
      return DataType::FixedBinary(static_cast<int32_t>((*rng)() % 20 + 1));
    case 15:
      return DataType::Timestamp(TimeUnit::kMillis, false);
    case 16:
    case 17: {
      std::vector<Field> fields;
      int n = static_cast<int>((*rng)() % 4);
      for (int i = 0; i < n; i++) {
        Field f{name(i), RandomType(rng, depth + 1), ((*rng)() & 1) != 0, {}};
        if ((*rng)() % 3 == 0) {
          f.metadata.emplace_back("comment", EncodeJsonString("it's a \\ \"c\"\n"));
        }
        fields.push_back(std::move(f));
      }
      return DataType::Struct(std::move(fields));
    }
    case 18:
      return DataType::List(RandomType(rng, depth + 1), ((*rng)() & 1) != 0);
    default:
      return DataType::Map(RandomType(rng, depth + 1), RandomType(rng, depth + 1),
                           ((*rng)() & 1) != 0);
  }
}

TEST(DdlTest, RandomRoundTrips) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 500; iter++) {
    std::vector<Field> fields;
    int n = static_cast<int>(rng() % 5 + 1);
    for (int i = 0; i < n; i++) {
      fields.push_back(Field{
          fmt::format("c{}{}", i, i % 2 ? "`x" : ""), RandomType(&rng, 0), (rng() & 1) != 0, {}});
    }
    Schema schema(std::move(fields));
    std::string text = schema.ToString();
    Result<Schema> back = ParseDdlSchema(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status().ToString();
    ASSERT_TRUE(back->Equals(schema, /*check_metadata=*/true)) << text << "\n" << back->ToString();
    FuzzDdlRoundTrip(text);
  }
}

TEST(DdlTest, FuzzEntryToleratesGarbage) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab <>(),:`'\"\\NOTULCMEarymapstructint0123 \n-*/";
  for (int iter = 0; iter < 2000; iter++) {
    std::string s;
    size_t len = rng() % 40;
    for (size_t i = 0; i < len; i++) {
      s.push_back(alphabet[rng() % alphabet.size()]);
    }
    FuzzDdlRoundTrip(s);
  }
  FuzzDdlRoundTrip("a STRUCT<b: MAP<INT, ARRAY<STRING NOT NULL>> NOT NULL COMMENT 'x'>");
}

}  // namespace
}  // namespace ferry::columnar
