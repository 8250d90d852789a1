// The Confluent wire format: header, schema id, Protobuf message indexes (and the [0] shortcut),
// and every malformed frame refused with what is wrong.
#include "ferry/transform/confluent_wire.h"

#include <gtest/gtest.h>

#include <string>

namespace ferry::transform {
namespace {

using namespace std::string_literals;

TEST(ConfluentWireTest, AvroFrameCarriesTheSchemaIdAndThePayload) {
  // Bytes as Confluent's serializer writes them for schema id 0x01020304 and payload "xy".
  std::string bytes = "\x00\x01\x02\x03\x04xy"s;
  auto frame = ParseConfluentFrame(bytes, false);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->schema_id, 0x01020304);
  EXPECT_TRUE(frame->message_indexes.empty());
  EXPECT_EQ(frame->payload, "xy");
  EXPECT_EQ(MakeConfluentFrame(0x01020304, {}, "xy", false), bytes);
  // An empty payload is a valid frame (an Avro record with no fields).
  auto empty = ParseConfluentFrame("\x00\x00\x00\x00\x07"s, false);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->schema_id, 7);
  EXPECT_EQ(empty->payload, "");
}

TEST(ConfluentWireTest, ProtobufMessageIndexes) {
  // [0] is the single byte 0.
  std::string first = "\x00\x00\x00\x00\x2a\x00pb"s;
  auto frame = ParseConfluentFrame(first, true);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->schema_id, 42);
  EXPECT_EQ(frame->message_indexes, std::vector<int32_t>{0});
  EXPECT_EQ(frame->payload, "pb");
  EXPECT_EQ(MakeConfluentFrame(42, {0}, "pb", true), first);
  // [1, 0]: count 2 (zigzag 4), then 1 (zigzag 2) and 0.
  std::string nested = "\x00\x00\x00\x00\x2a\x04\x02\x00pb"s;
  frame = ParseConfluentFrame(nested, true);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->message_indexes, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(frame->payload, "pb");
  EXPECT_EQ(MakeConfluentFrame(42, {1, 0}, "pb", true), nested);
  // Indexes past 63 take two varint bytes.
  std::string far = MakeConfluentFrame(-5, {200}, "", true);
  frame = ParseConfluentFrame(far, true);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->schema_id, -5);
  EXPECT_EQ(frame->message_indexes, std::vector<int32_t>{200});
}

TEST(ConfluentWireTest, MalformedFramesAreBadRecordsSayingWhy) {
  struct Case {
    std::string bytes;
    bool protobuf;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", false, "an empty message"},
      {"{\"id\": 1}", false, "the first byte is 0x7b, not the magic byte 0x00"},
      {"\x00\x00\x01"s, false, "3 bytes, shorter than the 5-byte header"},
      {"\x00\x00\x00\x00\x01"s, true, "message-index count is truncated"},
      {"\x00\x00\x00\x00\x01\x80"s, true, "message-index count is truncated"},
      {"\x00\x00\x00\x00\x01\x01"s, true, "-1 Protobuf message indexes"},
      {"\x00\x00\x00\x00\x01\x7e"s, true, "63 Protobuf message indexes"},  // 63 is allowed...
      {"\x00\x00\x00\x00\x01\x04\x02"s, true, "message index 2 of 2 is truncated"},
      {"\x00\x00\x00\x00\x01\x02\x01"s, true,
       "message index 1 of 1 is truncated, malformed or negative"},
      {"\x00\x00\x00\x00\x01\x82\x01"s, true, "65 Protobuf message indexes"},
  };
  for (const Case& c : cases) {
    auto frame = ParseConfluentFrame(c.bytes, c.protobuf);
    if (c.message == "63 Protobuf message indexes") {
      // ...but not with its indexes missing.
      ASSERT_FALSE(frame.ok());
      EXPECT_NE(frame.status().message().find("message index 1 of 63 is truncated"),
                std::string::npos)
          << frame.status().ToString();
      continue;
    }
    ASSERT_FALSE(frame.ok()) << c.message;
    EXPECT_EQ(frame.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(frame.status().message().find(c.message), std::string::npos)
        << "gave: " << frame.status().ToString() << "\nwanted: " << c.message;
  }
}

}  // namespace
}  // namespace ferry::transform
