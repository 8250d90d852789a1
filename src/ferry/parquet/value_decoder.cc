#include "ferry/parquet/value_decoder.h"

#include <cstring>

#include "ferry/base/endian.h"
#include "ferry/parquet/delta_decoder.h"
#include "ferry/parquet/rle.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::DataType;
using columnar::PrimitiveColumn;
using columnar::TypeId;

// Fixed byte width of a physical type's values; 0 for BOOLEAN (bits) and BYTE_ARRAY.
int64_t FixedWidth(const PhysicalSpec& spec) {
  switch (spec.type) {
    case PhysicalType::kInt32:
    case PhysicalType::kFloat:
      return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble:
      return 8;
    case PhysicalType::kInt96:
      return 12;
    case PhysicalType::kFixedLenByteArray:
      return spec.type_length;
    default:
      return 0;
  }
}

Status NeedBytes(std::string_view what, int64_t count, int64_t width, size_t have) {
  if (width > 0 && static_cast<uint64_t>(count) > have / static_cast<uint64_t>(width)) {
    return DataLoss("{}: {} values of {} bytes do not fit in the {} bytes of the page", what, count,
                    width, have);
  }
  return Status::OK();
}

template <typename T>
void AppendRaw(const char* p, int64_t count, Column* out) {
  if (count == 0) {
    return;
  }
  auto* col = static_cast<PrimitiveColumn<T>*>(out);
  std::vector<T>* values = col->mutable_values();
  size_t old = values->size();
  values->resize(old + static_cast<size_t>(count));
  std::memcpy(values->data() + old, p, static_cast<size_t>(count) * sizeof(T));
  col->AppendValidity(count, true);
}

void AppendFixedBinary(const char* p, int64_t count, int64_t width, Column* out) {
  auto* col = static_cast<BinaryColumn*>(out);
  col->Reserve(col->length() + count);
  col->ReserveData(static_cast<int64_t>(col->data().size()) + count * width);
  for (int64_t i = 0; i < count; i++) {
    col->Append(std::string_view(p + i * width, static_cast<size_t>(width)));
  }
}

Status DecodePlainBooleans(std::string_view data, int64_t count, Column* out) {
  if (static_cast<uint64_t>(count) > static_cast<uint64_t>(data.size()) * 8) {
    return DataLoss("PLAIN BOOLEAN: {} values do not fit in the {} bytes of the page", count,
                    data.size());
  }
  auto* col = static_cast<PrimitiveColumn<uint8_t>*>(out);
  col->Reserve(col->length() + count);
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  for (int64_t i = 0; i < count; i++) {
    col->Append(static_cast<uint8_t>((p[i >> 3] >> (i & 7)) & 1));
  }
  return Status::OK();
}

// Advances *data past the values taken.
Status DecodePlainByteArrays(std::string_view* data, int64_t count, Column* out) {
  // Every value takes at least its 4-byte length.
  FERRY_RETURN_IF_ERROR(NeedBytes("PLAIN BYTE_ARRAY", count, 4, data->size()));
  auto* col = static_cast<BinaryColumn*>(out);
  col->Reserve(col->length() + count);
  const std::string_view bytes = *data;
  size_t pos = 0;
  for (int64_t i = 0; i < count; i++) {
    if (bytes.size() - pos < 4) {
      return DataLoss("PLAIN BYTE_ARRAY: value {} of {}: length past the end of the page", i,
                      count);
    }
    uint32_t len = LoadLE<uint32_t>(bytes.data() + pos);
    pos += 4;
    if (len > bytes.size() - pos) {
      return DataLoss("PLAIN BYTE_ARRAY: value {} of {}: {} bytes past the end of the page", i,
                      count, len);
    }
    col->Append(bytes.substr(pos, len));
    pos += len;
  }
  data->remove_prefix(pos);
  return Status::OK();
}

// RLE-encoded booleans: a 4-byte length, then the hybrid at bit width 1.
Status DecodeRleBooleans(std::string_view data, int64_t count, Column* out) {
  if (data.size() < 4) {
    return DataLoss("RLE BOOLEAN: page too short for the length prefix");
  }
  uint32_t len = LoadLE<uint32_t>(data.data());
  if (len > data.size() - 4) {
    return DataLoss("RLE BOOLEAN: length {} past the end of the page ({} bytes)", len,
                    data.size() - 4);
  }
  auto* col = static_cast<PrimitiveColumn<uint8_t>*>(out);
  std::vector<uint8_t>* values = col->mutable_values();
  size_t old = values->size();
  values->resize(old + static_cast<size_t>(count));
  RleBpDecoder decoder(reinterpret_cast<const uint8_t*>(data.data()) + 4, len, 1);
  auto got = decoder.GetBatch(values->data() + old, count);
  if (!got.ok() || *got != count) {
    values->resize(old);
    return got.ok() ? DataLoss("RLE BOOLEAN: {} values, page holds {}", count, *got)
                    : got.status().WithContext("RLE BOOLEAN");
  }
  col->AppendValidity(count, true);
  return Status::OK();
}

