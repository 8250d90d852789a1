#include "ferry/transform/confluent_wire.h"

#include <limits>

#include "ferry/base/varint.h"

namespace ferry::transform {

namespace {

bool ReadZigZag32(const uint8_t** p, const uint8_t* end, int64_t* out) {
  uint64_t raw = 0;
  if (!DecodeVarint(p, end, &raw)) {
    return false;
  }
  int64_t v = ZigZagDecode(raw);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

Result<ConfluentFrame> ParseConfluentFrame(std::string_view bytes, bool protobuf) {
  if (bytes.empty()) {
    return InvalidArgument("schema registry framing: an empty message (the frame needs {} bytes)",
                           kConfluentHeaderBytes);
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (data[0] != 0) {
    return InvalidArgument(
        "schema registry framing: the first byte is 0x{:02x}, not the magic byte 0x00 (was the "
        "message written without a schema registry serializer?)",
        data[0]);
  }
  if (bytes.size() < kConfluentHeaderBytes) {
    return InvalidArgument("schema registry framing: {} bytes, shorter than the {}-byte header",
                           bytes.size(), kConfluentHeaderBytes);
  }
  ConfluentFrame frame;
  frame.schema_id = static_cast<int32_t>((uint32_t{data[1]} << 24) | (uint32_t{data[2]} << 16) |
                                         (uint32_t{data[3]} << 8) | uint32_t{data[4]});
  const uint8_t* p = data + kConfluentHeaderBytes;
  const uint8_t* end = data + bytes.size();
  if (protobuf) {
    int64_t count = 0;
    if (!ReadZigZag32(&p, end, &count)) {
      return InvalidArgument(
          "schema registry framing: schema id {}: the Protobuf message-index count is truncated "
          "or malformed",
          frame.schema_id);
    }
    if (count < 0 || count > kMaxMessageIndexes) {
      return InvalidArgument(
          "schema registry framing: schema id {}: {} Protobuf message indexes (0 to {} allowed)",
          frame.schema_id, count, kMaxMessageIndexes);
    }
    if (count == 0) {
      frame.message_indexes = {0};
    }
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = 0;
      if (!ReadZigZag32(&p, end, &index) || index < 0) {
        return InvalidArgument(
            "schema registry framing: schema id {}: Protobuf message index {} of {} is "
            "truncated, malformed or negative",
            frame.schema_id, i + 1, count);
      }
      frame.message_indexes.push_back(static_cast<int32_t>(index));
    }
  }
  frame.payload = bytes.substr(static_cast<size_t>(p - data));
  return frame;
}

std::string MakeConfluentFrame(int32_t schema_id, const std::vector<int32_t>& message_indexes,
                               std::string_view payload, bool protobuf) {
  std::string out;
  out.push_back('\0');
  const auto id = static_cast<uint32_t>(schema_id);
  out.push_back(static_cast<char>(id >> 24));
  out.push_back(static_cast<char>(id >> 16));
  out.push_back(static_cast<char>(id >> 8));
  out.push_back(static_cast<char>(id));
  if (protobuf) {
    if (message_indexes.size() == 1 && message_indexes[0] == 0) {
      out.push_back('\0');  // [0]: the count 0 alone
    } else {
      AppendVarint(&out, ZigZagEncode(static_cast<int64_t>(message_indexes.size())));
      for (int32_t index : message_indexes) {
        AppendVarint(&out, ZigZagEncode(index));
      }
    }
  }
  out.append(payload);
  return out;
}

}  // namespace ferry::transform
