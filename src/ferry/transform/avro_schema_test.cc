// Avro schemas: the JSON forms of the specification, names and namespaces, logical types kept
// or ignored as the specification says, Spark's from_avro type mapping, and every malformed
// schema refused with its place named; schema references (named types from other texts).
#include "ferry/transform/avro_schema.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ferry::transform::avro {
namespace {

// The table schema of a record, one "name TYPE [NOT NULL]" per field.
std::vector<std::string> Columns(const std::string& text) {
  auto schema = Schema::Parse(text);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  if (!schema.ok()) {
    return {};
  }
  auto table = ToTableSchema(*schema);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  std::vector<std::string> out;
  if (table.ok()) {
    for (const columnar::Field& f : (*table)->fields()) {
      out.push_back(f.ToString());
    }
  }
  return out;
}

// A record "r" with one field `f` of the given type (JSON).
std::string OneField(const std::string& type) {
  return R"({"type": "record", "name": "r", "fields": [{"name": "f", "type": )" + type + "}]}";
}

std::string ColumnOf(const std::string& type) {
  std::vector<std::string> c = Columns(OneField(type));
  return c.size() == 1 ? c[0] : "<" + std::to_string(c.size()) + " columns>";
}

Status ParseError(const std::string& text) {
  auto schema = Schema::Parse(text);
  return schema.ok() ? Status::OK() : schema.status();
}

TEST(AvroSchemaTest, PrimitivesAndLogicalTypesMapAsSparkDoes) {
  EXPECT_EQ(ColumnOf(R"("boolean")"), "f BOOLEAN NOT NULL");
  EXPECT_EQ(ColumnOf(R"("int")"), "f INT NOT NULL");
  EXPECT_EQ(ColumnOf(R"("long")"), "f BIGINT NOT NULL");
  EXPECT_EQ(ColumnOf(R"("float")"), "f FLOAT NOT NULL");
  EXPECT_EQ(ColumnOf(R"("double")"), "f DOUBLE NOT NULL");
  EXPECT_EQ(ColumnOf(R"("string")"), "f STRING NOT NULL");
  EXPECT_EQ(ColumnOf(R"("bytes")"), "f BINARY NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "fixed", "name": "md5", "size": 16})"), "f BINARY NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "enum", "name": "color", "symbols": ["RED", "GREEN"]})"),
            "f STRING NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "int", "logicalType": "date"})"), "f DATE NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "int", "logicalType": "time-millis"})"), "f INT NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "long", "logicalType": "time-micros"})"), "f BIGINT NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "long", "logicalType": "timestamp-millis"})"),
            "f TIMESTAMP NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "long", "logicalType": "timestamp-micros"})"),
            "f TIMESTAMP NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "long", "logicalType": "local-timestamp-millis"})"),
            "f TIMESTAMP_NTZ NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "long", "logicalType": "local-timestamp-micros"})"),
            "f TIMESTAMP_NTZ NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "string", "logicalType": "uuid"})"), "f STRING NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2})"),
            "f DECIMAL(12,2) NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "bytes", "logicalType": "decimal", "precision": 9})"),
            "f DECIMAL(9,0) NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "fixed", "name": "d", "size": 8, "logicalType": "decimal",
                          "precision": 18, "scale": 4})"),
            "f DECIMAL(18,4) NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "fixed", "name": "dur", "size": 12, "logicalType": "duration"})"),
            "f BINARY NOT NULL");
}

// A fixed may have up to 2^30 bytes: the most digits it holds is computed without overflowing
// (8 * size passed INT32_MAX from 2^28 bytes on, and the decimal was dropped as "invalid").
TEST(AvroSchemaTest, DecimalOnAHugeFixedIsKept) {
  for (int64_t size :
       {int64_t{1} << 28, (int64_t{1} << 28) + 1, int64_t{1} << 29, int64_t{1} << 30}) {
    EXPECT_EQ(ColumnOf(fmt::format(R"({{"type": "fixed", "name": "d", "size": {},
                                        "logicalType": "decimal", "precision": 20, "scale": 2}})",
                                   size)),
              "f DECIMAL(20,2) NOT NULL")
        << "size " << size;
  }
}