template <typename T>
void UnsplitPrimitive(const char* data, size_t stride, int64_t count, Column* out) {
  auto* col = static_cast<PrimitiveColumn<T>*>(out);
  std::vector<T>* values = col->mutable_values();
  size_t old = values->size();
  values->resize(old + static_cast<size_t>(count));
  auto* dst = reinterpret_cast<char*>(values->data() + old);
  for (size_t b = 0; b < sizeof(T); b++) {
    const char* stream = data + b * stride;
    for (int64_t i = 0; i < count; i++) {
      dst[static_cast<size_t>(i) * sizeof(T) + b] = stream[i];
    }
  }
  col->AppendValidity(count, true);
}

}  // namespace

columnar::DataTypePtr StorageTypeFor(const PhysicalSpec& spec) {
  switch (spec.type) {
    case PhysicalType::kBoolean:
      return DataType::Boolean();
    case PhysicalType::kInt32:
      return DataType::Int32();
    case PhysicalType::kInt64:
      return DataType::Int64();
    case PhysicalType::kInt96:
      return DataType::FixedBinary(12);
    case PhysicalType::kFloat:
      return DataType::Float32();
    case PhysicalType::kDouble:
      return DataType::Float64();
    case PhysicalType::kFixedLenByteArray:
      return DataType::FixedBinary(spec.type_length > 0 ? spec.type_length : 1);
    case PhysicalType::kByteArray:
    default:
      return DataType::Binary();
  }
}

bool HasStorageOf(const columnar::DataType& type, PhysicalType physical) {
  TypeId id = type.id();
  switch (physical) {
    case PhysicalType::kBoolean:
      return id == TypeId::kBoolean || id == TypeId::kUInt8;
    case PhysicalType::kInt32:
      return id == TypeId::kInt32 || id == TypeId::kDate;
    case PhysicalType::kInt64:
      return id == TypeId::kInt64 || id == TypeId::kTimestamp;
    case PhysicalType::kFloat:
      return id == TypeId::kFloat32;
    case PhysicalType::kDouble:
      return id == TypeId::kFloat64;
    case PhysicalType::kInt96:
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      return type.is_binary_like();
  }
  return false;
}

Status DecodePlain(const PhysicalSpec& spec, std::string_view data, int64_t count, Column* out) {
  if (spec.type == PhysicalType::kBoolean) {
    return DecodePlainBooleans(data, count, out);
  }
  return DecodePlainPrefix(spec, &data, count, out);
}

Status DecodePlainPrefix(const PhysicalSpec& spec, std::string_view* data, int64_t count,
                         Column* out) {
  switch (spec.type) {
    case PhysicalType::kBoolean:
      return Internal("PLAIN BOOLEAN values are bits: a page cannot be decoded in byte parts");
    case PhysicalType::kByteArray:
      return DecodePlainByteArrays(data, count, out);
    default:
      break;
  }
  int64_t width = FixedWidth(spec);
  if (width <= 0) {
    return DataLoss("PLAIN {}: bad value width {}", PhysicalTypeName(spec.type), width);
  }
  FERRY_RETURN_IF_ERROR(NeedBytes("PLAIN", count, width, data->size()));
  switch (spec.type) {
    case PhysicalType::kInt32:
      AppendRaw<int32_t>(data->data(), count, out);
      break;
    case PhysicalType::kInt64:
      AppendRaw<int64_t>(data->data(), count, out);
      break;
    case PhysicalType::kFloat:
      AppendRaw<float>(data->data(), count, out);
      break;
    case PhysicalType::kDouble:
      AppendRaw<double>(data->data(), count, out);
      break;
    default:  // INT96, FIXED_LEN_BYTE_ARRAY
      AppendFixedBinary(data->data(), count, width, out);
      break;
  }
  data->remove_prefix(static_cast<size_t>(count * width));
  return Status::OK();
}

