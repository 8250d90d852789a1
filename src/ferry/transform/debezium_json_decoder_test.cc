#include "ferry/transform/debezium_json_decoder.h"

#include <gtest/gtest.h>

#include <string>

#include "ferry/columnar/schema_for_test.h"
#include "ferry/transform/debezium_customers_for_test.h"
#include "ferry/transform/row_text_for_test.h"

// Fixtures are written here from Debezium's documented event format (PostgreSQL connector,
// JsonConverter with and without schemas.enable); no third-party files.

namespace ferry::transform {
namespace debezium_json_test {

using columnar::Ddl;
using columnar::RecordBatch;
using columnar::SchemaPtr;
using debezium_customers::Expected;
using debezium_customers::kAfterRow;
using debezium_customers::kBeforeRow;
using debezium_customers::kTable;

constexpr std::string_view kSource =
    R"({"version":"2.5.0.Final","connector":"postgresql","name":"shop","ts_ms":1700000000000,)"
    R"("snapshot":"false","db":"shop","sequence":"[null,\"23734904\"]","schema":"public",)"
    R"("table":"customers","txId":771,"lsn":23734904,"xmin":null})";

std::string Envelope(std::string_view op, std::string_view before, std::string_view after) {
  return fmt::format(R"({{"before":{},"after":{},"source":{},"op":"{}","ts_ms":1700000000456,)"
                     R"("transaction":null}})",
                     before, after, kSource, op);
}

// The Connect schema of the customers envelope: id INT32, name STRING, birth io.debezium.time.Date,
// seen io.debezium.time.MicroTimestamp, price Decimal(10,2) as bytes.
constexpr std::string_view kRowSchemaFields =
    R"([{"type":"int32","optional":false,"field":"id"},)"
    R"({"type":"string","optional":true,"field":"name"},)"
    R"({"type":"int32","optional":true,"name":"io.debezium.time.Date","version":1,"field":"birth"},)"
    R"({"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,)"
    R"("field":"seen"},)"
    R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,)"
    R"("parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"price"}])";

std::string Wrapped(std::string_view envelope) {
  std::string schema = fmt::format(
      R"({{"type":"struct","fields":[)"
      R"({{"type":"struct","fields":{0},"optional":true,"name":"shop.public.customers.Value",)"
      R"("field":"before"}},)"
      R"({{"type":"struct","fields":{0},"optional":true,"name":"shop.public.customers.Value",)"
      R"("field":"after"}},)"
      R"({{"type":"struct","fields":[{{"type":"string","optional":false,"field":"connector"}},)"
      R"({{"type":"int64","optional":false,"field":"lsn"}}],"optional":false,)"
      R"("name":"io.debezium.connector.postgresql.Source","field":"source"}},)"
      R"({{"type":"string","optional":false,"field":"op"}},)"
      R"({{"type":"int64","optional":true,"field":"ts_ms"}}],)"
      R"("optional":false,"name":"shop.public.customers.Envelope","version":2}})",
      kRowSchemaFields);
  return fmt::format(R"({{"schema":{},"payload":{}}})", schema, envelope);
}

DebeziumJsonOptions Options() {
  DebeziumJsonOptions o;
  o.envelope_columns = debezium_customers::EnvelopeColumns();
  o.row.epoch_unit = EpochUnit::kMicros;
  return o;
}

struct Harness {
  explicit Harness(std::string_view ddl = kTable, DebeziumJsonOptions options = Options())
      : schema(Ddl(ddl)), batch(RecordBatch::MakeEmpty(schema)) {
    auto d = DebeziumJsonDecoder::Create(schema, std::move(options));
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    if (d.ok()) {
      decoder = std::move(*d);
    }
  }

  // The decoded row as text with its op ("upsert: {...}", "delete: {...}"), or "ERROR: ...".
  std::string Decode(std::string_view message, bool tombstone = false) {
    return debezium_customers::DecodeChange(decoder.get(), &batch, message, tombstone);
  }

  SchemaPtr schema;
  RecordBatch batch;
  std::unique_ptr<DebeziumJsonDecoder> decoder;
};