TEST(AvroSchemaTest, LogicalTypesTheSpecificationCallsInvalidAreIgnored) {
  // Scale above precision, precision beyond what 8 bytes hold (18), no precision, the wrong
  // underlying type, an unknown name: the underlying type.
  EXPECT_EQ(ColumnOf(R"({"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3})"),
            "f BINARY NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "fixed", "name": "d", "size": 8, "logicalType": "decimal",
                          "precision": 19})"),
            "f BINARY NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "bytes", "logicalType": "decimal"})"), "f BINARY NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "long", "logicalType": "date"})"), "f BIGINT NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "int", "logicalType": "timestamp-millis"})"), "f INT NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "string", "logicalType": "varchar"})"), "f STRING NOT NULL");
  EXPECT_EQ(ColumnOf(R"({"type": "fixed", "name": "dur", "size": 16, "logicalType": "duration"})"),
            "f BINARY NOT NULL");
  // Valid for Avro, too wide for a column.
  auto wide = Schema::Parse(
      OneField(R"({"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2})"));
  ASSERT_TRUE(wide.ok());
  auto table = ToTableSchema(*wide);
  ASSERT_EQ(table.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(table.status().message().find("f: decimal(40, 2)"), std::string::npos)
      << table.status().ToString();
}

TEST(AvroSchemaTest, UnionsNullableWidenedOrMembers) {
  EXPECT_EQ(ColumnOf(R"(["null", "string"])"), "f STRING");
  EXPECT_EQ(ColumnOf(R"(["string", "null"])"), "f STRING");
  EXPECT_EQ(ColumnOf(R"(["int", "long"])"), "f BIGINT NOT NULL");
  EXPECT_EQ(ColumnOf(R"(["null", "float", "double"])"), "f DOUBLE");
  EXPECT_EQ(ColumnOf(R"(["null", "int", "string"])"), "f STRUCT<member0: INT, member1: STRING>");
  EXPECT_EQ(ColumnOf(R"(["boolean", {"type": "array", "items": "long"}])"),
            "f STRUCT<member0: BOOLEAN, member1: ARRAY<BIGINT NOT NULL>> NOT NULL");
  EXPECT_EQ(ColumnOf(R"(["string"])"), "f STRING NOT NULL");
}

TEST(AvroSchemaTest, NestedRecordsArraysAndMaps) {
  std::vector<std::string> columns = Columns(R"({
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
      {"name": "id", "type": "long"},
      {"name": "lines", "type": {"type": "array", "items": {
        "type": "record", "name": "Line", "fields": [
          {"name": "sku", "type": "string"},
          {"name": "qty", "type": ["null", "int"], "default": null}]}}},
      {"name": "tags", "type": {"type": "map", "values": ["null", "string"]}},
      {"name": "first", "type": ["null", "Line"]},
      {"name": "last", "type": "shop.Line"}
    ]})");
  std::vector<std::string> expected = {
      "id BIGINT NOT NULL",
      "lines ARRAY<STRUCT<sku: STRING NOT NULL, qty: INT> NOT NULL> NOT NULL",
      "tags MAP<STRING, STRING> NOT NULL",
      "first STRUCT<sku: STRING NOT NULL, qty: INT>",
      "last STRUCT<sku: STRING NOT NULL, qty: INT> NOT NULL",
  };
  EXPECT_EQ(columns, expected);
}

