#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "ferry/transform/field_path.h"
#include "ferry/transform/protobuf_reader.h"
#include "ferry/transform/protobuf_reader_internal.h"

// ProtobufRowReader's planning half (protobuf_reader.h, "Resolution"): the ops a writer message
// type is read with, made once per writer type. The decoding half is protobuf_reader.cc.
namespace ferry::transform::protobuf {

using columnar::DataType;
using columnar::TypeId;

namespace {

constexpr int kMaxPlanDepth = 64;
constexpr int32_t kDenseNumbers = 1024;

const char* KindName(Kind k) {
  static constexpr const char* kNames[] = {"double",   "float",    "int32",  "int64",   "uint32",
                                           "uint64",   "sint32",   "sint64", "fixed32", "fixed64",
                                           "sfixed32", "sfixed64", "bool",   "string",  "bytes",
                                           "enum",     "message",  "group"};
  return kNames[static_cast<size_t>(k)];
}

uint8_t WireOf(Kind k) {
  switch (k) {
    case Kind::kDouble:
    case Kind::kFixed64:
    case Kind::kSFixed64:
      return kI64;
    case Kind::kFloat:
    case Kind::kFixed32:
    case Kind::kSFixed32:
      return kI32;
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kMessage:
      return kLen;
    case Kind::kGroup:
      return kSGroup;
    default:
      return kVarint;
  }
}

bool IsInteger(Kind k) {
  return k == Kind::kInt32 || k == Kind::kInt64 || k == Kind::kUInt32 || k == Kind::kUInt64 ||
         k == Kind::kSInt32 || k == Kind::kSInt64 || k == Kind::kFixed32 || k == Kind::kFixed64 ||
         k == Kind::kSFixed32 || k == Kind::kSFixed64;
}

// The numbers of a decimal message's bytes `value` and integer `scale` fields (see
// protobuf_reader.h, "Connect's types"); false when it is not one.
bool DecimalMessage(const MessageDef& m, FieldOp* fo) {
  fo->value_number = 0;
  fo->scale_number = 0;
  for (const FieldDef& f : m.fields) {
    if (f.repeated) {
      continue;
    }
    if (f.name == "value" && f.kind == Kind::kBytes) {
      fo->value_number = f.number;
    } else if (f.name == "scale" &&
               (f.kind == Kind::kInt32 || f.kind == Kind::kSInt32 || f.kind == Kind::kUInt32)) {
      fo->scale_number = f.number;
    }
  }
  return fo->value_number != 0 && fo->scale_number != 0;
}

Status PlanElement(const MessageSchema& schema, const FieldDef& f, const DataType& col, int depth,
                   const ConnectTypes& connect, FieldOp* fo) {
  const TypeId c = col.id();
  auto store = [&](Store s) {
    fo->store = s;
    return Status::OK();
  };
  const bool int32ish =
      f.kind == Kind::kInt32 || f.kind == Kind::kSInt32 || f.kind == Kind::kSFixed32;
  const bool uint64ish = f.kind == Kind::kUInt64 || f.kind == Kind::kFixed64;
  if (IsInteger(f.kind)) {
    if (c == TypeId::kInt32 && int32ish) {
      return store(Store::kInt32);
    }
    if (c == TypeId::kInt64 && !uint64ish) {
      return store(Store::kInt64);
    }
    if (c == TypeId::kDecimal && col.scale() == 0 && col.precision() >= 20) {
      return store(Store::kDecimal);
    }
    if (connect.enabled && !uint64ish && c == TypeId::kDate) {
      return store(Store::kDays);
    }
    if (connect.enabled && !uint64ish && c == TypeId::kTimestamp &&
        col.unit() == columnar::TimeUnit::kMicros) {
      fo->micros_per_unit = connect.epoch_micros_per_unit;
      return store(Store::kEpoch);
    }
  }
  switch (f.kind) {
    case Kind::kFloat:
      if (c == TypeId::kFloat32) {
        return store(Store::kFloat32);
      }
      if (c == TypeId::kFloat64) {
        return store(Store::kFloat64);
      }
      break;
    case Kind::kDouble:
      if (c == TypeId::kFloat64) {
        return store(Store::kFloat64);
      }
      break;
    case Kind::kBool:
      if (c == TypeId::kBoolean) {
        return store(Store::kBool);
      }
      break;
    case Kind::kString:
    case Kind::kBytes:
      if (c == TypeId::kString) {
        return store(Store::kString);
      }
      if (c == TypeId::kBinary) {
        return store(Store::kBinary);
      }
      break;
    case Kind::kEnum:
      if (c == TypeId::kString) {
        fo->enum_def = &schema.enums[static_cast<size_t>(f.type)];
        return store(Store::kEnumString);
      }
      break;
    case Kind::kMessage: {
      const MessageDef& m = schema.messages[static_cast<size_t>(f.type)];
      switch (m.well_known) {
        case WellKnown::kTimestamp:
          if (c == TypeId::kTimestamp && col.unit() == columnar::TimeUnit::kMicros) {
            FERRY_ASSIGN_OR_RETURN(
                fo->message, PlanMessage(schema, f.type, {}, {}, fo->path, depth + 1, connect));
            return store(Store::kTimestamp);
          }
          break;
        case WellKnown::kWrapper: {
          std::vector<columnar::Field> value = {
              {.name = "value", .type = std::make_shared<DataType>(col), .nullable = true}};
          FERRY_ASSIGN_OR_RETURN(
              fo->message, PlanMessage(schema, f.type, value, {}, fo->path, depth + 1, connect));
          if (fo->message->fields.size() != 1) {
            break;
          }
          fo->message->fields[0].default_when_absent = true;
          fo->message->fields[0].path = fo->path;
          return store(Store::kWrapper);
        }
        case WellKnown::kStruct:
        case WellKnown::kValue:
        case WellKnown::kListValue:
        case WellKnown::kAny:
          if (c == TypeId::kString) {
            fo->json = m.well_known;
            return store(Store::kJson);
          }
          break;
        case WellKnown::kNone:
          if (c == TypeId::kStruct && !m.map_entry) {
            FERRY_ASSIGN_OR_RETURN(fo->message, PlanMessage(schema, f.type, col.fields(), {},
                                                            fo->path, depth + 1, connect));
            return store(Store::kMessage);
          }
          if (c == TypeId::kDecimal && connect.enabled && DecimalMessage(m, fo)) {
            FERRY_ASSIGN_OR_RETURN(
                fo->message, PlanMessage(schema, f.type, {}, {}, fo->path, depth + 1, connect));
            fo->precision = col.precision();
            fo->scale = col.scale();
            return store(Store::kDecimalMessage);
          }
          break;
      }
      return InvalidArgument(
          "Protobuf: field '{}': the writer's message \"{}\" cannot be read into {}", fo->path,
          m.full_name, col.ToString());
    }
    default:
      break;
  }
  return InvalidArgument("Protobuf: field '{}': the writer's {} cannot be read into {}", fo->path,
                         KindName(f.kind), col.ToString());
}

Status PlanField(const MessageSchema& schema, const FieldDef& f, const DataType& col, int depth,
                 const ConnectTypes& connect, FieldOp* fo) {
  if (f.kind == Kind::kMessage && schema.messages[static_cast<size_t>(f.type)].map_entry) {
    if (col.id() != TypeId::kMap) {
      return InvalidArgument("Protobuf: field '{}': the writer's map cannot be read into {}",
                             fo->path, col.ToString());
    }
    FERRY_ASSIGN_OR_RETURN(
        fo->message, PlanMessage(schema, f.type, col.fields(), {}, fo->path, depth + 1, connect));
    if (fo->message->fields.size() != 2) {
      return InvalidArgument("Protobuf: field '{}': a map entry without a key or value", fo->path);
    }
    fo->message->fields[0].default_when_absent = true;
    fo->store = Store::kMap;
    return Status::OK();
  }
  if (f.repeated) {
    if (col.id() != TypeId::kList) {
      return InvalidArgument(
          "Protobuf: field '{}': the writer's repeated {} cannot be read into {}", fo->path,
          KindName(f.kind), col.ToString());
    }
    fo->repeated = true;
    return PlanElement(schema, f, *col.element().type, depth, connect, fo);
  }
  return PlanElement(schema, f, col, depth, connect, fo);
}

}  // namespace

int32_t MsgOp::SlotOf(int32_t number) const {
  if (number < static_cast<int32_t>(dense.size())) {
    return dense[static_cast<size_t>(number)] - 1;
  }
  auto it = std::lower_bound(sparse.begin(), sparse.end(), std::make_pair(number, int32_t{-1}));
  return it != sparse.end() && it->first == number ? it->second : -1;
}

Result<std::unique_ptr<MsgOp>> PlanMessage(const MessageSchema& schema, int32_t message,
                                           const std::vector<columnar::Field>& fields,
                                           const std::vector<int>& columns, const std::string& path,
                                           int depth, const ConnectTypes& connect) {
  if (depth > kMaxPlanDepth) {
    return InvalidArgument("Protobuf: field '{}': nested deeper than {} levels", path,
                           kMaxPlanDepth);
  }
  const MessageDef& m = schema.messages[static_cast<size_t>(message)];
  auto op = std::make_unique<MsgOp>();
  op->def = &m;
  for (size_t i = 0; i < m.fields.size(); ++i) {
    const FieldDef& f = m.fields[i];
    const auto slot = static_cast<int32_t>(i);
    if (f.number < kDenseNumbers) {
      if (op->dense.size() <= static_cast<size_t>(f.number)) {
        op->dense.resize(static_cast<size_t>(f.number) + 1, 0);
      }
      op->dense[static_cast<size_t>(f.number)] = slot + 1;
    } else {
      op->sparse.emplace_back(f.number, slot);
    }
    op->wire.push_back(WireOf(f.kind));
    op->packable.push_back(f.repeated && WireOf(f.kind) != kLen && f.kind != Kind::kGroup ? 1 : 0);
    op->oneof.push_back(f.oneof);
    op->num_oneofs = std::max(op->num_oneofs, f.oneof + 1);
  }
  std::sort(op->sparse.begin(), op->sparse.end());
  std::vector<bool> filled(fields.size(), false);
  for (size_t i = 0; i < m.fields.size(); ++i) {
    const FieldDef& f = m.fields[i];
    if (f.kind == Kind::kGroup) {
      continue;
    }
    int index = FindField(fields, f.name);
    if (index < 0 || filled[static_cast<size_t>(index)]) {
      continue;  // skipped (CollectUnmatched lists it)
    }
    filled[static_cast<size_t>(index)] = true;
    const columnar::Field& target = fields[static_cast<size_t>(index)];
    FieldOp fo;
    fo.slot = static_cast<int32_t>(i);
    fo.kind = f.kind;
    fo.nullable = target.nullable;
    fo.column = columns.empty() ? index : columns[static_cast<size_t>(index)];
    fo.path = JoinPath(path, f.name);
    FERRY_RETURN_IF_ERROR(PlanField(schema, f, *target.type, depth, connect, &fo));
    // A NOT NULL column (a required Connect field) of a proto3 scalar without presence: absent
    // is the type's default, as proto3 writes a zero.
    if (connect.enabled && !target.nullable && f.oneof < 0 && !f.repeated &&
        f.kind != Kind::kMessage) {
      fo.default_when_absent = true;
    }
    op->fields.push_back(std::move(fo));
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (filled[i]) {
      continue;
    }
    if (!fields[i].nullable) {
      return InvalidArgument(
          "Protobuf: field '{}': the column is NOT NULL and the writer's message \"{}\" has no "
          "such field",
          JoinPath(path, fields[i].name), m.full_name);
    }
    op->unfilled.push_back(columns.empty() ? static_cast<int>(i) : columns[i]);
  }
  return op;
}

void CollectUnmatched(const MsgOp& op, std::vector<std::string>* path,
                      std::vector<UnmatchedField>* out) {
  std::vector<const FieldOp*> op_of_slot(op.def->fields.size(), nullptr);
  for (const FieldOp& fo : op.fields) {
    op_of_slot[static_cast<size_t>(fo.slot)] = &fo;
  }
  for (size_t i = 0; i < op.def->fields.size(); ++i) {
    const FieldDef& f = op.def->fields[i];
    if (f.kind == Kind::kGroup) {
      continue;  // never a column
    }
    const FieldOp* fo = op_of_slot[i];
    path->push_back(f.name);
    if (fo == nullptr) {
      out->push_back({.path = *path, .field = &f});
    } else if (fo->store == Store::kMessage || fo->store == Store::kMap) {
      // A map's entry message names the segments "key" and "value" itself.
      if (fo->repeated) {
        path->push_back("element");
      }
      CollectUnmatched(*fo->message, path, out);
      if (fo->repeated) {
        path->pop_back();
      }
    }
    path->pop_back();
  }
}

}  // namespace ferry::transform::protobuf
