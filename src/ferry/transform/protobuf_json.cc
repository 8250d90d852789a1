// The JSON text of google.protobuf.Struct, Value, ListValue and Any (protobuf_reader_internal.h),
// read straight from their wire bytes.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <string>

#include "ferry/base/json_escape.h"
#include "ferry/base/varint.h"
#include "ferry/transform/base64.h"
#include "ferry/transform/protobuf_reader_internal.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform::protobuf {

namespace {

constexpr int kMaxJsonDepth = 100;

struct Field {
  uint32_t number = 0;
  uint8_t wire = 0;
  uint64_t v = 0;
  std::string_view bytes;
};

// The next field of `*in` into `f`; false at the end. InvalidArgument for malformed bytes and
// groups (none of these messages has one).
Result<bool> Next(std::string_view* in, Field* f) {
  if (in->empty()) {
    return false;
  }
  const auto* p = reinterpret_cast<const uint8_t*>(in->data());
  const uint8_t* end = p + in->size();
  uint64_t tag = 0;
  if (!DecodeVarint(&p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
    return InvalidArgument("a malformed tag");
  }
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire = static_cast<uint8_t>(tag & 7);
  switch (f->wire) {
    case kVarint:
      if (!DecodeVarint(&p, end, &f->v)) {
        return InvalidArgument("a truncated or over-long varint");
      }
      break;
    case kI64:
      if (end - p < 8) {
        return InvalidArgument("a truncated number");
      }
      std::memcpy(&f->v, p, 8);
      p += 8;
      break;
    case kI32:
      if (end - p < 4) {
        return InvalidArgument("a truncated number");
      }
      p += 4;
      break;
    case kLen: {
      uint64_t n = 0;
      if (!DecodeVarint(&p, end, &n) || n > static_cast<uint64_t>(end - p)) {
        return InvalidArgument("a length beyond the message (truncated)");
      }
      f->bytes = std::string_view(reinterpret_cast<const char*>(p), n);
      p += n;
      break;
    }
    default:
      return InvalidArgument("wire type {} in a well-known JSON type (malformed)", f->wire);
  }
  in->remove_prefix(static_cast<size_t>(reinterpret_cast<const char*>(p) - in->data()));
  return true;
}

Status AppendString(std::string_view s, std::string* out) {
  if (!IsValidUtf8(s)) {
    return InvalidArgument("a string that is not UTF-8");
  }
  out->push_back('"');
  AppendJsonEscaped(s, out);
  out->push_back('"');
  return Status::OK();
}

Status AppendValue(std::string_view bytes, std::string* out, int depth);

Status AppendStruct(std::string_view bytes, std::string* out, int depth) {
  out->push_back('{');
  bool first = true;
  Field f;
  while (true) {
    FERRY_ASSIGN_OR_RETURN(bool more, Next(&bytes, &f));
    if (!more) {
      break;
    }
    if (f.number != 1 || f.wire != kLen) {
      continue;
    }
    std::string_view entry = f.bytes;
    std::string_view key;
    std::string_view value;
    Field e;
    while (true) {
      FERRY_ASSIGN_OR_RETURN(bool more_entry, Next(&entry, &e));
      if (!more_entry) {
        break;
      }
      if (e.wire == kLen && e.number == 1) {
        key = e.bytes;
      } else if (e.wire == kLen && e.number == 2) {
        value = e.bytes;
      }
    }
    if (!first) {
      out->push_back(',');
    }
    first = false;
    FERRY_RETURN_IF_ERROR(AppendString(key, out));
    out->push_back(':');
    FERRY_RETURN_IF_ERROR(AppendValue(value, out, depth + 1));
  }
  out->push_back('}');
  return Status::OK();
}

Status AppendList(std::string_view bytes, std::string* out, int depth) {
  out->push_back('[');
  bool first = true;
  Field f;
  while (true) {
    FERRY_ASSIGN_OR_RETURN(bool more, Next(&bytes, &f));
    if (!more) {
      break;
    }
    if (f.number != 1 || f.wire != kLen) {
      continue;
    }
    if (!first) {
      out->push_back(',');
    }
    first = false;
    FERRY_RETURN_IF_ERROR(AppendValue(f.bytes, out, depth + 1));
  }
  out->push_back(']');
  return Status::OK();
}

// A Value: the member that came last (none: null).
Status AppendValue(std::string_view bytes, std::string* out, int depth) {
  if (depth > kMaxJsonDepth) {
    return InvalidArgument("a Struct nested deeper than {}", kMaxJsonDepth);
  }
  Field f;
  Field last;
  while (true) {
    FERRY_ASSIGN_OR_RETURN(bool more, Next(&bytes, &f));
    if (!more) {
      break;
    }
    const bool len = f.wire == kLen;
    if ((f.number == 1 && f.wire == kVarint) || (f.number == 2 && f.wire == kI64) ||
        (f.number == 3 && len) || (f.number == 4 && f.wire == kVarint) || (f.number == 5 && len) ||
        (f.number == 6 && len)) {
      last = f;
    }
  }
  switch (last.number) {
    case 2: {
      double d = 0;
      std::memcpy(&d, &last.v, 8);
      if (std::isnan(d)) {
        *out += "\"NaN\"";
      } else if (std::isinf(d)) {
        *out += d > 0 ? "\"Infinity\"" : "\"-Infinity\"";
      } else {
        *out += fmt::format("{}", d);
      }
      return Status::OK();
    }
    case 3:
      return AppendString(last.bytes, out);
    case 4:
      *out += last.v != 0 ? "true" : "false";
      return Status::OK();
    case 5:
      return AppendStruct(last.bytes, out, depth + 1);
    case 6:
      return AppendList(last.bytes, out, depth + 1);
    default:
      *out += "null";
      return Status::OK();
  }
}

Status AppendAny(std::string_view bytes, std::string* out) {
  std::string_view url;
  std::string_view value;
  Field f;
  while (true) {
    FERRY_ASSIGN_OR_RETURN(bool more, Next(&bytes, &f));
    if (!more) {
      break;
    }
    if (f.wire == kLen && f.number == 1) {
      url = f.bytes;
    } else if (f.wire == kLen && f.number == 2) {
      value = f.bytes;
    }
  }
  *out += "{\"@type\":";
  FERRY_RETURN_IF_ERROR(AppendString(url, out));
  *out += ",\"value\":\"";
  *out += EncodeBase64(value);
  *out += "\"}";
  return Status::OK();
}

}  // namespace

Status AppendWellKnownJson(WellKnown type, std::string_view bytes, std::string* out, int depth) {
  switch (type) {
    case WellKnown::kStruct:
      return AppendStruct(bytes, out, depth);
    case WellKnown::kValue:
      return AppendValue(bytes, out, depth);
    case WellKnown::kListValue:
      return AppendList(bytes, out, depth);
    case WellKnown::kAny:
      return AppendAny(bytes, out);
    default:
      return InvalidArgument("not a JSON well-known type");
  }
}

}  // namespace ferry::transform::protobuf