TEST(AvroSchemaTest, NamesAndNamespaces) {
  auto schema = Schema::Parse(R"({
    "type": "record", "name": "a.b.Outer",
    "fields": [
      {"name": "x", "type": {"type": "fixed", "name": "Hash", "size": 4}},
      {"name": "y", "type": {"type": "enum", "name": "Kind", "namespace": "other",
                             "symbols": ["A"], "aliases": ["OldKind"]}},
      {"name": "z", "type": {"type": "record", "name": "NoSpace", "namespace": "",
                             "fields": [{"name": "h", "type": "a.b.Hash"}]}},
      {"name": "w", "type": "Hash"},
      {"name": "v", "type": "other.Kind"}
    ]})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(schema->root().name, "a.b.Outer");
  ASSERT_NE(schema->Find("a.b.Hash"), nullptr);
  ASSERT_NE(schema->Find("other.Kind"), nullptr);
  EXPECT_EQ(schema->Find("other.Kind")->aliases, std::vector<std::string>{"other.OldKind"});
  ASSERT_NE(schema->Find("NoSpace"), nullptr);
  EXPECT_EQ(schema->Find("Hash"), nullptr);
  const auto& fields = schema->root().fields;
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[3].type, schema->Find("a.b.Hash"));  // one node, referenced twice
  EXPECT_EQ(fields[4].type, schema->Find("other.Kind"));
  // Inside NoSpace (null namespace) "Hash" alone would not resolve.
  EXPECT_NE(ParseError(R"({"type": "record", "name": "a.Outer", "fields": [
      {"name": "x", "type": {"type": "fixed", "name": "Hash", "size": 4}},
      {"name": "z", "type": {"type": "record", "name": "N", "namespace": "",
                             "fields": [{"name": "h", "type": "Hash"}]}}]})")
                .message()
                .find("z.h: unknown type \"Hash\""),
            std::string::npos);
}

TEST(AvroSchemaTest, DefaultsAndAliasesAreKept) {
  auto schema = Schema::Parse(R"({"type": "record", "name": "r", "fields": [
      {"name": "a", "type": "int", "default": 7, "aliases": ["old_a"]},
      {"name": "b", "type": ["null", "string"], "default": null},
      {"name": "c", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"], "default": "Y"}}
    ]})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const auto& f = schema->root().fields;
  EXPECT_EQ(f[0].default_value, nlohmann::json(7));
  EXPECT_EQ(f[0].aliases, std::vector<std::string>{"old_a"});
  ASSERT_TRUE(f[1].default_value.has_value());
  EXPECT_TRUE(f[1].default_value->is_null());
  EXPECT_FALSE(f[2].default_value.has_value());
  EXPECT_EQ(f[2].type->enum_default, "Y");
}

TEST(AvroSchemaTest, MalformedSchemasAreRefusedNamingThePlace) {
  struct Case {
    std::string text;
    std::string message;  // a part of the error
  };
  const std::vector<Case> cases = {
      {"{", "not JSON"},
      {"42", "the top level: 42 is not a schema"},
      {R"({"name": "x"})", "an object without \"type\""},
      {OneField(R"("Nope")"), "f: unknown type \"Nope\""},
      {OneField(R"({"type": "array"})"), "f: an array without \"items\""},
      {OneField(R"({"type": "map", "values": "Nope"})"), "f.{}: unknown type \"Nope\""},
      {OneField(R"([])"), "f: a union without branches"},
      {OneField(R"(["null", ["int"]])"), "f: a union directly inside a union"},
      {OneField(R"(["int", "string", "int"])"), "two branches of type \"int\""},
      {OneField(R"({"type": "fixed", "name": "h"})"), "needs a \"size\""},
      {OneField(R"({"type": "fixed", "name": "1h", "size": 2})"), "\"1h\" is not a valid name"},
      {OneField(R"({"type": "fixed", "name": "int", "size": 2})"), "\"int\" is a primitive"},
      {OneField(R"({"type": "enum", "name": "e", "symbols": ["A", "A"]})"),
       "the symbol \"A\" twice"},
      {OneField(R"({"type": "enum", "name": "e", "symbols": ["A"], "default": "B"})"),
       "a default that is not one of its symbols"},
      {OneField(R"({"type": "enum", "name": "e"})"), "has no \"symbols\" array"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
          {"name": "a", "type": "long"}]})",
       "two fields named \"a\""},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a"}]})",
       "a: field without \"type\""},
      {R"({"type": "record", "name": "r"})", "record \"r\" has no \"fields\" array"},
      {R"({"type": "record", "name": "r", "fields": [
          {"name": "a", "type": {"type": "fixed", "name": "r", "size": 1}}]})",
       "\"r\" is defined twice"},
  };
  for (const Case& c : cases) {
    Status st = ParseError(c.text);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(st.message().find(c.message), std::string::npos)
        << c.text << "\n  gave: " << st.ToString() << "\n  wanted: " << c.message;
  }
}

