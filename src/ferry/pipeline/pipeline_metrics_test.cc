// The `reason` label of bad records (BadRecordReason) for the errors the Protobuf decoder really
// returns: framing, an unknown schema id, a schema problem, malformed data, bad UTF-8, a value
// out of range; and the cap on the `field` label of ferry_dropped_fields_total.
#include "ferry/pipeline/pipeline_metrics.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "ferry/columnar/record_batch.h"
#include "ferry/transform/confluent_wire.h"
#include "ferry/transform/protobuf_decoder.h"

namespace ferry::pipeline {
namespace {

class OneFile final : public transform::ProtoSchemas {
 public:
  Result<std::shared_ptr<const transform::protobuf::ProtoSchema>> Get(int32_t id) override {
    if (id == 2) {
      return InvalidArgument("schema id 2: a AVRO schema, not Protobuf");
    }
    if (id == 3) {
      return transform::protobuf::ProtoSchema::FromProtoFiles({{"x.proto", "message {"}});
    }
    if (id != 1) {
      return NotFound("HTTP 404 (error 40403: Schema not found)");
    }
    return transform::protobuf::ProtoSchema::FromProtoFiles(
        {{"o.proto",
          "syntax = \"proto3\"; import \"google/protobuf/timestamp.proto\";\n"
          "message O { string s = 1; google.protobuf.Timestamp ts = 2; int32 n = 3; }"}});
  }
};

TEST(BadRecordReasonTest, ProtobufDecoderErrors) {
  auto table = std::make_shared<const columnar::Schema>(
      std::vector<columnar::Field>{{.name = "s", .type = columnar::DataType::String()},
                                   {.name = "ts", .type = columnar::DataType::Timestamp()}});
  auto decoder =
      transform::ProtobufDecoder::Create(table, {.schemas = std::make_shared<OneFile>()});
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto narrow = transform::ProtobufDecoder::Create(
      std::make_shared<const columnar::Schema>(
          std::vector<columnar::Field>{{.name = "n", .type = columnar::DataType::String()}}),
      {.schemas = std::make_shared<OneFile>()});
  ASSERT_TRUE(narrow.ok());
  auto frame = [](int32_t id, const std::vector<int32_t>& indexes, const std::string& payload) {
    return transform::MakeConfluentFrame(id, indexes, payload, true);
  };
  const std::map<std::string, std::string> cases = {
      {"\x01\x00\x00\x00\x01\x00", "framing"},
      {frame(9, {0}, ""), "unknown_schema"},
      {frame(2, {0}, ""), "schema"},
      {frame(3, {0}, ""), "schema"},
      {frame(1, {4}, ""), "schema"},
      {frame(1, {0},
             "\x0a\x05"
             "ab"),
       "malformed"},
      {frame(1, {0}, std::string("\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12)),
       "malformed"},
      {frame(1, {0}, "\x0a\x01\xff"), "invalid_utf8"},
      {frame(1, {0},
             "\x12\x02\x10\x7f"
             "\x12\x06\x10\x80\x94\xeb\xdc\x03"),
       "overflow"},
  };
  for (const auto& [message, reason] : cases) {
    auto batch = columnar::RecordBatch::MakeEmpty(table);
    Status st = (*decoder)->Append(message, &batch);
    ASSERT_FALSE(st.ok()) << reason;
    EXPECT_EQ(BadRecordReason(st.message()), reason) << st.ToString();
  }
  auto batch = columnar::RecordBatch::MakeEmpty(table);
  Status st = (*narrow)->Append(frame(1, {0}, ""), &batch);
  EXPECT_EQ(BadRecordReason(st.message()), "schema") << st.ToString();
}

// ferry_dropped_fields_total keeps at most kMaxDroppedFieldSeries field labels per pipeline; the
// fields past them share the "(other)" series, and a field that has a series keeps it.
TEST(DroppedFieldMetricTest, FieldLabelsAreCapped) {
  metrics::Registry registry;
  PipelineMetrics m(&registry, "p");
  for (size_t i = 0; i < PipelineMetrics::kMaxDroppedFieldSeries; ++i) {
    m.DroppedField(fmt::format("f{}", i))->Increment();
  }
  m.DroppedField("late")->Increment();
  m.DroppedField("later.too")->Increment();
  m.DroppedField("f0")->Increment();
  auto value = [&](const std::string& field) {
    return registry.Value("ferry_dropped_fields_total", {{"pipeline", "p"}, {"field", field}});
  };
  EXPECT_EQ(value("f0"), 2);
  EXPECT_EQ(value("f99"), 1);
  EXPECT_EQ(value("late"), 0);
  EXPECT_EQ(value(PipelineMetrics::kOtherDroppedField), 2);
}

}  // namespace
}  // namespace ferry::pipeline
