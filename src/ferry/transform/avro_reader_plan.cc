#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "ferry/transform/avro_reader.h"
#include "ferry/transform/avro_reader_internal.h"

// AvroRowReader's planning half (avro_reader.h, "Resolution"): the ops a writer schema is read
// with, made once per writer schema. The decoding half is avro_reader.cc.
namespace ferry::transform::avro {

using columnar::DataType;
using columnar::TypeId;

namespace {

Status Mismatch(const Node& w, const DataType& col, const std::string& path) {
  return InvalidArgument("Avro: field '{}': the writer's {}{} cannot be read into {}", path,
                         AvroTypeName(w.type), w.named() ? fmt::format(" \"{}\"", w.name) : "",
                         col.ToString());
}

// The writer fields `op` (reading a value at `path`) skips, into `out`; a path seen already (a
// union's branches share their column) is not listed twice.
void CollectAvroUnmatched(const ReadOp& op, std::vector<std::string>* path,
                          std::vector<UnmatchedField>* out) {
  auto enter = [&](const ReadOp& child, std::string segment) {
    path->push_back(std::move(segment));
    CollectAvroUnmatched(child, path, out);
    path->pop_back();
  };
  switch (op.conv) {
    case Conv::kRecord:
      for (size_t i = 0; i < op.children.size(); ++i) {
        const FieldDef& f = op.writer->fields[i];
        if (op.children[i] != nullptr) {
          enter(*op.children[i], f.name);
          continue;
        }
        path->push_back(f.name);
        bool seen = std::any_of(out->begin(), out->end(),
                                [&](const UnmatchedField& u) { return u.path == *path; });
        if (!seen) {
          out->push_back({.path = *path, .type = f.type});
        }
        path->pop_back();
      }
      return;
    case Conv::kArray:
      enter(*op.children.front(), "element");
      return;
    case Conv::kMap:
      enter(*op.children.front(), "value");
      return;
    case Conv::kUnion: {
      int member = 0;
      for (size_t i = 0; i < op.children.size(); ++i) {
        if (op.members && op.writer->branches[i]->type != AvroType::kNull) {
          enter(*op.children[i], fmt::format("member{}", member++));
        } else {
          CollectAvroUnmatched(*op.children[i], path, out);
        }
      }
      return;
    }
    default:
      return;
  }
}

// Debezium's io.debezium.data.VariableScaleDecimal as Connect's AvroConverter writes it: a
// record {scale: int, value: bytes}.
bool IsVariableScaleDecimal(const Node& w) {
  constexpr std::string_view kName = "io.debezium.data.VariableScaleDecimal";
  return (w.name == kName || w.connect_name == kName) && w.fields.size() == 2 &&
         w.fields[0].name == "scale" && w.fields[0].type->type == AvroType::kInt &&
         w.fields[1].name == "value" && w.fields[1].type->type == AvroType::kBytes;
}

}  // namespace

Status PlanRecordFields(const Node& w, const std::vector<columnar::Field>& fields,
                        const std::string& path, int depth, ReadOp* op) {
  std::vector<bool> filled(fields.size(), false);
  for (const FieldDef& f : w.fields) {
    int index = FindField(fields, f.name);
    if (index < 0 || filled[static_cast<size_t>(index)]) {
      op->children.push_back(nullptr);
      op->child_index.push_back(-1);
      continue;
    }
    filled[static_cast<size_t>(index)] = true;
    const columnar::Field& target = fields[static_cast<size_t>(index)];
    FERRY_ASSIGN_OR_RETURN(auto child, Plan(*f.type, *target.type, target.nullable,
                                            JoinPath(path, f.name), depth + 1));
    op->children.push_back(std::move(child));
    op->child_index.push_back(index);
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (filled[i]) {
      continue;
    }
    if (!fields[i].nullable) {
      return InvalidArgument(
          "Avro: field '{}': the column is NOT NULL and the writer's record \"{}\" has no such "
          "field",
          JoinPath(path, fields[i].name), w.name);
    }
    op->unfilled.push_back(static_cast<int>(i));
  }
  return Status::OK();
}

Result<std::unique_ptr<ReadOp>> Plan(const Node& w, const DataType& col, bool nullable,
                                     const std::string& path, int depth) {
  if (depth > Schema::kMaxDepth) {
    return InvalidArgument("Avro: field '{}': nested deeper than {} levels", path,
                           Schema::kMaxDepth);
  }
  auto op = std::make_unique<ReadOp>();
  op->writer = &w;
  op->path = path;
  op->nullable = nullable;
  const TypeId c = col.id();
  auto conv = [&](Conv k) -> Result<std::unique_ptr<ReadOp>> {
    op->conv = k;
    return std::move(op);
  };
  switch (w.type) {
    case AvroType::kNull:
      return conv(Conv::kNull);
    case AvroType::kBoolean:
      if (c == TypeId::kBoolean)
        return conv(Conv::kBool);
      break;
    case AvroType::kInt:
      if (c == TypeId::kDate &&
          (w.logical == LogicalType::kDate || w.connect_name == "io.debezium.time.Date"))
        return conv(Conv::kIntToDate);
      if (w.logical == LogicalType::kDate)
        break;
      if (c == TypeId::kInt32)
        return conv(Conv::kIntToInt32);
      if (c == TypeId::kInt64)
        return conv(Conv::kIntToInt64);
      if (c == TypeId::kFloat32)
        return conv(Conv::kIntToFloat32);
      if (c == TypeId::kFloat64)
        return conv(Conv::kIntToFloat64);
      break;
    case AvroType::kLong:
      if (c == TypeId::kTimestamp && col.unit() == columnar::TimeUnit::kMicros) {
        // Debezium's epoch counts (Connect names, no Avro logical type): local date-times, read
        // into TIMESTAMP or TIMESTAMP_NTZ as debezium-json reads them.
        if (w.logical == LogicalType::kNone) {
          if (w.connect_name == "io.debezium.time.Timestamp")
            return conv(Conv::kMillisToMicros);
          if (w.connect_name == "io.debezium.time.MicroTimestamp")
            return conv(Conv::kLongToInt64);
          if (w.connect_name == "io.debezium.time.NanoTimestamp")
            return conv(Conv::kNanosToMicros);
        }
        bool utc = w.logical == LogicalType::kTimestampMillis ||
                   w.logical == LogicalType::kTimestampMicros;
        bool local = w.logical == LogicalType::kLocalTimestampMillis ||
                     w.logical == LogicalType::kLocalTimestampMicros;
        if ((utc && col.utc_adjusted()) || (local && !col.utc_adjusted())) {
          bool millis = w.logical == LogicalType::kTimestampMillis ||
                        w.logical == LogicalType::kLocalTimestampMillis;
          return conv(millis ? Conv::kMillisToMicros : Conv::kLongToInt64);
        }
        break;
      }
      if (w.logical != LogicalType::kNone && w.logical != LogicalType::kTimeMicros)
        break;
      if (c == TypeId::kInt64)
        return conv(Conv::kLongToInt64);
      if (c == TypeId::kFloat32)
        return conv(Conv::kLongToFloat32);
      if (c == TypeId::kFloat64)
        return conv(Conv::kLongToFloat64);
      break;
    case AvroType::kFloat:
      if (c == TypeId::kFloat32)
        return conv(Conv::kFloatToFloat32);
      if (c == TypeId::kFloat64)
        return conv(Conv::kFloatToFloat64);
      break;
    case AvroType::kDouble:
      if (c == TypeId::kFloat64)
        return conv(Conv::kDoubleToFloat64);
      break;
    case AvroType::kString:
    case AvroType::kBytes:
      if (w.logical == LogicalType::kDecimal) {
        // Connect's Decimal without connect.decimal.precision says precision 64 (AvroData's
        // default): its values are checked one by one against the column's precision.
        bool connect = w.connect_name == "org.apache.kafka.connect.data.Decimal";
        if (c == TypeId::kDecimal && col.scale() == w.scale &&
            (col.precision() >= w.precision || connect)) {
          op->precision = col.precision();
          return conv(Conv::kDecimalBytes);
        }
        break;
      }
      if (c == TypeId::kString)
        return conv(Conv::kTextToString);
      if (c == TypeId::kBinary)
        return conv(Conv::kTextToBinary);
      break;
    case AvroType::kEnum:
      if (c == TypeId::kString)
        return conv(Conv::kEnumToString);
      break;
    case AvroType::kFixed:
      if (w.logical == LogicalType::kDecimal) {
        if (c == TypeId::kDecimal && col.scale() == w.scale && col.precision() >= w.precision) {
          op->precision = col.precision();
          return conv(Conv::kDecimalFixed);
        }
        break;
      }
      if (c == TypeId::kBinary)
        return conv(Conv::kFixedToBinary);
      break;
    case AvroType::kRecord:
      if (c == TypeId::kDecimal && IsVariableScaleDecimal(w)) {
        op->precision = col.precision();
        op->scale = col.scale();
        return conv(Conv::kVariableDecimal);
      }
      if (c != TypeId::kStruct)
        break;
      op->conv = Conv::kRecord;
      FERRY_RETURN_IF_ERROR(PlanRecordFields(w, col.fields(), path, depth, op.get()));
      return op;
    case AvroType::kArray: {
      if (c != TypeId::kList)
        break;
      op->conv = Conv::kArray;
      FERRY_ASSIGN_OR_RETURN(auto element, Plan(*w.items, *col.element().type,
                                                col.element().nullable, path + "[]", depth + 1));
      op->children.push_back(std::move(element));
      return op;
    }
    case AvroType::kMap: {
      if (c != TypeId::kMap || col.key().type->id() != TypeId::kString)
        break;
      op->conv = Conv::kMap;
      FERRY_ASSIGN_OR_RETURN(auto value, Plan(*w.values, *col.value().type, col.value().nullable,
                                              path + "{}", depth + 1));
      op->children.push_back(std::move(value));
      return op;
    }
    case AvroType::kUnion: {
      op->conv = Conv::kUnion;
      op->members = ShapeOfUnion(w) == UnionShape::kMembers && c == TypeId::kStruct;
      int member = 0;
      for (size_t i = 0; i < w.branches.size(); ++i) {
        const Node& b = *w.branches[i];
        if (op->members && b.type != AvroType::kNull) {
          std::string name = fmt::format("member{}", member);
          int index = FindField(col.fields(), name);
          ++member;
          if (index < 0) {
            return InvalidArgument(
                "Avro: field '{}': the column {} has no field {} for the "
                "union's branch {}",
                path, col.ToString(), name, i);
          }
          const columnar::Field& f = col.fields()[static_cast<size_t>(index)];
          FERRY_ASSIGN_OR_RETURN(auto child,
                                 Plan(b, *f.type, f.nullable, JoinPath(path, name), depth + 1));
          op->children.push_back(std::move(child));
          op->member_of_branch.push_back(index);
          continue;
        }
        FERRY_ASSIGN_OR_RETURN(auto child, Plan(b, col, nullable, path, depth + 1));
        op->children.push_back(std::move(child));
        op->member_of_branch.push_back(-1);
      }
      if (op->members) {
        for (size_t j = 0; j < col.fields().size(); ++j) {
          bool used = false;
          for (int m : op->member_of_branch) {
            used = used || m == static_cast<int>(j);
          }
          if (!used) {
            op->unfilled.push_back(static_cast<int>(j));
          }
        }
      }
      return op;
    }
  }
  return Mismatch(w, col, path);
}

Result<std::unique_ptr<AvroRowReader>> AvroRowReader::Create(std::shared_ptr<const Schema> writer,
                                                             const columnar::Schema& batch_schema,
                                                             std::vector<int> columns) {
  const Node& root = writer->root();
  return CreateForRecord(std::move(writer), root, batch_schema, std::move(columns));
}

Result<std::unique_ptr<AvroRowReader>> AvroRowReader::CreateForRecord(
    std::shared_ptr<const Schema> writer, const Node& root, const columnar::Schema& batch_schema,
    std::vector<int> columns) {
  if (root.type != AvroType::kRecord) {
    return InvalidArgument("Avro: the writer schema's top level is {}, not a record",
                           AvroTypeName(root.type));
  }
  std::vector<columnar::Field> fields;
  for (int c : columns) {
    fields.push_back(batch_schema.fields()[static_cast<size_t>(c)]);
  }
  ReadOp top;
  top.conv = Conv::kRecord;
  top.writer = &root;
  FERRY_RETURN_IF_ERROR(PlanRecordFields(root, fields, "", 0, &top));
  std::unique_ptr<AvroRowReader> reader(new AvroRowReader());
  reader->writer_ = std::move(writer);
  reader->root_ = &root;
  std::vector<std::string> path;
  CollectAvroUnmatched(top, &path, &reader->unmatched_);
  for (size_t i = 0; i < root.fields.size(); ++i) {
    int index = top.child_index[i];
    reader->column_of_field_.push_back(index < 0 ? -1 : columns[static_cast<size_t>(index)]);
    reader->field_ops_.push_back(std::move(top.children[i]));
  }
  for (int u : top.unfilled) {
    reader->unfilled_columns_.push_back(columns[static_cast<size_t>(u)]);
  }
  reader->columns_ = std::move(columns);
  return reader;
}

Result<std::unique_ptr<AvroRowReader>> AvroRowReader::CreateForColumn(
    std::shared_ptr<const Schema> writer, const columnar::Schema& batch_schema, int column) {
  const columnar::Field& target = batch_schema.fields()[static_cast<size_t>(column)];
  FERRY_ASSIGN_OR_RETURN(auto op,
                         Plan(writer->root(), *target.type, target.nullable, target.name, 1));
  std::unique_ptr<AvroRowReader> reader(new AvroRowReader());
  reader->root_ = &writer->root();
  reader->writer_ = std::move(writer);
  reader->columns_ = {column};
  reader->field_ops_.push_back(std::move(op));
  reader->column_of_field_.push_back(column);  // Append's loop then reads the one value
  return reader;
}

}  // namespace ferry::transform::avro
