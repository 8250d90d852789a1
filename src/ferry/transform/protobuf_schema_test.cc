// Protobuf schemas: .proto texts with references and the well-known types' imports, syntax and
// build errors naming the file and line, FileDescriptorSets as protoc writes them, and message
// lookup by name and by the Confluent message indexes.
#include "ferry/transform/protobuf_schema.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <string>

#include <google/protobuf/descriptor.pb.h>

namespace ferry::transform::protobuf {
namespace {

constexpr const char* kCommon = R"(syntax = "proto3"; package common;
message Money { string currency = 1; int64 units = 2; })";
constexpr const char* kOrder = R"(syntax = "proto3"; package shop;
import "common/money.proto";
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1; common.Money total = 2; google.protobuf.Timestamp at = 3;
  message Line { string sku = 1; }
  repeated Line lines = 4;
}
message Other { bool b = 1; })";

TEST(ProtobufSchemaTest, ReferencesAndWellKnownImports) {
  auto schema =
      ProtoSchema::FromProtoFiles({{"common/money.proto", kCommon}, {"order.proto", kOrder}});
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ((*schema)->FirstMessageName(), "shop.Order");
  auto order = (*schema)->MessageAt({0});
  ASSERT_TRUE(order.ok());
  auto table = ToTableSchema(**order);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ((*table)->ToString(),
            "id BIGINT, total STRUCT<currency: STRING, units: BIGINT>, at TIMESTAMP, "
            "lines ARRAY<STRUCT<sku: STRING>>");
  EXPECT_EQ((*schema)->MessageAt({0, 0}).value()->root().full_name, "shop.Order.Line");
  EXPECT_EQ((*schema)->MessageAt({1}).value()->root().full_name, "shop.Other");
  EXPECT_EQ((*schema)->MessageAt({}).value()->root().full_name, "shop.Order");
  EXPECT_FALSE((*schema)->MessageAt({2}).ok());
  EXPECT_FALSE((*schema)->MessageAt({1, 0}).ok());
  EXPECT_EQ((*schema)->Message(".shop.Order.Line").value()->root().full_name, "shop.Order.Line");
  EXPECT_FALSE((*schema)->Message("shop.Nope").ok());
}

TEST(ProtobufSchemaTest, ErrorsNameTheFileAndLine) {
  auto bad = ProtoSchema::FromProtoFiles(
      {{"a.proto", "syntax = \"proto3\";\nmessage A {\n  int32 x = ;\n}"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("a.proto: line 3, column"), std::string::npos)
      << bad.status().ToString();
  auto missing = ProtoSchema::FromProtoFiles({{"order.proto", kOrder}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("common/money.proto"), std::string::npos)
      << missing.status().ToString();
  auto unknown =
      ProtoSchema::FromProtoFiles({{"b.proto", "syntax = \"proto3\"; message B { Nope n = 1; }"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("Nope"), std::string::npos)
      << unknown.status().ToString();
  EXPECT_FALSE(ProtoSchema::FromProtoFiles({}).ok());
}

TEST(ProtobufSchemaTest, ADescriptorSetAsProtocWritesIt) {
  auto schema =
      ProtoSchema::FromProtoFiles({{"common/money.proto", kCommon}, {"order.proto", kOrder}});
  ASSERT_TRUE(schema.ok());
  google::protobuf::FileDescriptorSet set;
  for (const char* name :
       {"google/protobuf/timestamp.proto", "common/money.proto", "order.proto"}) {
    (*schema)->pool().FindFileByName(name)->CopyTo(set.add_file());
  }
  auto loaded = ProtoSchema::FromDescriptorSet(set.SerializeAsString(), "order.desc");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->Message("shop.Order").value()->messages.size(), 4U);
  set.mutable_file()->DeleteSubrange(0, 1);
  auto partial = ProtoSchema::FromDescriptorSet(set.SerializeAsString(), "order.desc");
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("--include_imports"), std::string::npos);
  EXPECT_FALSE(ProtoSchema::FromDescriptorSet("\xff\xff", "x.desc").ok());
  EXPECT_FALSE(ProtoSchema::FromDescriptorSet("", "x.desc").ok());
}

TEST(ProtobufSchemaTest, EnumsKeepTheFirstNameOfEachNumber) {
  auto schema = ProtoSchema::FromProtoFiles({{"e.proto", R"(syntax = "proto3";
    enum E { option allow_alias = true; Z = 0; B = 2; A = 1; TWO = 2; }
    message M { E e = 1; repeated E es = 2; oneof o { int32 x = 3; string y = 4; } optional int32 z = 5; })"}});
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  auto m = (*schema)->Message("M");
  ASSERT_TRUE(m.ok());
  const EnumDef& e = (*m)->enums.at(0);
  ASSERT_EQ(e.values.size(), 3U);
  EXPECT_EQ(e.values[2], (std::pair<int32_t, std::string>{2, "B"}));
  EXPECT_EQ((*m)->root().fields[2].oneof, 0);
  EXPECT_EQ((*m)->root().fields[3].oneof, 0);
  EXPECT_EQ((*m)->root().fields[4].oneof, 1);  // proto3 optional: a synthetic oneof
}

}  // namespace
}  // namespace ferry::transform::protobuf
