// Schema evolution from framed Avro and Protobuf messages (issue 20): fields new inside nested
// records and messages evolve the table's STRUCT columns; fields the table lacks under
// evolution "none" are dropped and counted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "ferry/testing/schema_evolution_fixture.h"

namespace ferry::pipeline::evolution_test {
namespace {

// Avro writer schemas by id for the tests below.
class AvroSchemasById final : public transform::WriterSchemas {
 public:
  explicit AvroSchemasById(std::map<int32_t, std::string> json) {
    for (const auto& [id, text] : json) {
      auto parsed = transform::avro::Schema::Parse(text);
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
      schemas_[id] = std::make_shared<const transform::avro::Schema>(std::move(*parsed));
    }
  }
  Result<std::shared_ptr<const transform::avro::Schema>> Get(int32_t id) override {
    auto it = schemas_.find(id);
    if (it == schemas_.end()) {
      return NotFound("no schema {}", id);
    }
    return it->second;
  }

 private:
  std::map<int32_t, std::shared_ptr<const transform::avro::Schema>> schemas_;
};

// Protobuf writer schemas (.proto texts) by id.
class ProtoSchemasById final : public transform::ProtoSchemas {
 public:
  explicit ProtoSchemasById(std::map<int32_t, std::string> texts) {
    for (const auto& [id, text] : texts) {
      auto parsed = transform::protobuf::ProtoSchema::FromProtoFiles({{"o.proto", text}});
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
      schemas_[id] = *parsed;
    }
  }
  Result<std::shared_ptr<const transform::protobuf::ProtoSchema>> Get(int32_t id) override {
    auto it = schemas_.find(id);
    if (it == schemas_.end()) {
      return NotFound("no schema {}", id);
    }
    return it->second;
  }

 private:
  std::map<int32_t, std::shared_ptr<const transform::protobuf::ProtoSchema>> schemas_;
};

// Avro binary by hand (the Avro specification's "Binary Encoding"): a zigzag varint long, a
// string as its length then its bytes, a double as 8 little-endian bytes.
std::string AvroLong(int64_t v) {
  auto u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  std::string out;
  for (; u >= 0x80; u >>= 7) {
    out.push_back(static_cast<char>((u & 0x7f) | 0x80));
  }
  out.push_back(static_cast<char>(u));
  return out;
}
std::string AvroString(const std::string& s) {
  return AvroLong(static_cast<int64_t>(s.size())) + s;
}
std::string AvroDouble(double d) {
  std::string out(sizeof d, '\0');
  std::memcpy(out.data(), &d, sizeof d);
  return out;
}

// Protobuf wire fields by hand (protobuf.dev "Encoding").
std::string ProtoVarint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string ProtoVarintField(uint32_t number, uint64_t v) {
  return ProtoVarint(uint64_t{number} << 3) + ProtoVarint(v);
}
std::string ProtoLenField(uint32_t number, const std::string& bytes) {
  return ProtoVarint((uint64_t{number} << 3) | 2) + ProtoVarint(bytes.size()) + bytes;
}

// v1 {id, loc {lat}}; v2 adds loc.alt inside the nested record and `note` at the top level.
constexpr const char* kAvroOrderV1 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "loc", "type": {"type": "record", "name": "Loc", "fields": [
        {"name": "lat", "type": "double"}]}}]})";
constexpr const char* kAvroOrderV2 = R"({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "loc", "type": {"type": "record", "name": "Loc", "fields": [
        {"name": "lat", "type": "double"}, {"name": "alt", "type": "long"}]}},
    {"name": "note", "type": "string"}]})";

// Message i: schema v1 for i < 5, v2 after.
std::string AvroOrder(int i) {
  std::string body = AvroLong(i) + AvroDouble(1.5);
  if (i < 5) {
    return transform::MakeConfluentFrame(1, {}, body, false);
  }
  body += AvroLong(i * 10) + AvroString(fmt::format("n{}", i));
  return transform::MakeConfluentFrame(2, {}, body, false);
}

