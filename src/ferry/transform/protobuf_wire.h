// Reading a Protobuf message's fields off the wire one at a time (protobuf.dev "Encoding"), for
// code that walks a message itself instead of through a ProtobufRowReader plan
// (protobuf_reader.h): the Debezium envelope (debezium_protobuf_decoder.h) reads its top-level
// fields so, and hands `before`/`after` to a row reader.
//
//   std::string_view in = message;
//   protobuf::WireField f;
//   while (true) {
//     FERRY_ASSIGN_OR_RETURN(bool more, protobuf::NextWireField(&in, message.size(), "", &f));
//     if (!more) break;
//     ...  // f.number, f.wire, f.v or f.bytes
//   }
//
// Errors are InvalidArgument worded as the row reader's ("Protobuf message: field '<top>': a
// length beyond the message (truncated) at byte 12"). Groups (wire types 3 and 4, proto2) are
// refused, not skipped: the callers read proto3 that converters write.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/transform/protobuf_schema.h"

namespace ferry::transform::protobuf {

// One field as read off the wire.
struct WireField {
  uint64_t number = 0;
  uint8_t wire = 0;        // 0 varint, 1 fixed 64 bits, 2 length-delimited, 5 fixed 32 bits
  uint64_t v = 0;          // a varint's or fixed-width field's bits (little-endian order undone)
  std::string_view bytes;  // a length-delimited field's bytes (points into the message)
};

// The wire type a field of `kind` is written with (3, the group start, for kGroup).
uint8_t WireTypeOf(Kind kind);

// The next field of the rest `*in` of a message of `total` bytes (for the byte offsets of
// errors), consumed from `*in`; false at the message's end. `path` names the message in errors
// ("" the top).
Result<bool> NextWireField(std::string_view* in, size_t total, std::string_view path,
                           WireField* field);

}  // namespace ferry::transform::protobuf