Status DecodeByteStreamSplit(const PhysicalSpec& spec, std::string_view data, int64_t count,
                             Column* out) {
  int64_t width = FixedWidth(spec);
  if (spec.type == PhysicalType::kInt96 || width <= 0) {
    return NotSupported("BYTE_STREAM_SPLIT is not defined for {}", PhysicalTypeName(spec.type));
  }
  // K streams of N bytes; N is the page's value count, taken from its size as the spec says.
  if (data.size() % static_cast<uint64_t>(width) != 0) {
    return DataLoss("BYTE_STREAM_SPLIT: {} bytes is not a multiple of the value width {}",
                    data.size(), width);
  }
  size_t stride = data.size() / static_cast<size_t>(width);
  if (static_cast<uint64_t>(count) > stride) {
    return DataLoss("BYTE_STREAM_SPLIT: {} values, page holds {}", count, stride);
  }
  switch (spec.type) {
    case PhysicalType::kInt32:
      UnsplitPrimitive<int32_t>(data.data(), stride, count, out);
      return Status::OK();
    case PhysicalType::kInt64:
      UnsplitPrimitive<int64_t>(data.data(), stride, count, out);
      return Status::OK();
    case PhysicalType::kFloat:
      UnsplitPrimitive<float>(data.data(), stride, count, out);
      return Status::OK();
    case PhysicalType::kDouble:
      UnsplitPrimitive<double>(data.data(), stride, count, out);
      return Status::OK();
    default:
      break;
  }
  auto* col = static_cast<BinaryColumn*>(out);
  col->Reserve(col->length() + count);
  std::string value(static_cast<size_t>(width), '\0');
  for (int64_t i = 0; i < count; i++) {
    for (int64_t b = 0; b < width; b++) {
      value[static_cast<size_t>(b)] =
          data[static_cast<size_t>(b) * stride + static_cast<size_t>(i)];
    }
    col->Append(value);
  }
  return Status::OK();
}

Status DecodeDictionaryIndices(std::string_view data, int64_t count, int64_t dictionary_size,
                               std::vector<uint32_t>* out) {
  out->clear();
  if (count == 0) {
    return Status::OK();
  }
  if (data.empty()) {
    return DataLoss("dictionary indices: empty page, {} values expected", count);
  }
  int bit_width = static_cast<uint8_t>(data[0]);
  if (bit_width > 32) {
    return DataLoss("dictionary indices: bit width {} above 32", bit_width);
  }
  out->resize(static_cast<size_t>(count));
  RleBpDecoder decoder(reinterpret_cast<const uint8_t*>(data.data()) + 1, data.size() - 1,
                       bit_width);
  FERRY_ASSIGN_OR_RETURN(int64_t got, decoder.GetBatch(out->data(), count));
  if (got != count) {
    return DataLoss("dictionary indices: {} values expected, page holds {}", count, got);
  }
  int64_t i = FirstAtOrAbove(*out, dictionary_size);
  if (i >= 0) {
    return DataLoss("dictionary index {} at value {} is past the dictionary of {} entries",
                    (*out)[static_cast<size_t>(i)], i, dictionary_size);
  }
  return Status::OK();
}

Status DecodeValues(Encoding encoding, const PhysicalSpec& spec, std::string_view data,
                    int64_t count, int64_t max_output_bytes, Column* out) {
  FERRY_CHECK(HasStorageOf(*out->type(), spec.type) && count >= 0);
  switch (encoding) {
    case Encoding::kPlain:
      return DecodePlain(spec, data, count, out);
    case Encoding::kRle:
      if (spec.type != PhysicalType::kBoolean) {
        return NotSupported("RLE values are defined for BOOLEAN only, not {}",
                            PhysicalTypeName(spec.type));
      }
      return DecodeRleBooleans(data, count, out);
    case Encoding::kDeltaBinaryPacked:
      return DecodeDeltaBinaryPacked(spec, data, count, out);
    case Encoding::kDeltaLengthByteArray:
      if (spec.type != PhysicalType::kByteArray) {
        return NotSupported("DELTA_LENGTH_BYTE_ARRAY is not defined for {}",
                            PhysicalTypeName(spec.type));
      }
      return DecodeDeltaLengthByteArray(data, count, out);
    case Encoding::kDeltaByteArray:
      return DecodeDeltaByteArray(spec, data, count, max_output_bytes, out);
    case Encoding::kByteStreamSplit:
      return DecodeByteStreamSplit(spec, data, count, out);
    default:
      return NotSupported("value encoding {} ({})", EncodingName(encoding),
                          static_cast<int32_t>(encoding));
  }
}

}  // namespace ferry::parquet