constexpr std::string_view kAfter =
    R"({"id":7,"name":"Ada","birth":19675,"seen":1700000000123456,"price":"BNI="})";
constexpr std::string_view kBefore =
    R"({"id":7,"name":"Ad","birth":null,"seen":null,"price":"/w=="})";

TEST(DebeziumJsonDecoderTest, EveryOpBareEnvelope) {
  Harness h;
  EXPECT_EQ(h.Decode(Envelope("c", "null", kAfter)), Expected("upsert", kAfterRow, "c"));
  EXPECT_EQ(h.Decode(Envelope("r", "null", kAfter)), Expected("upsert", kAfterRow, "r"));
  EXPECT_EQ(h.Decode(Envelope("u", kBefore, kAfter)), Expected("upsert", kAfterRow, "u"));
  EXPECT_EQ(h.Decode(Envelope("d", kBefore, "null")), Expected("delete", kBeforeRow, "d"));
}

TEST(DebeziumJsonDecoderTest, EveryOpWithSchemaWrapper) {
  // The schema names the units, so the configured epoch unit does not matter.
  DebeziumJsonOptions o = Options();
  o.row.epoch_unit = EpochUnit::kSeconds;
  Harness h(kTable, o);
  EXPECT_EQ(h.Decode(Wrapped(Envelope("c", "null", kAfter))), Expected("upsert", kAfterRow, "c"));
  EXPECT_EQ(h.Decode(Wrapped(Envelope("r", "null", kAfter))), Expected("upsert", kAfterRow, "r"));
  EXPECT_EQ(h.Decode(Wrapped(Envelope("u", kBefore, kAfter))), Expected("upsert", kAfterRow, "u"));
  EXPECT_EQ(h.Decode(Wrapped(Envelope("d", kBefore, "null"))), Expected("delete", kBeforeRow, "d"));
}

TEST(DebeziumJsonDecoderTest, SpecialTypesFollowTheSchemaNames) {
  // Timestamp (ms), NanoTimestamp, Decimal at the schema's scale 3 into a scale-2 column
  // (rounded half up by the JSON decoder), VariableScaleDecimal, ZonedTimestamp as a string.
  Harness h("id INT, a TIMESTAMP, b TIMESTAMP_NTZ, z TIMESTAMP, p DECIMAL(10,2), v DECIMAL(10,3)",
            {});
  std::string schema =
      R"({"type":"struct","fields":[{"type":"struct","optional":true,"field":"after","fields":[)"
      R"({"type":"int32","field":"id"},)"
      R"({"type":"int64","name":"io.debezium.time.Timestamp","field":"a"},)"
      R"({"type":"int64","name":"io.debezium.time.NanoTimestamp","field":"b"},)"
      R"({"type":"string","name":"io.debezium.time.ZonedTimestamp","field":"z"},)"
      R"({"type":"bytes","name":"org.apache.kafka.connect.data.Decimal",)"
      R"("parameters":{"scale":"3"},"field":"p"},)"
      R"({"type":"struct","name":"io.debezium.data.VariableScaleDecimal","field":"v"}]},)"
      R"({"type":"string","field":"op"}]})";
  // 12345 at scale 3 = 12.345 -> 12.35; VariableScaleDecimal 0x3039 = 12345 at scale 1.
  std::string payload =
      R"({"before":null,"after":{"id":1,"a":1700000000123,"b":1700000000123456789,)"
      R"("z":"2023-11-14T23:13:20.5+01:00","p":"MDk=","v":{"scale":1,"value":"MDk="}},)"
      R"("op":"c"})";
  EXPECT_EQ(h.Decode(fmt::format(R"({{"schema":{},"payload":{}}})", schema, payload)),
            "upsert: {id: 1, a: 2023-11-14T22:13:20.123, b: 2023-11-14T22:13:20.123456, "
            "z: 2023-11-14T22:13:20.5, p: 12.35, v: 1234.500}");
}