// Avro (issue 20): a field new inside a nested record evolves the table as a new field of its
// STRUCT column, in the commit of its data; rows before read it as null; nothing is dropped.
TEST_F(SchemaEvolutionTest, AvroFieldsNewInsideANestedRecordEvolveTheTable) {
  Messages m;
  for (int i = 0; i < 10; ++i) {
    m.payloads[0].push_back(AvroOrder(i));
  }
  Setup setup{.ddl = "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE>",
              .avro = std::make_shared<AvroSchemasById>(
                  std::map<int32_t, std::string>{{1, kAvroOrderV1}, {2, kAvroOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(
      Latest().schema()->ToString(),
      "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE, alt: BIGINT>, _offset BIGINT, note STRING");
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=3|loc={lat:1.5,alt:null}|_offset=3|note=null"),
            rows.end());
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=7|loc={lat:1.5,alt:70}|_offset=7|note=n7"),
            rows.end());
  EXPECT_EQ(Metric("ferry_schema_changes_total"), 1);
  EXPECT_EQ(Dropped("loc.alt"), 0);
}

// Avro with schema_evolution = "none": the nested and the top-level field are dropped, and
// counted once per message whose writer schema has them.
TEST_F(SchemaEvolutionTest, AvroFieldsTheTableLacksAreDroppedAndCounted) {
  Messages m;
  for (int i = 0; i < 12; ++i) {
    m.payloads[0].push_back(AvroOrder(i));
  }
  Setup setup{.ddl = "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE>",
              .mode = SchemaEvolution::kNone,
              .max_rows = 4,
              .avro = std::make_shared<AvroSchemasById>(
                  std::map<int32_t, std::string>{{1, kAvroOrderV1}, {2, kAvroOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT NOT NULL, loc STRUCT<lat: DOUBLE>, _offset BIGINT");
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_NE(std::find(rows.begin(), rows.end(), "id=7|loc={lat:1.5}|_offset=7"), rows.end());
  EXPECT_EQ(Dropped("loc.alt"), 7);  // messages 5..11
  EXPECT_EQ(Dropped("note"), 7);
  EXPECT_EQ(Metric("ferry_schema_changes_total"), 0);
}

// v1 Order {id, items: repeated Item {sku}}; v2 adds Item.qty (inside the repeated message) and
// Order.note.
constexpr const char* kProtoOrderV1 = R"(syntax = "proto3";
message Order { int64 id = 1; repeated Item items = 2; }
message Item { string sku = 1; })";
constexpr const char* kProtoOrderV2 = R"(syntax = "proto3";
message Order { int64 id = 1; repeated Item items = 2; string note = 3; }
message Item { string sku = 1; int32 qty = 2; })";

// Message i: v1 for i < 5, v2 after; two items each.
std::string ProtoOrder(int i) {
  std::string item = ProtoLenField(1, fmt::format("s{}", i));
  if (i < 5) {
    return transform::MakeConfluentFrame(
        1, {0}, ProtoVarintField(1, static_cast<uint64_t>(i)) + ProtoLenField(2, item), true);
  }
  item += ProtoVarintField(2, static_cast<uint64_t>(i));
  return transform::MakeConfluentFrame(2, {0},
                                       ProtoVarintField(1, static_cast<uint64_t>(i)) +
                                           ProtoLenField(2, item) + ProtoLenField(2, item) +
                                           ProtoLenField(3, fmt::format("n{}", i)),
                                       true);
}

// Protobuf: a field new inside a repeated message evolves the array's element STRUCT.
TEST_F(SchemaEvolutionTest, ProtobufFieldsNewInsideANestedMessageEvolveTheTable) {
  Messages m;
  for (int i = 0; i < 10; ++i) {
    m.payloads[0].push_back(ProtoOrder(i));
  }
  Setup setup{.ddl = "id BIGINT, items ARRAY<STRUCT<sku: STRING>>",
              .protobuf = std::make_shared<ProtoSchemasById>(
                  std::map<int32_t, std::string>{{1, kProtoOrderV1}, {2, kProtoOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT, items ARRAY<STRUCT<sku: STRING, qty: INT>>, _offset BIGINT, note STRING");
  std::vector<std::string> rows = Rows();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_NE(
      std::find(rows.begin(), rows.end(), "id=2|items=[{sku:s2,qty:null}]|_offset=2|note=null"),
      rows.end());
  EXPECT_NE(std::find(rows.begin(), rows.end(),
                      "id=8|items=[{sku:s8,qty:8},{sku:s8,qty:8}]|_offset=8|note=n8"),
            rows.end());
  EXPECT_EQ(Metric("ferry_schema_changes_total"), 1);
}

// Protobuf with schema_evolution = "none": dropped and counted per message.
TEST_F(SchemaEvolutionTest, ProtobufFieldsTheTableLacksAreDroppedAndCounted) {
  Messages m;
  for (int i = 0; i < 9; ++i) {
    m.payloads[0].push_back(ProtoOrder(i));
  }
  Setup setup{.ddl = "id BIGINT, items ARRAY<STRUCT<sku: STRING>>",
              .mode = SchemaEvolution::kNone,
              .protobuf = std::make_shared<ProtoSchemasById>(
                  std::map<int32_t, std::string>{{1, kProtoOrderV1}, {2, kProtoOrderV2}})};
  Status st = RunOnce(&m, setup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Latest().schema()->ToString(),
            "id BIGINT, items ARRAY<STRUCT<sku: STRING>>, _offset BIGINT");
  EXPECT_EQ(Rows().size(), 9u);
  EXPECT_EQ(Dropped("items.element.qty"), 4);  // messages 5..8
  EXPECT_EQ(Dropped("note"), 4);
}

}  // namespace
}  // namespace ferry::pipeline::evolution_test
