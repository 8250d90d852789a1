#include "ferry/parquet/thrift_compact.h"

#include <bit>
#include <cstring>

#include "ferry/base/varint.h"

namespace ferry::parquet::thrift {

// ---------------------------------------------------------------------------------------------
// CompactWriter

void CompactWriter::StructBegin() {
  field_id_stack_.push_back(last_field_id_);
  last_field_id_ = 0;
}

void CompactWriter::StructEnd() {
  out_->push_back(static_cast<char>(CType::kStop));
  last_field_id_ = field_id_stack_.back();
  field_id_stack_.pop_back();
}

void CompactWriter::FieldBegin(CType type, int16_t id) {
  int delta = id - last_field_id_;
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_->push_back(static_cast<char>(type));
    WriteI16(id);
  }
  last_field_id_ = id;
}

void CompactWriter::FieldBool(int16_t id, bool v) {
  FieldBegin(v ? CType::kBoolTrue : CType::kBoolFalse, id);
}

void CompactWriter::FieldI8(int16_t id, int8_t v) {
  FieldBegin(CType::kI8, id);
  WriteI8(v);
}

void CompactWriter::FieldI16(int16_t id, int16_t v) {
  FieldBegin(CType::kI16, id);
  WriteI16(v);
}

void CompactWriter::FieldI32(int16_t id, int32_t v) {
  FieldBegin(CType::kI32, id);
  WriteI32(v);
}

void CompactWriter::FieldI64(int16_t id, int64_t v) {
  FieldBegin(CType::kI64, id);
  WriteI64(v);
}

void CompactWriter::FieldDouble(int16_t id, double v) {
  FieldBegin(CType::kDouble, id);
  WriteDouble(v);
}

void CompactWriter::FieldBinary(int16_t id, std::string_view v) {
  FieldBegin(CType::kBinary, id);
  WriteBinary(v);
}

void CompactWriter::FieldListBegin(int16_t id, CType element_type, int32_t size) {
  FieldBegin(CType::kList, id);
  ListBegin(element_type, size);
}

void CompactWriter::FieldStructBegin(int16_t id) {
  FieldBegin(CType::kStruct, id);
  StructBegin();
}

void CompactWriter::FieldEmptyStruct(int16_t id) {
  FieldStructBegin(id);
  StructEnd();
}

void CompactWriter::ListBegin(CType element_type, int32_t size) {
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | static_cast<int>(element_type)));
  } else {
    out_->push_back(static_cast<char>(0xF0 | static_cast<int>(element_type)));
    AppendVarint(out_, static_cast<uint64_t>(size));
  }
}

// The spec encodes bool elements as 1 (true) and 0 (false); readers test for 1.
void CompactWriter::WriteBool(bool v) {
  out_->push_back(v ? 1 : 0);
}

void CompactWriter::WriteI8(int8_t v) {
  out_->push_back(static_cast<char>(v));
}

void CompactWriter::WriteI16(int16_t v) {
  AppendVarint(out_, ZigZagEncode(v));
}

void CompactWriter::WriteI32(int32_t v) {
  AppendVarint(out_, ZigZagEncode(v));
}

void CompactWriter::WriteI64(int64_t v) {
  AppendVarint(out_, ZigZagEncode(v));
}

void CompactWriter::WriteDouble(double v) {
  uint64_t bits = std::bit_cast<uint64_t>(v);
  char buf[8];
  std::memcpy(buf, &bits, 8);  // little-endian host (base/endian.h)
  out_->append(buf, 8);
}

void CompactWriter::WriteBinary(std::string_view v) {
  AppendVarint(out_, v.size());
  out_->append(v);
}

// ---------------------------------------------------------------------------------------------
// CompactReader

Status CompactReader::Corrupt(std::string_view what) const {
  return DataLoss("thrift: {} at offset {}", what, position());
}

Status CompactReader::ReadVarint(uint64_t* v) {
  if (!DecodeVarint(&p_, end_, v)) {
    return Corrupt("truncated or over-long varint");
  }
  return Status::OK();
}

Status CompactReader::StructBegin() {
  if (field_id_stack_.size() >= static_cast<size_t>(kMaxDepth)) {
    return Corrupt("structs nested too deeply");
  }
  field_id_stack_.push_back(last_field_id_);
  last_field_id_ = 0;
  return Status::OK();
}