TEST(DebeziumJsonDecoderTest, DecimalHandlingString) {
  DebeziumJsonOptions o;
  o.decimal_handling = DecimalHandling::kString;
  Harness h("id INT, p DECIMAL(10,2)", o);
  EXPECT_EQ(h.Decode(R"({"op":"c","after":{"id":1,"p":"12.34"}})"), "upsert: {id: 1, p: 12.34}");
  Harness precise("id INT, p DECIMAL(10,2)", {});
  EXPECT_EQ(precise.Decode(R"({"op":"c","after":{"id":1,"p":"!!"}})"),
            "ERROR: field 'after.p': expected a Connect Decimal (base64 bytes), found \"!!\"");
}

TEST(DebeziumJsonDecoderTest, Tombstones) {
  Harness h;
  std::string nulls =
      "name: null, birth: null, seen: null, price: null, _op: \"d\", _lsn: null, "
      "_source_ts: null, _ts_ms: null, _db: null}";
  EXPECT_EQ(h.Decode(R"({"id": 7})", true), "delete: {id: 7, " + nulls);
  EXPECT_EQ(h.Decode(R"({"schema":{"type":"struct","fields":[{"type":"int32","optional":false,)"
                     R"("field":"id"}],"optional":false,"name":"shop.public.customers.Key"},)"
                     R"("payload":{"id":8}})",
                     true),
            "delete: {id: 8, " + nulls);
  EXPECT_EQ(h.Decode("", true), "ERROR: key: a tombstone without a key deletes nothing");
  EXPECT_EQ(h.Decode("[1]", true),
            "ERROR: key: expected a JSON object, as Debezium's JsonConverter writes");
  EXPECT_EQ(h.Decode(R"({"name": "x"})", true), "ERROR: field 'key.id': missing required field");
  // A value after a tombstone is an upsert again.
  EXPECT_EQ(h.Decode(Envelope("c", "null", kAfter)), Expected("upsert", kAfterRow, "c"));
}

TEST(DebeziumJsonDecoderTest, BadEnvelopesNameTheField) {
  Harness h;
  EXPECT_EQ(h.Decode(R"({"before":null,"after":{"id":1}})"),
            "ERROR: field 'op': missing (not a Debezium change envelope)");
  EXPECT_EQ(h.Decode(Wrapped(R"({"before":null,"after":{"id":1}})")),
            "ERROR: field 'op': missing (not a Debezium change envelope)");
  EXPECT_EQ(h.Decode(R"({"op":"x","after":{"id":1}})"),
            "ERROR: field 'op': unknown operation \"x\" (expected c, r, u or d; truncate 't' "
            "and message 'm' events carry no row)");
  EXPECT_EQ(h.Decode(R"({"op":1,"after":{"id":1}})"),
            "ERROR: field 'op': expected a string, found a number");
  EXPECT_EQ(h.Decode(Envelope("c", "null", "null")),
            "ERROR: field 'after': null in a 'c' change (the change needs the new row)");
  EXPECT_EQ(h.Decode(R"({"op":"u","before":{"id":1}})"),
            "ERROR: field 'after': missing in a 'u' change (the change needs the new row)");
  EXPECT_EQ(h.Decode(Envelope("d", "null", "null")),
            "ERROR: field 'before': null in a 'd' change (a delete needs the old row, at least "
            "its key)");
  EXPECT_EQ(h.Decode(Envelope("c", "null", R"({"id":"seven"})")),
            "ERROR: field 'after.id': expected an integer, found string \"seven\"");
  EXPECT_EQ(h.Decode(Envelope("c", "null", R"({"name":"x"})")),
            "ERROR: field 'after.id': missing required field");
  EXPECT_EQ(h.Decode(R"({"op":"c","after":{"id":1},"source":{"lsn":"0/16B3748"}})"),
            "ERROR: field 'source.lsn': expected an integer, found a string 0/16B3748");
  EXPECT_EQ(h.Decode(R"({"schema":{},"payload":"x"})"),
            "ERROR: field 'payload': expected the change envelope, found a string");
  EXPECT_EQ(h.Decode(R"({"schema":{"fields":3},"payload":{"op":"c","after":{"id":1}}})"),
            "ERROR: field 'schema': expected a Kafka Connect struct schema with \"fields\"");
  EXPECT_EQ(h.Decode("[]"),
            "ERROR: malformed message: expected a JSON object (a Debezium envelope)");
  EXPECT_TRUE(h.Decode(R"({"op":"c","after":{"id":1})").starts_with("ERROR: malformed JSON"));
  // Nothing above left a row; a good message still decodes.
  EXPECT_EQ(h.batch.num_rows(), 0);
  EXPECT_EQ(h.Decode(Envelope("c", "null", kAfter)), Expected("upsert", kAfterRow, "c"));
}

