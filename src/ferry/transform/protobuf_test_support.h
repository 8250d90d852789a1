// Test-only: Protobuf wire bytes written by hand (protobuf.dev "Encoding"), and messages
// serialized by libprotobuf itself from text format, so that the reader is checked against
// bytes it did not write.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "ferry/base/varint.h"
#include "ferry/transform/protobuf_schema.h"

namespace ferry::transform::protobuf_test {

inline std::string Varint(uint64_t v) {
  std::string out;
  AppendVarint(&out, v);
  return out;
}
inline std::string Tag(uint32_t number, uint32_t wire) {
  return Varint((static_cast<uint64_t>(number) << 3) | wire);
}
inline std::string VarintField(uint32_t number, uint64_t v) {
  return Tag(number, 0) + Varint(v);
}
inline std::string LenField(uint32_t number, const std::string& bytes) {
  return Tag(number, 2) + Varint(bytes.size()) + bytes;
}
inline std::string Fixed32Field(uint32_t number, uint32_t v) {
  std::string out = Tag(number, 5);
  out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}
inline std::string Fixed64Field(uint32_t number, uint64_t v) {
  std::string out = Tag(number, 1);
  out.append(reinterpret_cast<const char*>(&v), 8);
  return out;
}

inline std::shared_ptr<const protobuf::ProtoSchema> ParseProto(const std::string& text) {
  auto schema = protobuf::ProtoSchema::FromProtoFiles({{"test.proto", text}});
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return schema.ok() ? *schema : nullptr;
}

// `text` (protobuf text format) as message `type` of `schema`, serialized by libprotobuf.
inline std::string Serialize(const protobuf::ProtoSchema& schema, const std::string& type,
                             const std::string& text) {
  const google::protobuf::Descriptor* d = schema.pool().FindMessageTypeByName(type);
  EXPECT_NE(d, nullptr) << type;
  if (d == nullptr) {
    return "";
  }
  google::protobuf::DynamicMessageFactory factory(&schema.pool());
  std::unique_ptr<google::protobuf::Message> m(factory.GetPrototype(d)->New());
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, m.get())) << text;
  return m->SerializeAsString();
}

}  // namespace ferry::transform::protobuf_test