Status CompactReader::StructEnd() {
  if (field_id_stack_.empty()) {
    return Corrupt("struct end without a struct");
  }
  last_field_id_ = field_id_stack_.back();
  field_id_stack_.pop_back();
  return Status::OK();
}

Status CompactReader::ReadFieldHeader(CType* type, int16_t* id) {
  if (p_ >= end_) {
    return Corrupt("truncated struct");
  }
  uint8_t byte = *p_++;
  auto t = static_cast<CType>(byte & 0x0F);
  if (t == CType::kStop) {
    if (byte != 0) {
      return Corrupt("bad field header");
    }
    *type = CType::kStop;
    *id = 0;
    return Status::OK();
  }
  if (static_cast<uint8_t>(t) > static_cast<uint8_t>(CType::kUuid)) {
    return Corrupt("unknown field type");
  }
  int delta = byte >> 4;
  if (delta != 0) {
    int next = last_field_id_ + delta;
    if (next > INT16_MAX) {
      return Corrupt("field id overflow");
    }
    *id = static_cast<int16_t>(next);
  } else {
    FERRY_RETURN_IF_ERROR(ReadI16(id));
  }
  last_field_id_ = *id;
  *type = t;
  return Status::OK();
}

Status CompactReader::ReadBool(bool* v) {
  if (p_ >= end_) {
    return Corrupt("truncated bool");
  }
  *v = *p_++ == 1;
  return Status::OK();
}

Status CompactReader::ReadI8(int8_t* v) {
  if (p_ >= end_) {
    return Corrupt("truncated byte");
  }
  *v = static_cast<int8_t>(*p_++);
  return Status::OK();
}

Status CompactReader::ReadI16(int16_t* v) {
  int64_t x;
  FERRY_RETURN_IF_ERROR(ReadI64(&x));
  if (x < INT16_MIN || x > INT16_MAX) {
    return Corrupt("i16 out of range");
  }
  *v = static_cast<int16_t>(x);
  return Status::OK();
}

Status CompactReader::ReadI32(int32_t* v) {
  int64_t x;
  FERRY_RETURN_IF_ERROR(ReadI64(&x));
  if (x < INT32_MIN || x > INT32_MAX) {
    return Corrupt("i32 out of range");
  }
  *v = static_cast<int32_t>(x);
  return Status::OK();
}

Status CompactReader::ReadI64(int64_t* v) {
  uint64_t u = 0;
  FERRY_RETURN_IF_ERROR(ReadVarint(&u));
  *v = ZigZagDecode(u);
  return Status::OK();
}

Status CompactReader::ReadDouble(double* v) {
  if (remaining() < 8) {
    return Corrupt("truncated double");
  }
  uint64_t bits;
  std::memcpy(&bits, p_, 8);
  p_ += 8;
  *v = std::bit_cast<double>(bits);
  return Status::OK();
}

Status CompactReader::ReadBinaryView(std::string_view* v) {
  uint64_t size = 0;
  FERRY_RETURN_IF_ERROR(ReadVarint(&size));
  if (size > remaining()) {
    return Corrupt("binary longer than the input");
  }
  *v = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(size));
  p_ += size;
  return Status::OK();
}

Status CompactReader::ReadBinary(std::string* v) {
  std::string_view view;
  FERRY_RETURN_IF_ERROR(ReadBinaryView(&view));
  v->assign(view);
  return Status::OK();
}

Status CompactReader::ReadListHeader(CType* element_type, int32_t* size) {
  if (p_ >= end_) {
    return Corrupt("truncated list header");
  }
  uint8_t byte = *p_++;
  *element_type = static_cast<CType>(byte & 0x0F);
  if (*element_type == CType::kStop ||
      static_cast<uint8_t>(*element_type) > static_cast<uint8_t>(CType::kUuid)) {
    return Corrupt("bad list element type");
  }
  uint64_t n = byte >> 4;
  if (n == 15) {
    FERRY_RETURN_IF_ERROR(ReadVarint(&n));
  }
  // Every element takes at least one byte.
  if (n > remaining() || n > static_cast<uint64_t>(INT32_MAX)) {
    return Corrupt("list longer than the input");
  }
  *size = static_cast<int32_t>(n);
  return Status::OK();
}

