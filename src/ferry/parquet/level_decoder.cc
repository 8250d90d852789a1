#include "ferry/parquet/level_decoder.h"

#include "ferry/base/endian.h"
#include "ferry/parquet/rle.h"

namespace ferry::parquet {
namespace {

Status CheckMax(const std::vector<int16_t>& levels, int16_t max_level) {
  int64_t i = FirstAtOrAbove(levels, max_level + 1);
  if (i < 0) {
    return Status::OK();
  }
  return DataLoss("level {} at position {} is above the column's maximum {}",
                  levels[static_cast<size_t>(i)], i, max_level);
}

Status DecodeBitPacked(std::string_view* data, int16_t max_level, int64_t count,
                       std::vector<int16_t>* out) {
  int width = BitWidth(static_cast<uint64_t>(max_level));
  uint64_t bits = static_cast<uint64_t>(count) * static_cast<uint64_t>(width);
  uint64_t bytes = (bits + 7) / 8;
  if (bytes > data->size()) {
    return DataLoss("BIT_PACKED levels: {} levels need {} bytes, the page has {}", count, bytes,
                    data->size());
  }
  const auto* p = reinterpret_cast<const uint8_t*>(data->data());
  out->resize(static_cast<size_t>(count));
  uint64_t bit = 0;
  for (int64_t i = 0; i < count; i++) {
    int v = 0;
    for (int b = 0; b < width; b++, bit++) {
      v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1);
    }
    (*out)[static_cast<size_t>(i)] = static_cast<int16_t>(v);
  }
  data->remove_prefix(static_cast<size_t>(bytes));
  return CheckMax(*out, max_level);
}

}  // namespace

Status DecodeLevelsRle(std::string_view data, int16_t max_level, int64_t count,
                       std::vector<int16_t>* out) {
  out->resize(static_cast<size_t>(count));
  RleBpDecoder decoder(reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                       BitWidth(static_cast<uint64_t>(max_level)));
  FERRY_ASSIGN_OR_RETURN(int64_t got, decoder.GetBatch(out->data(), count));
  if (got != count) {
    return DataLoss("levels: {} expected, the page holds {}", count, got);
  }
  return CheckMax(*out, max_level);
}

Status DecodeLevelsV1(Encoding encoding, std::string_view* data, int16_t max_level, int64_t count,
                      std::vector<int16_t>* out) {
  if (encoding == Encoding::kBitPacked) {
    return DecodeBitPacked(data, max_level, count, out);
  }
  if (encoding != Encoding::kRle) {
    return NotSupported("level encoding {} ({})", EncodingName(encoding),
                        static_cast<int32_t>(encoding));
  }
  if (data->size() < 4) {
    return DataLoss("levels: the page is too short for the 4-byte length");
  }
  uint32_t len = LoadLE<uint32_t>(data->data());
  if (len > data->size() - 4) {
    return DataLoss("levels: length {} runs past the end of the page ({} bytes left)", len,
                    data->size() - 4);
  }
  FERRY_RETURN_IF_ERROR(DecodeLevelsRle(data->substr(4, len), max_level, count, out));
  data->remove_prefix(4 + static_cast<size_t>(len));
  return Status::OK();
}

}  // namespace ferry::parquet
