// Protobuf schemas: .proto files (the Schema Registry's PROTOBUF schemas and their references,
// parsed with libprotoc) or a FileDescriptorSet (`protoc --descriptor_set_out --include_imports`)
// built into a descriptor pool, and one message of them copied into a plain model
// (MessageSchema) that the wire reader (protobuf_reader.h) plans from. libprotobuf is used here
// only, for descriptors; messages are never decoded with it.
//
//   FERRY_ASSIGN_OR_RETURN(auto file, ProtoSchema::FromDescriptorSet(bytes, "orders.desc"));
//   FERRY_ASSIGN_OR_RETURN(auto message, file->Message("shop.Order"));
//   FERRY_ASSIGN_OR_RETURN(columnar::SchemaPtr table, protobuf::ToTableSchema(*message));
//
// Column types (Spark's from_protobuf, docs/formats.md): message STRUCT; repeated ARRAY; map
// MAP; enum STRING; int32/sint32/sfixed32 INT; int64/sint64/sfixed64 and uint32/fixed32 BIGINT;
// uint64/fixed64 DECIMAL(20,0); float FLOAT; double DOUBLE; bool BOOLEAN; string STRING; bytes
// BINARY; google.protobuf.Timestamp TIMESTAMP; the wrappers (Int32Value, ...) their value's type;
// google.protobuf.Struct, Value, ListValue and Any STRING (JSON text); Duration and every other
// message a STRUCT of its fields. Every field is nullable (absent fields read as null). A message
// that contains itself has no column type: InvalidArgument naming the field. Groups (proto2) are
// not mapped: their fields are skipped.
//
// Thread-safety: immutable after the factories.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"

namespace google::protobuf {
class Descriptor;
class DescriptorPool;
class FileDescriptor;
}  // namespace google::protobuf

namespace ferry::transform::protobuf {

// The field types of descriptor.proto (groups excluded).
enum class Kind : uint8_t {
  kDouble,
  kFloat,
  kInt32,
  kInt64,
  kUInt32,
  kUInt64,
  kSInt32,
  kSInt64,
  kFixed32,
  kFixed64,
  kSFixed32,
  kSFixed64,
  kBool,
  kString,
  kBytes,
  kEnum,
  kMessage,
  kGroup,  // skipped
};

// Messages with a column type of their own (see above).
enum class WellKnown : uint8_t {
  kNone,
  kTimestamp,
  kWrapper,
  kStruct,
  kValue,
  kListValue,
  kAny,
};

struct FieldDef {
  std::string name;
  int32_t number = 0;
  Kind kind = Kind::kInt32;
  bool repeated = false;
  int32_t type = -1;   // kMessage: index into MessageSchema::messages; kEnum: into enums
  int32_t oneof = -1;  // index of its oneof in the message (proto3 optional included), or -1
};

struct MessageDef {
  std::string full_name;
  std::vector<FieldDef> fields;  // declaration order
  bool map_entry = false;        // fields[0] the key (1), fields[1] the value (2)
  WellKnown well_known = WellKnown::kNone;
};

struct EnumDef {
  std::string full_name;
  std::vector<std::pair<int32_t, std::string>> values;  // by number; the first name of each
};

// One message and every message and enum it refers to; messages[0] is the message itself.
struct MessageSchema {
  std::vector<MessageDef> messages;
  std::vector<EnumDef> enums;

  const MessageDef& root() const { return messages.front(); }
  // Copies `message` and what it refers to.
  static std::shared_ptr<const MessageSchema> FromDescriptor(
      const google::protobuf::Descriptor& message);
};

// A set of .proto files in one descriptor pool, and the file message indexes refer to.
class ProtoSchema {
 public:
  // A serialized FileDescriptorSet, its files in dependency order (as protoc writes them).
  // `origin` names it in errors. InvalidArgument: not a descriptor set, or a file that does not
  // build (an unknown type, a missing import).
  static Result<std::shared_ptr<const ProtoSchema>> FromDescriptorSet(std::string_view bytes,
                                                                      std::string_view origin);
  // .proto texts: (name, text) pairs, the imports (the registry's references) before the file
  // that imports them, the main file last. Imports of google/protobuf/*.proto not given are
  // taken from libprotobuf's own copies. InvalidArgument with the file, line and column of a
  // syntax error, or naming what does not build.
  static Result<std::shared_ptr<const ProtoSchema>> FromProtoFiles(
      const std::vector<std::pair<std::string, std::string>>& files);
  ~ProtoSchema();

  // By full name ("shop.Order", a leading dot allowed). InvalidArgument when there is none.
  Result<std::shared_ptr<const MessageSchema>> Message(std::string_view full_name) const;
  // By the Confluent message indexes into the main file ([0] its first message; [1, 0] the first
  // message nested in the second). InvalidArgument when out of range.
  Result<std::shared_ptr<const MessageSchema>> MessageAt(const std::vector<int32_t>& indexes) const;
  // The full name of the main file's first message (the record name of the subject strategies).
  std::string FirstMessageName() const;
  // The descriptors (tests serialize messages with them; decoding never does).
  const google::protobuf::DescriptorPool& pool() const { return *pool_; }

 private:
  ProtoSchema();

  std::unique_ptr<google::protobuf::DescriptorPool> pool_;
  const google::protobuf::FileDescriptor* main_ = nullptr;
};

struct ColumnType {
  columnar::DataTypePtr type;
  bool nullable = true;
};

// The column type of field `field` of message `message` of `schema` (see above); `path` names it
// in errors.
Result<ColumnType> FieldColumnType(const MessageSchema& schema, const FieldDef& field,
                                   std::string_view path);
// The root message's fields as a table schema (groups left out).
Result<columnar::SchemaPtr> ToTableSchema(const MessageSchema& schema);
// The root message as one STRUCT (a Kafka key column).
Result<columnar::DataTypePtr> ToStructType(const MessageSchema& schema);

}  // namespace ferry::transform::protobuf
