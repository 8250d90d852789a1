#include "ferry/transform/protobuf_wire.h"

#include <fmt/format.h>

#include <cstring>

#include "ferry/base/varint.h"

namespace ferry::transform::protobuf {

namespace {

Status Malformed(std::string_view path, std::string_view what, size_t at) {
  return InvalidArgument("Protobuf message: field '{}': {} at byte {}",
                         path.empty() ? "<top>" : path, what, at);
}

}  // namespace

uint8_t WireTypeOf(Kind kind) {
  switch (kind) {
    case Kind::kDouble:
    case Kind::kFixed64:
    case Kind::kSFixed64:
      return 1;
    case Kind::kFloat:
    case Kind::kFixed32:
    case Kind::kSFixed32:
      return 5;
    case Kind::kString:
    case Kind::kBytes:
    case Kind::kMessage:
      return 2;
    case Kind::kGroup:
      return 3;
    default:
      return 0;
  }
}

Result<bool> NextWireField(std::string_view* in, size_t total, std::string_view path,
                           WireField* field) {
  if (in->empty()) {
    return false;
  }
  const auto* begin = reinterpret_cast<const uint8_t*>(in->data());
  const uint8_t* end = begin + in->size();
  const uint8_t* p = begin;
  const size_t at = total - in->size();
  uint64_t tag = 0;
  if (!DecodeVarint(&p, end, &tag)) {
    return Malformed(path, "a truncated or over-long tag", at);
  }
  field->number = tag >> 3;
  field->wire = static_cast<uint8_t>(tag & 7);
  if (field->number == 0) {
    return Malformed(path, "field number 0 (malformed)", at);
  }
  switch (field->wire) {
    case 0:
      if (!DecodeVarint(&p, end, &field->v)) {
        return Malformed(path, "a truncated or over-long varint", at);
      }
      break;
    case 1:
    case 5: {
      const size_t n = field->wire == 1 ? 8 : 4;
      if (static_cast<size_t>(end - p) < n) {
        return Malformed(path, "a message truncated inside a number", at);
      }
      field->v = 0;
      std::memcpy(&field->v, p, n);  // little-endian, as the host (x86-64, arm64)
      p += n;
      break;
    }
    case 2: {
      uint64_t n = 0;
      if (!DecodeVarint(&p, end, &n) || n > static_cast<uint64_t>(end - p)) {
        return Malformed(path, "a length beyond the message (truncated)", at);
      }
      field->bytes = std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
      p += n;
      break;
    }
    default:
      return Malformed(path, fmt::format("wire type {} (a group or malformed)", field->wire), at);
  }
  in->remove_prefix(static_cast<size_t>(p - begin));
  return true;
}

}  // namespace ferry::transform::protobuf
