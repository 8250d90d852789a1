// format = "debezium-avro": Debezium's envelope as Confluent's AvroConverter writes it, decoded
// into the same rows, ops, envelope columns and error messages as the debezium-json fixtures
// (debezium_json_decoder_test.cc), tombstones from Avro keys, and a new writer schema version
// that adds a column mid-stream.
//
// The writer schemas are written here from what AvroData (Confluent's Connect-to-Avro mapping)
// makes of Debezium's PostgreSQL connector schemas (connect.name attributes, unions with null
// for optional fields); the datums by hand from the Avro specification (avro_bytes_for_test.h).
#include "ferry/transform/debezium_avro_decoder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ferry/columnar/schema_for_test.h"
#include "ferry/transform/avro_bytes_for_test.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/debezium_customers_for_test.h"
#include "ferry/transform/debezium_json_decoder.h"
#include "ferry/transform/row_text_for_test.h"

namespace ferry::transform {
namespace debezium_avro_test {

using avro_test::Long;
using avro_test::Str;
using columnar::Ddl;
using columnar::RecordBatch;
using columnar::SchemaPtr;
using debezium_customers::Expected;
using debezium_customers::kAfterRow;
using debezium_customers::kBeforeRow;
using debezium_customers::kTable;

class MapSchemas : public WriterSchemas {
 public:
  Result<std::shared_ptr<const avro::Schema>> Get(int32_t id) override {
    auto it = texts.find(id);
    if (it == texts.end()) {
      return NotFound("HTTP 404 (error 40403: Schema not found)");
    }
    FERRY_ASSIGN_OR_RETURN(avro::Schema parsed, avro::Schema::Parse(it->second));
    return std::make_shared<const avro::Schema>(std::move(parsed));
  }
  std::map<int32_t, std::string> texts;
};

// The Value record's fields: id, name, birth (io.debezium.time.Date), seen (MicroTimestamp),
// price (Connect Decimal(10,2)); `extra` adds fields (a new version of the source table).
std::string ValueFields(std::string_view extra = "") {
  return fmt::format(
      R"([{{"name":"id","type":"int"}},)"
      R"({{"name":"name","type":["null","string"],"default":null}},)"
      R"({{"name":"birth","type":["null",{{"type":"int","connect.version":1,)"
      R"("connect.name":"io.debezium.time.Date"}}],"default":null}},)"
      R"({{"name":"seen","type":["null",{{"type":"long","connect.version":1,)"
      R"("connect.name":"io.debezium.time.MicroTimestamp"}}],"default":null}},)"
      R"({{"name":"price","type":["null",{{"type":"bytes","scale":2,"precision":10,)"
      R"("connect.version":1,"connect.parameters":{{"scale":"2",)"
      R"("connect.decimal.precision":"10"}},"connect.name":"org.apache.kafka.connect.data.Decimal",)"
      R"("logicalType":"decimal"}}],"default":null}}{}])",
      extra);
}

std::string EnvelopeSchema(std::string_view value_fields) {
  return fmt::format(
      R"({{"type":"record","name":"Envelope","namespace":"shop.public.customers","fields":[)"
      R"({{"name":"before","type":["null",{{"type":"record","name":"Value","fields":{},)"
      R"("connect.name":"shop.public.customers.Value"}}],"default":null}},)"
      R"({{"name":"after","type":["null","Value"],"default":null}},)"
      R"({{"name":"source","type":{{"type":"record","name":"Source",)"
      R"("namespace":"io.debezium.connector.postgresql","fields":[)"
      R"({{"name":"version","type":"string"}},{{"name":"connector","type":"string"}},)"
      R"({{"name":"ts_ms","type":"long"}},)"
      R"({{"name":"snapshot","type":[{{"type":"string","connect.name":"io.debezium.data.Enum"}},)"
      R"("null"],"default":"false"}},)"
      R"({{"name":"db","type":"string"}},{{"name":"table","type":"string"}},)"
      R"({{"name":"txId","type":["null","long"],"default":null}},)"
      R"({{"name":"lsn","type":["null","long"],"default":null}}]}}}},)"
      R"({{"name":"op","type":"string"}},)"
      R"({{"name":"ts_ms","type":["null","long"],"default":null}},)"
      R"({{"name":"transaction","type":["null",{{"type":"record","name":"block",)"
      R"("namespace":"event","fields":[{{"name":"id","type":"string"}},)"
      R"({{"name":"total_order","type":"long"}},{{"name":"data_collection_order","type":"long"}}]}}],)"
      R"("default":null}}],"connect.name":"shop.public.customers.Envelope"}})",
      value_fields);
}

constexpr const char* kKeySchema =
    R"({"type":"record","name":"Key","namespace":"shop.public.customers","fields":[)"
    R"({"name":"id","type":"int"}],"connect.name":"shop.public.customers.Key"})";

// Datums. A union value is its branch index then the value.
std::string Some(const std::string& v) {
  return Long(1) + v;
}
const std::string kNull = Long(0);

std::string AfterRow() {  // as debezium_json_decoder_test.cc's kAfter
  return Long(7) + Some(Str("Ada")) + Some(Long(19675)) + Some(Long(1700000000123456)) +
         Some(Str(std::string("\x04\xd2", 2)));
}
std::string BeforeRow() {  // as kBefore
  return Long(7) + Some(Str("Ad")) + kNull + kNull + Some(Str("\xff"));
}

std::string Source() {
  return Str("2.5.0.Final") + Str("postgresql") + Long(1700000000000) + Long(0) + Str("false") +
         Str("shop") + Str("customers") + Some(Long(771)) + Some(Long(23734904));
}

// An envelope datum; `before`/`after` are a Value datum or empty (null).
std::string Envelope(std::string_view op, const std::string& before, const std::string& after,
                     int32_t schema_id = 1) {
  std::string datum = (before.empty() ? kNull : Some(before)) +
                      (after.empty() ? kNull : Some(after)) + Source() + Str(std::string(op)) +
                      Some(Long(1700000000456)) + kNull;
  return MakeConfluentFrame(schema_id, {}, datum, false);
}

DebeziumAvroOptions Options(std::shared_ptr<MapSchemas> schemas) {
  return {.schemas = std::move(schemas), .envelope_columns = debezium_customers::EnvelopeColumns()};
}

std::shared_ptr<MapSchemas> Registry() {
  auto r = std::make_shared<MapSchemas>();
  r->texts = {{1, EnvelopeSchema(ValueFields())}, {5, kKeySchema}};
  return r;
}

struct Harness {
  explicit Harness(std::string_view ddl = kTable, bool observe = false)
      : schemas(Registry()), schema(Ddl(ddl)), batch(RecordBatch::MakeEmpty(schema)) {
    DebeziumAvroOptions o = Options(schemas);
    o.observe = observe;
    if (schema->FieldIndex("_op") == std::nullopt) {
      o.envelope_columns.clear();
    }
    auto d = DebeziumAvroDecoder::Create(schema, std::move(o));
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (d.ok()) {
      decoder = std::move(*d);
    }
  }

