#include "ferry/parquet/thrift_compact.h"

#include <gtest/gtest.h>

#include <string>

namespace ferry::parquet::thrift {
namespace {

// Bytes of a struct {1: i32 = -3, 2: bool = true, 20: binary "hi", 21: list<i64> [1, 300]}
// worked out by hand from the spec.
TEST(ThriftCompactTest, WriterMatchesHandEncoding) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI32(1, -3);
  w.FieldBool(2, true);
  w.FieldBinary(20, "hi");
  w.FieldListBegin(21, CType::kI64, 2);
  w.WriteI64(1);
  w.WriteI64(300);
  w.StructEnd();
  const std::string expected(
      "\x15\x05"              // delta 1, i32, zigzag(-3) = 5
      "\x11"                  // delta 1, bool true
      "\x08\x28\x02hi"        // long form: binary, zigzag(20) = 40, length 2
      "\x19\x26\x02\xd8\x04"  // delta 1 list, 2 x i64, zigzag(1)=2, zigzag(300)=600
      "\x00",
      14);
  EXPECT_EQ(out, expected);
}

TEST(ThriftCompactTest, RoundTripAllTypes) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI8(1, -7);
  w.FieldI16(2, -30000);
  w.FieldI32(3, INT32_MIN);
  w.FieldI64(4, INT64_MAX);
  w.FieldDouble(5, 3.25);
  w.FieldBinary(6, std::string(300, 'x'));
  w.FieldBool(7, false);
  w.FieldListBegin(8, CType::kBinary, 20);
  for (int i = 0; i < 20; ++i) {
    w.WriteBinary(std::to_string(i));
  }
  w.FieldStructBegin(100);
  w.FieldI32(1, 42);
  w.StructEnd();
  w.FieldListBegin(101, CType::kBoolTrue, 2);
  w.WriteBool(true);
  w.WriteBool(false);
  w.StructEnd();

  CompactReader r(out);
  ASSERT_TRUE(r.StructBegin().ok());
  CType t;
  int16_t id;
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  EXPECT_EQ(id, 1);
  int8_t i8;
  ASSERT_TRUE(r.ReadI8(&i8).ok());
  EXPECT_EQ(i8, -7);
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  int16_t i16;
  ASSERT_TRUE(r.ReadI16(&i16).ok());
  EXPECT_EQ(i16, -30000);
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  int32_t i32;
  ASSERT_TRUE(r.ReadI32(&i32).ok());
  EXPECT_EQ(i32, INT32_MIN);
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  int64_t i64;
  ASSERT_TRUE(r.ReadI64(&i64).ok());
  EXPECT_EQ(i64, INT64_MAX);
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  double d;
  ASSERT_TRUE(r.ReadDouble(&d).ok());
  EXPECT_EQ(d, 3.25);
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  std::string s;
  ASSERT_TRUE(r.ReadBinary(&s).ok());
  EXPECT_EQ(s, std::string(300, 'x'));
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  EXPECT_EQ(id, 7);
  EXPECT_FALSE(CompactReader::FieldBoolValue(t));
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  CType et;
  int32_t n;
  ASSERT_TRUE(r.ReadListHeader(&et, &n).ok());
  EXPECT_EQ(n, 20);
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(r.ReadBinary(&s).ok());
    EXPECT_EQ(s, std::to_string(i));
  }
  // Skip the nested struct and the bool list as if they were unknown fields.
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  EXPECT_EQ(id, 100);
  ASSERT_TRUE(r.Skip(t).ok());
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  EXPECT_EQ(id, 101);
  ASSERT_TRUE(r.Skip(t).ok());
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  EXPECT_EQ(t, CType::kStop);
  ASSERT_TRUE(r.StructEnd().ok());
  EXPECT_EQ(r.position(), out.size());
}

TEST(ThriftCompactTest, SkipsEveryType) {
  // A struct holding a map<i32, string>, a double, a set and a nested struct with a uuid.
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldBegin(CType::kMap, 1);
  out += "\x02\x58";  // 2 entries, i32 -> binary
  w.WriteI32(1);
  w.WriteBinary("a");
  w.WriteI32(2);
  w.WriteBinary("b");
  w.FieldDouble(2, 1.0);
  w.FieldBegin(CType::kSet, 3);
  w.ListBegin(CType::kI32, 1);
  w.WriteI32(9);
  w.FieldStructBegin(4);
  w.FieldBegin(CType::kUuid, 1);
  out += std::string(16, '\x01');
  w.StructEnd();
  w.StructEnd();
  CompactReader r(out);
  ASSERT_TRUE(r.Skip(CType::kStruct).ok());
  EXPECT_EQ(r.position(), out.size());
}

TEST(ThriftCompactTest, RejectsTruncatedInputAtEveryLength) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldBinary(1, "hello");
  w.FieldListBegin(2, CType::kI64, 3);
  w.WriteI64(1);
  w.WriteI64(2);
  w.WriteI64(3);
  w.FieldDouble(3, 2.0);
  w.StructEnd();
  for (size_t len = 0; len < out.size(); ++len) {
    CompactReader r(out.data(), len);
    EXPECT_FALSE(r.Skip(CType::kStruct).ok()) << len;
  }
}

TEST(ThriftCompactTest, RejectsAbsurdSizes) {
  // A list claiming 2^30 elements in a few bytes, a binary claiming 1 GB.
  std::string list = "\xF5\x80\x80\x80\x80\x04";
  CompactReader r1(list);
  CType et;
  int32_t n;
  Status s = r1.ReadListHeader(&et, &n);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  std::string bin = "\x80\x80\x80\x80\x04xyz";
  CompactReader r2(bin);
  std::string v;
  EXPECT_EQ(r2.ReadBinary(&v).code(), StatusCode::kDataLoss);
  // A varint that never ends.
  std::string endless(20, '\xff');
  CompactReader r3(endless);
  int64_t x;
  EXPECT_FALSE(r3.ReadI64(&x).ok());
  // An i32 that overflows.
  std::string big;
  CompactWriter w(&big);
  w.WriteI64(int64_t{1} << 40);
  CompactReader r4(big);
  int32_t y;
  EXPECT_FALSE(r4.ReadI32(&y).ok());
}

TEST(ThriftCompactTest, LimitsNestingDepth) {
  // 1000 nested struct fields: {1: {1: {1: ...}}}
  std::string deep;
  for (int i = 0; i < 1000; ++i) {
    deep.push_back('\x1c');
  }
  deep.append(1000, '\0');
  CompactReader r(deep);
  Status s = r.Skip(CType::kStruct);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("deep"), std::string::npos) << s.ToString();

  // The same through StructBegin.
  CompactReader r2(deep);
  Status last;
  for (int i = 0; i < 200 && last.ok(); ++i) {
    last = r2.StructBegin();
  }
  EXPECT_FALSE(last.ok());
}

TEST(ThriftCompactTest, LongFieldIdsAndNegativeDeltas) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI32(30, 1);
  w.FieldI32(2, 2);  // out of order: long form
  w.FieldI32(1000, 3);
  w.StructEnd();
  CompactReader r(out);
  ASSERT_TRUE(r.StructBegin().ok());
  CType t;
  int16_t id;
  int32_t v;
  for (int want : {30, 2, 1000}) {
    ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
    EXPECT_EQ(id, want);
    ASSERT_TRUE(r.ReadI32(&v).ok());
  }
  ASSERT_TRUE(r.ReadFieldHeader(&t, &id).ok());
  EXPECT_EQ(t, CType::kStop);
}

}  // namespace
}  // namespace ferry::parquet::thrift
