// libFuzzer target: Protobuf wire messages (transform/protobuf_reader.h) against a fixed writer
// message holding every scalar type, an enum, nested and repeated messages, packed fields, maps,
// a oneof, the well-known types (Timestamp, a wrapper, Struct/Value/Any as JSON) and a recursive
// message the table skips, read three ways: field by field into the table's columns, whole into
// one STRUCT column (as a Kafka key is read), and framed by the Schema Registry wire format
// through ProtobufDecoder. Any bytes either append one row or fail leaving every column as long
// as before; none may crash, hang or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "ferry/columnar/ddl.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/protobuf_decoder.h"
#include "ferry/transform/protobuf_reader.h"

namespace {

namespace pb = ferry::transform::protobuf;

constexpr const char* kProto = R"(
syntax = "proto3";
package f;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";
enum E { A = 0; B = 1; C = 5; }
message Node { int64 v = 1; Node next = 2; }
message Item { string k = 1; sint32 v = 2; repeated fixed64 xs = 3; }
message R {
  bool b = 1; int32 i = 2; int64 l = 3; uint32 u = 4; uint64 ul = 5; sint32 si = 6;
  sint64 sl = 7; fixed32 f32 = 8; fixed64 f64 = 9; sfixed32 sf32 = 10; sfixed64 sf64 = 11;
  float fl = 12; double d = 13; string s = 14; bytes by = 15; E e = 16;
  repeated Item items = 17; map<string, Item> m = 18; map<int64, E> me = 19;
  repeated sint64 packed = 20; repeated E es = 21;
  oneof o { string os = 22; Item oi = 23; }
  google.protobuf.Timestamp ts = 24; google.protobuf.DoubleValue wd = 25;
  google.protobuf.Struct st = 26; google.protobuf.Value val = 27; google.protobuf.Any any = 28;
  Node list = 29; optional float of = 30;
}
)";

class OneSchema final : public ferry::transform::ProtoSchemas {
 public:
  explicit OneSchema(std::shared_ptr<const pb::ProtoSchema> schema) : schema_(std::move(schema)) {}
  ferry::Result<std::shared_ptr<const pb::ProtoSchema>> Get(int32_t id) override {
    if (id != 1) {
      return ferry::NotFound("no schema {}", id);
    }
    return schema_;
  }

 private:
  std::shared_ptr<const pb::ProtoSchema> schema_;
};

struct Fixture {
  ferry::columnar::SchemaPtr table;
  std::unique_ptr<pb::ProtobufRowReader> reader;
  ferry::columnar::SchemaPtr whole_table;  // one column: STRUCT of the table's columns
  std::unique_ptr<pb::ProtobufRowReader> whole;
  std::unique_ptr<ferry::transform::ProtobufDecoder> framed;
};

Fixture& Get() {
  static Fixture fixture = [] {
    Fixture f;
    auto file = pb::ProtoSchema::FromProtoFiles({{"f.proto", kProto}});
    if (!file.ok()) {
      std::abort();
    }
    auto message = (*file)->Message("f.R");
    if (!message.ok()) {
      std::abort();
    }
    // The table: the message's own mapping without the recursive field, which is skipped.
    auto table = ferry::columnar::ParseDdlSchema(
        "b BOOLEAN, i BIGINT, l BIGINT, u BIGINT, ul DECIMAL(20,0), si INT, sl BIGINT, "
        "f32 BIGINT, f64 DECIMAL(38,0), sf32 INT, sf64 BIGINT, fl DOUBLE, d DOUBLE, s STRING, "
        "by STRING, e STRING, items ARRAY<STRUCT<k: STRING, v: INT, xs: ARRAY<DECIMAL(20,0)>>>, "
        "m MAP<STRING, STRUCT<k: BINARY, v: BIGINT>>, me MAP<BIGINT, STRING>, "
        "packed ARRAY<BIGINT>, es ARRAY<STRING>, os STRING, oi STRUCT<k: STRING>, ts TIMESTAMP, "
        "wd DOUBLE, st STRING, val STRING, any STRING, of FLOAT, extra STRING");
    if (!table.ok()) {
      std::abort();
    }
    f.table = std::make_shared<const ferry::columnar::Schema>(*table);
    std::vector<int> columns;
    for (int i = 0; i < f.table->num_fields(); ++i) {
      columns.push_back(i);
    }
    auto reader = pb::ProtobufRowReader::Create(*message, *f.table, columns);
    if (!reader.ok()) {
      std::abort();
    }
    f.reader = std::move(*reader);
    f.whole_table =
        std::make_shared<const ferry::columnar::Schema>(std::vector<ferry::columnar::Field>{
            {.name = "key", .type = ferry::columnar::DataType::Struct(f.table->fields())}});
    auto whole = pb::ProtobufRowReader::CreateForColumn(*message, *f.whole_table, 0);
    if (!whole.ok()) {
      std::abort();
    }
    f.whole = std::move(*whole);
    auto framed = ferry::transform::ProtobufDecoder::Create(
        f.table, {.schemas = std::make_shared<OneSchema>(*file), .observe = true});
    if (!framed.ok()) {
      std::abort();
    }
    f.framed = std::move(*framed);
    return f;
  }();
  return fixture;
}

// Two appends of the message: each adds one row or none, to every column alike.
template <typename Appender>
void AppendTwice(const ferry::columnar::SchemaPtr& schema, const Appender& append) {
  auto batch = ferry::columnar::RecordBatch::MakeEmpty(schema);
  for (int round = 0; round < 2; ++round) {
    int64_t before = batch.column(0).length();
    bool ok = append(&batch);
    for (int c = 0; c < batch.num_columns(); ++c) {
      if (batch.column(c).length() != before + (ok ? 1 : 0)) {
        std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& f = Get();
  std::string_view message(reinterpret_cast<const char*>(data), size);
  AppendTwice(f.table, [&](ferry::columnar::RecordBatch* batch) {
    return f.reader->Append(message, batch).ok();
  });
  AppendTwice(f.whole_table, [&](ferry::columnar::RecordBatch* batch) {
    return f.whole->Append(message, batch).ok();
  });
  AppendTwice(f.table, [&](ferry::columnar::RecordBatch* batch) {
    return f.framed->Append(message, batch).ok();
  });
  return 0;
}