// A column added in the source table (issue 42): `after` gains a field mid-stream. Observed
// (schema evolution), it is a new column; in the evolved table earlier rows read it as null.
TEST(DebeziumJsonDecoderTest, ANewRowFieldMidStream) {
  DebeziumJsonOptions o = Options();
  o.row.observe = true;
  {
    Harness h(kTable, o);
    EXPECT_EQ(h.Decode(Envelope("c", "null", kAfter)), Expected("upsert", kAfterRow, "c"));
    EXPECT_FALSE(h.decoder->has_observations());
    std::string with_email(kAfter);
    with_email.insert(with_email.size() - 1, R"(,"email":"ada@x")");
    h.Decode(Envelope("u", kBefore, with_email));
    ASSERT_TRUE(h.decoder->has_observations());
    std::vector<FieldObservation> seen = h.decoder->TakeObservations();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].path, std::vector<std::string>{"email"});
    EXPECT_EQ(seen[0].type->ToString(), "STRING");
  }
  Harness h(std::string(kTable) + ", email STRING", o);
  std::string with_null = Expected("upsert", kAfterRow, "c");
  with_null.insert(with_null.size() - 1, ", email: null");
  EXPECT_EQ(h.Decode(Envelope("c", "null", kAfter)), with_null);
  std::string with_email(kAfter);
  with_email.insert(with_email.size() - 1, R"(,"email":"ada@x")");
  std::string expected = Expected("upsert", kAfterRow, "u");
  expected.insert(expected.size() - 1, ", email: \"ada@x\"");
  EXPECT_EQ(h.Decode(Envelope("u", kBefore, with_email)), expected);
  EXPECT_FALSE(h.decoder->has_observations());
}

TEST(DebeziumJsonDecoderTest, CreateChecksTheEnvelopeColumns) {
  SchemaPtr schema = Ddl("id INT, _op STRING, _lsn DOUBLE");
  DebeziumJsonOptions o;
  o.envelope_columns = {{"source", "_op"}};
  EXPECT_EQ(DebeziumJsonDecoder::Create(schema, o).status().message(),
            "envelope_columns: unknown envelope field \"source\" (op, ts_ms, ts_us, ts_ns, "
            "source.<field>, transaction.<field>)");
  o.envelope_columns = {{"op", "_missing"}};
  EXPECT_EQ(DebeziumJsonDecoder::Create(schema, o).status().message(),
            "envelope_columns: the table has no column \"_missing\" (for 'op'); declare it in "
            "the schema");
  o.envelope_columns = {{"source.lsn", "_lsn"}};
  EXPECT_EQ(DebeziumJsonDecoder::Create(schema, o).status().message(),
            "envelope_columns: column \"_lsn\" for 'source.lsn' is DOUBLE; envelope columns are "
            "STRING, BIGINT, INT, BOOLEAN, TIMESTAMP or TIMESTAMP_NTZ");
  EXPECT_TRUE(IsDebeziumEnvelopeField("transaction.total_order"));
  EXPECT_FALSE(IsDebeziumEnvelopeField("source.a.b"));
  EXPECT_FALSE(IsDebeziumEnvelopeField("after"));
}

TEST(DebeziumJsonDecoderTest, ConnectDecimalBytes) {
  EXPECT_EQ(*DecimalFromConnectBytes("BNI="), 1234);
  EXPECT_EQ(*DecimalFromConnectBytes("/w=="), -1);
  EXPECT_EQ(*DecimalFromConnectBytes("AP8="), 255);
  EXPECT_FALSE(DecimalFromConnectBytes("").ok());
  EXPECT_FALSE(DecimalFromConnectBytes("AAAAAAAAAAAAAAAAAAAAAAAA").ok());  // 18 bytes
}

}  // namespace debezium_json_test
}  // namespace ferry::transform
