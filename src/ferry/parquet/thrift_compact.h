// The Thrift compact protocol (apache/thrift doc/specs/thrift-compact-protocol.md), the encoding
// of every Parquet footer and page header. Only what Parquet uses: structs, unions, lists, maps
// (skipped), integers, doubles, binaries and bools; no messages.
//
// CompactWriter appends to a string. Structs are written with StructBegin()/StructEnd() and
// fields with the Field* calls, in increasing field-id order (the short header form needs it).
//
// CompactReader is the defensive side: every read is bounds-checked, nesting is limited to
// kMaxDepth, list/map/binary sizes larger than the bytes left are rejected before anything is
// allocated, and Skip() steps over a value of any type so that fields added by newer writers are
// ignored. Every error is DataLoss with the byte offset ("thrift: ... at offset N").
//
// Thread-safety: neither class is thread-safe; use one per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/status.h"

namespace ferry::parquet::thrift {

// Wire type nibbles. Field headers use kBoolTrue/kBoolFalse for bool fields; list headers use
// either for bool elements (writers differ).
enum class CType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kI8 = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
  kUuid = 13,
};

class CompactWriter {
 public:
  explicit CompactWriter(std::string* out) : out_(out) {}

  // A struct nested as a field value or list element starts with StructBegin() and ends with
  // StructEnd() (which writes the stop byte). The top-level struct too.
  void StructBegin();
  void StructEnd();

  // Field header for a value the caller writes next with the Write* calls.
  void FieldBegin(CType type, int16_t id);

  void FieldBool(int16_t id, bool v);
  void FieldI8(int16_t id, int8_t v);
  void FieldI16(int16_t id, int16_t v);
  void FieldI32(int16_t id, int32_t v);
  void FieldI64(int16_t id, int64_t v);
  void FieldDouble(int16_t id, double v);
  void FieldBinary(int16_t id, std::string_view v);
  // Field header + list header; the caller writes `size` elements.
  void FieldListBegin(int16_t id, CType element_type, int32_t size);
  // Field header + StructBegin(); close with StructEnd().
  void FieldStructBegin(int16_t id);
  // An empty struct as a field (the members of Parquet's unions are mostly empty structs).
  void FieldEmptyStruct(int16_t id);

  // Values (list elements, or after FieldBegin).
  void ListBegin(CType element_type, int32_t size);
  void WriteBool(bool v);
  void WriteI8(int8_t v);
  void WriteI16(int16_t v);
  void WriteI32(int32_t v);
  void WriteI64(int64_t v);
  void WriteDouble(double v);
  void WriteBinary(std::string_view v);

 private:
  std::string* out_;
  int16_t last_field_id_ = 0;
  std::vector<int16_t> field_id_stack_;
};

class CompactReader {
 public:
  static constexpr int kMaxDepth = 64;

  CompactReader(const void* data, size_t size)
      : begin_(static_cast<const uint8_t*>(data)), p_(begin_), end_(begin_ + size) {}
  explicit CompactReader(std::string_view data) : CompactReader(data.data(), data.size()) {}

  // Bytes consumed so far.
  size_t position() const { return static_cast<size_t>(p_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  // Enter/leave a struct (the top-level one too). StructBegin enforces kMaxDepth.
  Status StructBegin();
  Status StructEnd();
  // Reads the next field header. At the end of the struct, *type = kStop.
  Status ReadFieldHeader(CType* type, int16_t* id);

  // A bool field's value is its header type; a bool list element is a byte.
  static bool FieldBoolValue(CType type) { return type == CType::kBoolTrue; }
  Status ReadBool(bool* v);
  Status ReadI8(int8_t* v);
  Status ReadI16(int16_t* v);
  Status ReadI32(int32_t* v);
  Status ReadI64(int64_t* v);
  Status ReadDouble(double* v);
  Status ReadBinary(std::string* v);
  // Borrows the bytes; valid while the input is.
  Status ReadBinaryView(std::string_view* v);
  // List or set header. Fails if `size` elements cannot fit in the bytes left.
  Status ReadListHeader(CType* element_type, int32_t* size);

  // Skips one value of wire type `type` (a field's value after its header, or a list element).
  Status Skip(CType type);
  // Skips `n` list elements of wire type `element` (after ReadListHeader).
  Status SkipElements(CType element, int32_t n);
  // True if `actual` is the wire type `expected` (bools: either bool type).
  static bool Matches(CType actual, CType expected);
  // Fails unless Matches(actual, expected), naming `what`.
  Status Expect(CType actual, CType expected, std::string_view what) const;
  // Skips a field whose wire type is not the one its id has in the IDL, as Thrift-generated code
  // does (some old writers used ids differently), and remembers it: TakeSkippedMismatch() then
  // returns true once, so the caller does not count the field as present.
  Status SkipMismatched(CType type) {
    skipped_mismatch_ = true;
    return Skip(type);
  }
  void NoteMismatch() { skipped_mismatch_ = true; }
  bool TakeSkippedMismatch() {
    bool s = skipped_mismatch_;
    skipped_mismatch_ = false;
    return s;
  }

  Status Corrupt(std::string_view what) const;

 private:
  Status ReadVarint(uint64_t* v);
  Status ReadMapHeader(int32_t* size, CType* key_type, CType* value_type);
  Status SkipDepth(CType type, int depth);

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  int16_t last_field_id_ = 0;
  std::vector<int16_t> field_id_stack_;
  bool skipped_mismatch_ = false;
};

}  // namespace ferry::parquet::thrift
