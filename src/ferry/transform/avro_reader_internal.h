// The plan an AvroRowReader (avro_reader.h) walks: one ReadOp per writer value, made once per
// writer schema by Plan (avro_reader_plan.cc, the resolution rules) and walked per datum by
// Decode (avro_reader.cc). Internal to the reader.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/avro_schema.h"
#include "ferry/transform/field_path.h"

namespace ferry::transform::avro {

// How a writer value becomes a column value.
enum class Conv : uint8_t {
  kNull,  // the writer's null: a null row
  kBool,
  kIntToInt32,
  kIntToInt64,
  kIntToFloat32,
  kIntToFloat64,
  kIntToDate,
  kLongToInt64,
  kLongToFloat32,
  kLongToFloat64,
  kMillisToMicros,
  kFloatToFloat32,
  kFloatToFloat64,
  kDoubleToFloat64,
  kTextToString,  // string or bytes, UTF-8 checked
  kTextToBinary,  // string or bytes
  kEnumToString,
  kFixedToBinary,
  kDecimalBytes,
  kDecimalFixed,
  kNanosToMicros,    // io.debezium.time.NanoTimestamp into TIMESTAMP (floor)
  kVariableDecimal,  // io.debezium.data.VariableScaleDecimal {scale, value} into DECIMAL
  kRecord,
  kArray,
  kMap,
  kUnion,
};

struct ReadOp {
  Conv conv = Conv::kNull;
  const Node* writer = nullptr;
  std::string path;
  bool nullable = true;   // the column takes nulls
  int32_t precision = 0;  // kDecimal*, kVariableDecimal: the column's
  int32_t scale = 0;      // kVariableDecimal: the column's
  // kRecord: one op per writer field (null: skipped) and the struct child it fills; the struct
  // children no writer field fills get null. kArray: children[0] the element. kMap: children[0]
  // the value. kUnion: one op per writer branch.
  std::vector<std::unique_ptr<ReadOp>> children;
  std::vector<int> child_index;
  std::vector<int> unfilled;
  // kUnion into the STRUCT of member<i>: the member each branch fills (-1: the null branch).
  bool members = false;
  std::vector<int> member_of_branch;
};

// The op reading writer type `w` into a column of type `col` (`path` names it in errors).
// InvalidArgument when the writer's type cannot be read into it.
Result<std::unique_ptr<ReadOp>> Plan(const Node& w, const columnar::DataType& col, bool nullable,
                                     const std::string& path, int depth);
// The fields of record `w` into `fields` (by name, exact then ignoring case): op->children,
// child_index and unfilled.
Status PlanRecordFields(const Node& w, const std::vector<columnar::Field>& fields,
                        const std::string& path, int depth, ReadOp* op);

}  // namespace ferry::transform::avro
