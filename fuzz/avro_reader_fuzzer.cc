// libFuzzer target: Avro binary datums (transform/avro_reader.h) against a fixed writer schema
// holding every type, nested records, arrays, maps, unions and a recursive record that the table
// skips, read two ways: field by field into the table's columns, and whole into one STRUCT column
// (AvroRowReader::CreateForColumn, as a Kafka key is read). Any bytes either append one row or
// fail leaving every column as long as before; neither may crash, hang or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/avro_reader.h"

namespace {

constexpr const char* kWriter = R"({"type": "record", "name": "r", "fields": [
  {"name": "b", "type": "boolean"},
  {"name": "i", "type": "int"},
  {"name": "l", "type": ["null", "long"]},
  {"name": "f", "type": "float"},
  {"name": "d", "type": "double"},
  {"name": "s", "type": "string"},
  {"name": "by", "type": "bytes"},
  {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
  {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 2}},
  {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 3}},
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "arr", "type": {"type": "array", "items": {"type": "record", "name": "I", "fields": [
      {"name": "k", "type": "string"}, {"name": "v", "type": ["null", "int", "string"]}]}}},
  {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "long"}}},
  {"name": "list", "type": ["null", {"type": "record", "name": "Node", "fields": [
      {"name": "v", "type": "long"}, {"name": "next", "type": ["null", "Node"]}]}]}
]})";

constexpr const char* kTable =
    "b BOOLEAN, i BIGINT, l BIGINT, f DOUBLE, d DOUBLE, s STRING, by BINARY, e STRING, "
    "fx BINARY, dec DECIMAL(22,3), ts TIMESTAMP, arr ARRAY<STRUCT<k: STRING, v: STRUCT<member0: "
    "INT, member1: STRING>>>, m MAP<STRING, ARRAY<BIGINT>>";

struct Fixture {
  ferry::columnar::SchemaPtr table;
  std::unique_ptr<ferry::transform::avro::AvroRowReader> reader;
  ferry::columnar::SchemaPtr whole_table;  // one column: STRUCT of the table's columns
  std::unique_ptr<ferry::transform::avro::AvroRowReader> whole;
};

const Fixture& Get() {
  static const Fixture fixture = [] {
    Fixture f;
    auto writer = ferry::transform::avro::Schema::Parse(kWriter);
    auto table = ferry::columnar::ParseDdlSchema(kTable);
    if (!writer.ok() || !table.ok()) {
      std::abort();
    }
    f.table = std::make_shared<const ferry::columnar::Schema>(*table);
    std::vector<int> columns;
    for (int i = 0; i < f.table->num_fields(); ++i) {
      columns.push_back(i);
    }
    auto shared = std::make_shared<const ferry::transform::avro::Schema>(std::move(*writer));
    auto reader = ferry::transform::avro::AvroRowReader::Create(shared, *f.table, columns);
    if (!reader.ok()) {
      std::abort();
    }
    f.reader = std::move(*reader);
    f.whole_table =
        std::make_shared<const ferry::columnar::Schema>(std::vector<ferry::columnar::Field>{
            {.name = "key", .type = ferry::columnar::DataType::Struct(f.table->fields())}});
    auto whole = ferry::transform::avro::AvroRowReader::CreateForColumn(shared, *f.whole_table, 0);
    if (!whole.ok()) {
      std::abort();
    }
    f.whole = std::move(*whole);
    return f;
  }();
  return fixture;
}

// Two appends of the datum with `reader`: each adds one row or none, to every column alike.
void AppendTwice(const ferry::transform::avro::AvroRowReader& reader,
                 const ferry::columnar::SchemaPtr& schema, std::string_view datum) {
  auto batch = ferry::columnar::RecordBatch::MakeEmpty(schema);
  for (int round = 0; round < 2; ++round) {
    int64_t before = batch.column(0).length();
    bool ok = reader.Append(datum, &batch).ok();
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (batch.column(c).length() != before + (ok ? 1 : 0)) {
        std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Fixture& f = Get();
  std::string_view datum(reinterpret_cast<const char*>(data), size);
  AppendTwice(*f.reader, f.table, datum);
  AppendTwice(*f.whole, f.whole_table, datum);
  return 0;
}