TEST(AvroSchemaTest, DeepNestingIsRefusedWithoutExhaustingTheStack) {
  std::string text = R"("int")";
  for (int i = 0; i < 10000; ++i) {
    text = R"({"type": "array", "items": )" + text + "}";
  }
  Status st = ParseError(text);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("nested deeper than 64 levels"), std::string::npos) << st.ToString();
}

// Named types used twice by each next one: 40 short definitions would expand to 2^40 types.
TEST(AvroSchemaTest, ATypeThatExpandsBeyondTheBoundIsRefused) {
  std::string fields = R"({"name": "r0", "type": {"type": "record", "name": "R0", "fields": [
      {"name": "a", "type": "long"}]}})";
  for (int i = 1; i <= 40; ++i) {
    fields += fmt::format(R"(, {{"name": "r{0}", "type": {{"type": "record", "name": "R{0}",
        "fields": [{{"name": "x", "type": "R{1}"}}, {{"name": "y", "type": "R{1}"}}]}}}})",
                          i, i - 1);
  }
  auto wide = Schema::Parse(R"({"type": "record", "name": "top", "fields": [)" + fields + "]}");
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  auto table = ToTableSchema(*wide);
  EXPECT_EQ(table.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(table.status().message().find("more than 10000 types"), std::string::npos)
      << table.status().ToString();

  // A chain of 100 records, each holding the one before: deeper than 64 without deep text.
  fields = R"({"name": "c0", "type": {"type": "record", "name": "C0", "fields": [
      {"name": "a", "type": "long"}]}})";
  for (int i = 1; i <= 100; ++i) {
    fields += fmt::format(R"(, {{"name": "c{0}", "type": {{"type": "record", "name": "C{0}",
        "fields": [{{"name": "x", "type": "C{1}"}}]}}}})",
                          i, i - 1);
  }
  auto deep = Schema::Parse(R"({"type": "record", "name": "top", "fields": [)" + fields + "]}");
  ASSERT_TRUE(deep.ok()) << deep.status().ToString();
  table = ToTableSchema(*deep);
  EXPECT_EQ(table.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(table.status().message().find("nest more than 64 records"), std::string::npos)
      << table.status().ToString();
}

TEST(AvroSchemaTest, RecursiveRecordsParseButHaveNoColumnType) {
  auto schema = Schema::Parse(R"({"type": "record", "name": "Node", "fields": [
      {"name": "value", "type": "long"},
      {"name": "next", "type": ["null", "Node"]}]})");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(schema->root().fields[1].type->branches[1], &schema->root());
  auto table = ToTableSchema(*schema);
  ASSERT_EQ(table.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(table.status().message().find("next: record \"Node\" contains itself"),
            std::string::npos)
      << table.status().ToString();
}