  // As debezium_json_decoder_test.cc's Harness::Decode.
  std::string Decode(std::string_view message, bool tombstone = false) {
    return debezium_customers::DecodeChange(decoder.get(), &batch, message, tombstone);
  }

  std::shared_ptr<MapSchemas> schemas;
  SchemaPtr schema;
  RecordBatch batch;
  std::unique_ptr<DebeziumAvroDecoder> decoder;
};

TEST(DebeziumAvroDecoderTest, EveryOpAsTheJsonDecoderReadsIt) {
  Harness h;
  EXPECT_EQ(h.Decode(Envelope("c", "", AfterRow())), Expected("upsert", kAfterRow, "c"));
  EXPECT_EQ(h.Decode(Envelope("r", "", AfterRow())), Expected("upsert", kAfterRow, "r"));
  EXPECT_EQ(h.Decode(Envelope("u", BeforeRow(), AfterRow())), Expected("upsert", kAfterRow, "u"));
  EXPECT_EQ(h.Decode(Envelope("d", BeforeRow(), "")), Expected("delete", kBeforeRow, "d"));
  EXPECT_EQ(h.batch.num_rows(), 4);
  EXPECT_EQ(h.decoder->last_dropped(), nullptr);
}

TEST(DebeziumAvroDecoderTest, Tombstones) {
  Harness h;
  std::string nulls =
      "name: null, birth: null, seen: null, price: null, _op: \"d\", _lsn: null, "
      "_source_ts: null, _ts_ms: null, _db: null}";
  EXPECT_EQ(h.Decode(MakeConfluentFrame(5, {}, Long(7), false), true), "delete: {id: 7, " + nulls);
  EXPECT_EQ(h.Decode("", true), "ERROR: key: a tombstone without a key deletes nothing");
  EXPECT_EQ(h.Decode(MakeConfluentFrame(9, {}, Long(7), false), true),
            "ERROR: key: schema id 9: unknown to the schema registry (HTTP 404 (error 40403: "
            "Schema not found))");
  EXPECT_TRUE(h.Decode(MakeConfluentFrame(5, {}, "", false), true)
                  .starts_with("ERROR: key: schema id 5: Avro datum: field 'id'"));
  EXPECT_EQ(h.Decode(Envelope("c", "", AfterRow())), Expected("upsert", kAfterRow, "c"));
}

// The same bad envelopes as debezium-json, the same reasons (after the schema id).
TEST(DebeziumAvroDecoderTest, BadEnvelopesNameTheFieldAsJsonDoes) {
  Harness h;
  auto json = DebeziumJsonDecoder::Create(h.schema, {.envelope_columns = {{"op", "_op"}}});
  ASSERT_TRUE(json.ok());
  auto json_error = [&](std::string_view message) {
    RecordBatch b = RecordBatch::MakeEmpty(h.schema);
    return "ERROR: schema id 1: " + (*json)->Append(message, &b).message();
  };
  EXPECT_EQ(h.Decode(Envelope("x", "", AfterRow())), json_error(R"({"op":"x","after":{"id":1}})"));
  EXPECT_EQ(h.Decode(Envelope("c", "", "")), json_error(R"({"op":"c","after":null})"));
  EXPECT_EQ(h.Decode(Envelope("d", "", "")), json_error(R"({"op":"d","before":null})"));
  EXPECT_EQ(h.Decode(Envelope("t", "", "")),
            "ERROR: schema id 1: field 'op': unknown operation \"t\" (expected c, r, u or d; "
            "truncate 't' and message 'm' events carry no row)");
  // A writer schema without op: every message of it.
  h.schemas->texts[2] =
      R"({"type":"record","name":"Envelope","fields":[{"name":"after","type":["null",)"
      R"({"type":"record","name":"Value","fields":[{"name":"id","type":"int"}]}]}]})";
  EXPECT_EQ(h.Decode(MakeConfluentFrame(2, {}, Some(Long(1)), false)),
            "ERROR: schema id 2: field 'op': missing (not a Debezium change envelope: the "
            "writer's record \"Envelope\" has no field op)");
  // Bad data inside the row names the row's field.
  std::string bad_name = Long(7) + Some(Long(100));  // a string of 100 bytes, 0 left
  EXPECT_EQ(h.Decode(Envelope("c", "", bad_name)).substr(0, 48),
            "ERROR: schema id 1: Avro datum: field 'after': a");
  std::string truncated = MakeConfluentFrame(1, {}, kNull + Some(AfterRow()), false);
  EXPECT_TRUE(h.Decode(truncated).starts_with("ERROR: schema id 1: Avro datum: field 'source"))
      << h.Decode(truncated);
  EXPECT_EQ(h.batch.num_rows(), 0);
  EXPECT_EQ(h.Decode(Envelope("c", "", AfterRow())), Expected("upsert", kAfterRow, "c"));
}

// A column added in the source table: Debezium registers a new Envelope version whose Value has
// an optional field more. Observed (schema evolution), it is a new column; in a table that has
// the column, rows of the old version read it as null.
TEST(DebeziumAvroDecoderTest, ANewValueFieldMidStream) {
  const std::string v2 =
      EnvelopeSchema(ValueFields(R"(,{"name":"email","type":["null","string"],"default":null})"));
  {
    Harness h(kTable, /*observe=*/true);
    h.schemas->texts[2] = v2;
    EXPECT_EQ(h.Decode(Envelope("c", "", AfterRow())), Expected("upsert", kAfterRow, "c"));
    EXPECT_FALSE(h.decoder->has_observations());
    EXPECT_EQ(h.Decode(Envelope("c", "", AfterRow() + Some(Str("ada@x")), 2)),
              Expected("upsert", kAfterRow, "c"));
    debezium_customers::ExpectEmailObservedAndDropped(*h.decoder);
    if (HasFatalFailure()) {
      return;
    }
  }
  // The evolved table: the pipeline makes a new decoder over it.
  Harness h(std::string(kTable) + ", email STRING", /*observe=*/true);
  h.schemas->texts[2] = v2;
  std::string with_null = Expected("upsert", kAfterRow, "c");
  with_null.insert(with_null.size() - 1, ", email: null");
  EXPECT_EQ(h.Decode(Envelope("c", "", AfterRow())), with_null);
  std::string with_email = Expected("upsert", kAfterRow, "u");
  with_email.insert(with_email.size() - 1, ", email: \"ada@x\"");
  EXPECT_EQ(h.Decode(Envelope("u", BeforeRow() + kNull, AfterRow() + Some(Str("ada@x")), 2)),
            with_email);
  EXPECT_FALSE(h.decoder->has_observations());
}

// Debezium's other time and decimal types by connect.name: Timestamp (ms), NanoTimestamp (into
// TIMESTAMP_NTZ), VariableScaleDecimal (rescaled), a Connect Decimal of undeclared precision.
TEST(DebeziumAvroDecoderTest, ConnectNamedTypes) {
  auto schemas = std::make_shared<MapSchemas>();
  schemas->texts[3] = fmt::format(
      R"({{"type":"record","name":"Envelope","fields":[)"
      R"({{"name":"after","type":["null",{{"type":"record","name":"Value","fields":[)"
      R"({{"name":"a","type":{{"type":"long","connect.name":"io.debezium.time.Timestamp"}}}},)"
      R"({{"name":"b","type":{{"type":"long","connect.name":"io.debezium.time.NanoTimestamp"}}}},)"
      R"({{"name":"v","type":{{"type":"record","name":"VariableScaleDecimal",)"
      R"("namespace":"io.debezium.data","fields":[{{"name":"scale","type":"int"}},)"
      R"({{"name":"value","type":"bytes"}}],"connect.name":"io.debezium.data.VariableScaleDecimal"}}}},)"
      R"({{"name":"p","type":{{"type":"bytes","scale":2,"precision":64,)"
      R"("connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}}}}]}}]}},)"
      R"({{"name":"op","type":"string"}}]}})");
  SchemaPtr schema = Ddl("a TIMESTAMP, b TIMESTAMP_NTZ, v DECIMAL(10,3), p DECIMAL(12,2)");
  auto d = DebeziumAvroDecoder::Create(schema, {.schemas = schemas});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  RecordBatch batch = RecordBatch::MakeEmpty(schema);
  // 0x3039 = 12345 at scale 1 = 1234.5; p 0x3039 at scale 2 = 123.45.
  std::string datum = Some(Long(1700000000123) + Long(1700000000123456789) + Long(1) +
                           Str("\x30\x39") + Str("\x30\x39")) +
                      Str("c");
  Status st = (*d)->Append(MakeConfluentFrame(3, {}, datum, false), &batch);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(RowText(batch, 0),
            "{a: 2023-11-14T22:13:20.123, b: 2023-11-14T22:13:20.123456, v: 1234.500, p: 123.45}");
}

TEST(DebeziumAvroDecoderTest, CreateNeedsARegistryAndChecksEnvelopeColumns) {
  SchemaPtr schema = Ddl("id INT, _lsn DOUBLE");
  EXPECT_NE(DebeziumAvroDecoder::Create(schema, {}).status().message().find("schema registry"),
            std::string::npos);
  EXPECT_EQ(DebeziumAvroDecoder::Create(
                schema, {.schemas = Registry(), .envelope_columns = {{"source.lsn", "_lsn"}}})
                .status()
                .message(),
            "envelope_columns: column \"_lsn\" for 'source.lsn' is DOUBLE; envelope columns are "
            "STRING, BIGINT, INT, BOOLEAN, TIMESTAMP or TIMESTAMP_NTZ");
}

}  // namespace debezium_avro_test
}  // namespace ferry::transform