Status CompactReader::ReadMapHeader(int32_t* size, CType* key_type, CType* value_type) {
  uint64_t n = 0;
  FERRY_RETURN_IF_ERROR(ReadVarint(&n));
  *size = 0;
  if (n == 0) {
    return Status::OK();
  }
  if (p_ >= end_) {
    return Corrupt("truncated map header");
  }
  uint8_t types = *p_++;
  *key_type = static_cast<CType>(types >> 4);
  *value_type = static_cast<CType>(types & 0x0F);
  // Every entry takes at least two bytes.
  if (n > remaining() / 2) {
    return Corrupt("map longer than the input");
  }
  *size = static_cast<int32_t>(n);
  return Status::OK();
}

bool CompactReader::Matches(CType actual, CType expected) {
  auto is_bool = [](CType t) { return t == CType::kBoolTrue || t == CType::kBoolFalse; };
  return actual == expected || (is_bool(actual) && is_bool(expected));
}

Status CompactReader::Expect(CType actual, CType expected, std::string_view what) const {
  if (Matches(actual, expected)) {
    return Status::OK();
  }
  return Corrupt(fmt::format("{} has wire type {}, expected {}", what, static_cast<int>(actual),
                             static_cast<int>(expected)));
}

Status CompactReader::SkipElements(CType element, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    if (element == CType::kBoolTrue || element == CType::kBoolFalse) {
      bool b;
      FERRY_RETURN_IF_ERROR(ReadBool(&b));
    } else {
      FERRY_RETURN_IF_ERROR(SkipDepth(element, static_cast<int>(field_id_stack_.size()) + 1));
    }
  }
  return Status::OK();
}

Status CompactReader::Skip(CType type) {
  return SkipDepth(type, static_cast<int>(field_id_stack_.size()));
}

// Skips an element of a list, set or map: bools take one byte there, not zero.
Status CompactReader::SkipDepth(CType type, int depth) {
  if (depth > kMaxDepth) {
    return Corrupt("values nested too deeply");
  }
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse:
      return Status::OK();  // a field's bool lives in its header
    case CType::kI8: {
      int8_t v;
      return ReadI8(&v);
    }
    case CType::kI16:
    case CType::kI32:
    case CType::kI64: {
      uint64_t v;
      return ReadVarint(&v);
    }
    case CType::kDouble:
      if (remaining() < 8) {
        return Corrupt("truncated double");
      }
      p_ += 8;
      return Status::OK();
    case CType::kUuid:
      if (remaining() < 16) {
        return Corrupt("truncated uuid");
      }
      p_ += 16;
      return Status::OK();
    case CType::kBinary: {
      std::string_view v;
      return ReadBinaryView(&v);
    }
    case CType::kList:
    case CType::kSet: {
      CType element;
      int32_t n;
      FERRY_RETURN_IF_ERROR(ReadListHeader(&element, &n));
      for (int32_t i = 0; i < n; ++i) {
        if (element == CType::kBoolTrue || element == CType::kBoolFalse) {
          bool b;
          FERRY_RETURN_IF_ERROR(ReadBool(&b));
        } else {
          FERRY_RETURN_IF_ERROR(SkipDepth(element, depth + 1));
        }
      }
      return Status::OK();
    }
    case CType::kMap: {
      int32_t n;
      CType kt = CType::kStop;
      CType vt = CType::kStop;
      FERRY_RETURN_IF_ERROR(ReadMapHeader(&n, &kt, &vt));
      for (int32_t i = 0; i < n; ++i) {
        for (CType t : {kt, vt}) {
          if (t == CType::kBoolTrue || t == CType::kBoolFalse) {
            bool b;
            FERRY_RETURN_IF_ERROR(ReadBool(&b));
          } else {
            FERRY_RETURN_IF_ERROR(SkipDepth(t, depth + 1));
          }
        }
      }
      return Status::OK();
    }
    case CType::kStruct: {
      // Field ids inside are relative to this struct; keep ours.
      int16_t saved = last_field_id_;
      last_field_id_ = 0;
      while (true) {
        CType ft;
        int16_t id;
        FERRY_RETURN_IF_ERROR(ReadFieldHeader(&ft, &id));
        if (ft == CType::kStop) {
          break;
        }
        FERRY_RETURN_IF_ERROR(SkipDepth(ft, depth + 1));
      }
      last_field_id_ = saved;
      return Status::OK();
    }
    case CType::kStop:
      break;
  }
  return Corrupt("cannot skip a value of unknown type");
}

}  // namespace ferry::parquet::thrift