TEST(AvroSchemaTest, ATableNeedsARecordAndAColumnType) {
  auto text = Schema::Parse(R"("string")");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(ToTableSchema(*text).status().code(), StatusCode::kInvalidArgument);
  auto only_null = Schema::Parse(OneField(R"(["null"])"));
  ASSERT_TRUE(only_null.ok());
  auto table = ToTableSchema(*only_null);
  EXPECT_EQ(table.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(table.status().message().find("f: a union of null only"), std::string::npos)
      << table.status().ToString();
}

// Schema references: an enum in one text, a record using it in a second, the main schema using
// both by full name (and by short name inside their namespace).
TEST(AvroSchemaTest, ReferencesDefineNamedTypesTheSchemaUses) {
  const std::vector<std::string> references = {
      R"({"type": "enum", "name": "Country", "namespace": "com.acme", "symbols": ["FR", "DE"]})",
      R"({"type": "record", "name": "com.acme.Address", "fields": [
          {"name": "city", "type": "string"}, {"name": "country", "type": "Country"}]})",
      R"({"type": "fixed", "name": "Hash", "namespace": "com.acme", "size": 4})",
  };
  auto schema = Schema::Parse(R"({"type": "record", "name": "Order", "namespace": "com.acme",
      "fields": [{"name": "id", "type": "long"},
                 {"name": "ship_to", "type": "com.acme.Address"},
                 {"name": "bill_to", "type": ["null", "Address"]},
                 {"name": "hash", "type": "com.acme.Hash"}]})",
                              references);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const Node* address = schema->Find("com.acme.Address");
  ASSERT_NE(address, nullptr);
  EXPECT_EQ(address->fields[1].type, schema->Find("com.acme.Country"));
  EXPECT_EQ(schema->root().fields[1].type, address);  // one node, shared
  EXPECT_EQ(schema->root().fields[2].type->branches[1], address);
  auto table = ToTableSchema(*schema);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<std::string> columns;
  for (const columnar::Field& f : (*table)->fields()) {
    columns.push_back(f.ToString());
  }
  EXPECT_EQ(columns, (std::vector<std::string>{
                         "id BIGINT NOT NULL",
                         "ship_to STRUCT<city: STRING NOT NULL, country: STRING NOT NULL> NOT NULL",
                         "bill_to STRUCT<city: STRING NOT NULL, country: STRING NOT NULL>",
                         "hash BINARY NOT NULL"}));
  // Without the references the names are unknown.
  EXPECT_NE(ParseError(R"({"type": "record", "name": "o", "fields": [
                {"name": "a", "type": "com.acme.Address"}]})")
                .message()
                .find("a: unknown type \"com.acme.Address\""),
            std::string::npos);
}

TEST(AvroSchemaTest, BadReferencesAreRefusedNamingTheReference) {
  auto error = [](const std::vector<std::string>& references, const std::string& text) {
    auto schema = Schema::Parse(text, references);
    return schema.ok() ? Status::OK() : schema.status();
  };
  const std::string enum_e = R"({"type": "enum", "name": "a.E", "symbols": ["X"]})";
  const std::string uses_e = OneField(R"("a.E")");
  struct Case {
    std::vector<std::string> references;
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{enum_e, "{"}, uses_e, "Avro schema: reference 2: not JSON: {"},
      {{enum_e, OneField(R"("Nope")")}, uses_e, "Avro schema: reference 2: f: unknown type"},
      // A reference sees only the ones before it.
      {{R"({"type": "record", "name": "a.R", "fields": [{"name": "e", "type": "a.E"}]})", enum_e},
       uses_e,
       "Avro schema: reference 1: e: unknown type \"a.E\""},
      {{enum_e, enum_e},
       uses_e,
       "Avro schema: reference 2: the top level: \"a.E\" is defined twice (first by reference 1)"},
      {{enum_e},
       R"({"type": "record", "name": "r", "fields": [
           {"name": "f", "type": {"type": "fixed", "name": "a.E", "size": 1}}]})",
       "Avro schema: f: \"a.E\" is defined twice (first by reference 1)"},
      {{enum_e}, "{", "Avro schema: not JSON"},
  };
  for (const Case& c : cases) {
    Status st = error(c.references, c.text);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(st.message().find(c.message), std::string::npos)
        << c.text << "\n  gave: " << st.ToString() << "\n  wanted: " << c.message;
  }
}

}  // namespace
}  // namespace ferry::transform::avro
