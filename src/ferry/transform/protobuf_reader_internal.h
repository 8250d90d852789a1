// The plan a ProtobufRowReader (protobuf_reader.h) walks: one MsgOp per message type read into a
// column, one FieldOp per writer field that has a column, made once per writer type by
// PlanMessage (protobuf_reader_plan.cc) and walked per message by protobuf_reader.cc. Internal
// to the reader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/protobuf_reader.h"
#include "ferry/transform/protobuf_schema.h"

namespace ferry::transform::protobuf {

// Wire types (protobuf.dev "Encoding").
enum Wire : uint8_t { kVarint = 0, kI64 = 1, kLen = 2, kSGroup = 3, kEGroup = 4, kI32 = 5 };

// How a writer value becomes a column value.
enum class Store : uint8_t {
  kInt32,
  kInt64,
  kDecimal,
  kFloat32,
  kFloat64,
  kBool,
  kEnumString,
  kString,  // string or bytes, UTF-8 checked
  kBinary,
  kTimestamp,
  kJson,     // Struct, Value, ListValue, Any
  kMessage,  // STRUCT: `message` fills its children
  kWrapper,  // `message` fills this same column from its field 1
  kMap,      // `message` (the entry) fills the keys (column 0) and the values (column 1)
  // ConnectTypes (protobuf_reader.h):
  kDays,            // an integer: days since 1970-01-01 into DATE
  kEpoch,           // an integer: an epoch number in micros_per_unit into TIMESTAMP
  kDecimalMessage,  // `message` (a bytes `value` and an integer `scale`) into DECIMAL
};

struct MsgOp;

struct FieldOp {
  int32_t slot = 0;  // the writer field's index in its message
  Kind kind = Kind::kInt32;
  Store store = Store::kInt32;
  bool repeated = false;  // an ARRAY (a map is Store::kMap)
  bool nullable = true;
  bool default_when_absent = false;  // a map key: its type's default
  int column = 0;                    // the child (or batch column) it fills
  WellKnown json = WellKnown::kNone;
  std::string path;
  const EnumDef* enum_def = nullptr;
  std::unique_ptr<MsgOp> message;
  int64_t micros_per_unit = 1;  // kEpoch
  int32_t precision = 0;        // kDecimalMessage: the column's
  int32_t scale = 0;
  int32_t value_number = 0;  // kDecimalMessage: the message's field numbers
  int32_t scale_number = 0;
};

struct MsgOp {
  const MessageDef* def = nullptr;
  std::vector<FieldOp> fields;  // writer order
  std::vector<int> unfilled;    // columns no writer field fills: null
  // Field number -> slot + 1 (0: unknown) for numbers below dense.size(); sparse for the rest.
  std::vector<int32_t> dense;
  std::vector<std::pair<int32_t, int32_t>> sparse;  // (number, slot), by number
  std::vector<uint8_t> wire;                        // per slot: its wire type
  std::vector<uint8_t> packable;                    // per slot: repeated numeric
  std::vector<int32_t> oneof;                       // per slot: its oneof or -1
  int32_t num_oneofs = 0;

  int32_t SlotOf(int32_t number) const;
};

// The op reading message `message` of `schema` into the STRUCT fields `fields` (or the batch
// columns, `columns` then naming their indices; empty: 0..n-1), with Connect's types read as
// `connect` says. InvalidArgument when a field cannot be read into its column.
Result<std::unique_ptr<MsgOp>> PlanMessage(const MessageSchema& schema, int32_t message,
                                           const std::vector<columnar::Field>& fields,
                                           const std::vector<int>& columns, const std::string& path,
                                           int depth, const ConnectTypes& connect);
// The writer fields `op` (reading a message at `path`) and the messages inside it skip, in
// writer order, into `out`.
void CollectUnmatched(const MsgOp& op, std::vector<std::string>* path,
                      std::vector<UnmatchedField>* out);

// Appends the JSON text of a Struct, Value, ListValue or Any message (protobuf's JSON mapping;
// an Any as {"@type": url, "value": base64 of its bytes}) to `out`. InvalidArgument for bytes
// that are not such a message.
Status AppendWellKnownJson(WellKnown type, std::string_view bytes, std::string* out, int depth);

}  // namespace ferry::transform::protobuf
