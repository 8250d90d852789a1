// Test-only: decodes the column chunks ferry's writer produces (PLAIN and RLE_DICTIONARY values,
// RLE levels, v1 and v2 pages, any codec) into levels and raw PLAIN value bytes, so the writer's
// unit tests can check what it wrote without the reader. Fails the current test on anything
// unexpected. Not a general reader: the real one is parquet/reader.h. Also the writing helpers
// those tests share (WriteFile, WriteToString, Bytes).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/endian.h"
#include "ferry/base/io.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/parquet/column_descriptor.h"
#include "ferry/parquet/compression.h"
#include "ferry/parquet/metadata.h"
#include "ferry/parquet/rle.h"
#include "ferry/parquet/writer.h"

namespace ferry::parquet::testing {

struct DecodedChunk {
  std::vector<int16_t> def;
  std::vector<int16_t> rep;
  std::vector<std::string> values;  // PLAIN bytes of each value; BYTE_ARRAY without its length
  std::vector<PageHeader> pages;    // data and dictionary page headers, in file order
};

// A StringOutputStream whose buffer survives the writer.
class SharedStringStream final : public OutputStream {
 public:
  explicit SharedStringStream(std::string* out) : out_(out) {}
  Status Append(std::string_view d) override {
    out_->append(d);
    return Status::OK();
  }
  uint64_t Tell() const override { return out_->size(); }
  Status Close() override {
    closed = true;
    return Status::OK();
  }
  const std::string& name() const override { return name_; }
  bool closed = false;

 private:
  std::string* out_;
  std::string name_ = "test.parquet";
};

inline std::string WriteFile(const columnar::RecordBatch& batch, WriterOptions options,
                             std::vector<ColumnStatistics>* stats = nullptr) {
  std::string out;
  auto w = FileWriter::Open(std::make_unique<SharedStringStream>(&out), batch.schema_ptr(),
                            std::move(options));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  Status s = (*w)->Write(batch);
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = (*w)->Close();
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (stats != nullptr) {
    *stats = (*w)->column_statistics();
  }
  return out;
}

// The little-endian bytes of a value, as PLAIN and the statistics store it.
template <typename T>
std::string Bytes(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(T));
}

// `batch` written as one Parquet file in memory; fails the current test on an error.
inline std::string WriteToString(const columnar::RecordBatch& batch, const WriterOptions& options) {
  auto sink = std::make_unique<StringOutputStream>("test.parquet");
  StringOutputStream* out = sink.get();
  auto writer = FileWriter::Open(std::move(sink), batch.schema_ptr(), options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  if (!writer.ok()) {
    return "";
  }
  EXPECT_TRUE((*writer)->Write(batch).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return out->buffer();
}

inline FileMetaData ReadFooter(std::string_view file) {
  EXPECT_GE(file.size(), 12u);
  EXPECT_EQ(file.substr(0, 4), kParquetMagic);
  EXPECT_EQ(file.substr(file.size() - 4), kParquetMagic);
  uint32_t len = LoadLE<uint32_t>(file.data() + file.size() - 8);
  Result<FileMetaData> md = ParseFileMetaData(file.substr(file.size() - 8 - len, len));
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return md.ok() ? *md : FileMetaData();
}

inline std::vector<int16_t> DecodeLevels(std::string_view bytes, int16_t max_level, size_t n) {
  std::vector<int16_t> out(n);
  RleBpDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                 BitWidth(static_cast<uint64_t>(max_level)));
  Result<int64_t> got = d.GetBatch(out.data(), static_cast<int64_t>(n));
  EXPECT_TRUE(got.ok() && *got == static_cast<int64_t>(n));
  return out;
}

// Splits `n` PLAIN values off the front of `data`.
inline std::vector<std::string> PlainValues(std::string_view data, const ColumnDescriptor& c,
                                            size_t n) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    switch (c.physical_type) {
      case PhysicalType::kBoolean:
        out.emplace_back(1, static_cast<char>((data[i / 8] >> (i % 8)) & 1));
        break;
      case PhysicalType::kInt32:
      case PhysicalType::kFloat:
        out.emplace_back(data.substr(pos, 4));
        pos += 4;
        break;
      case PhysicalType::kInt64:
      case PhysicalType::kDouble:
        out.emplace_back(data.substr(pos, 8));
        pos += 8;
        break;
      case PhysicalType::kByteArray: {
        uint32_t len = LoadLE<uint32_t>(data.data() + pos);
        out.emplace_back(data.substr(pos + 4, len));
        pos += 4 + len;
        break;
      }
      case PhysicalType::kFixedLenByteArray:
        out.emplace_back(data.substr(pos, static_cast<size_t>(c.type_length)));
        pos += static_cast<size_t>(c.type_length);
        break;
      default:
        ADD_FAILURE() << "unexpected physical type";
        return out;
    }
  }
  size_t used = c.physical_type == PhysicalType::kBoolean ? (n + 7) / 8 : pos;
  EXPECT_EQ(used, data.size()) << "trailing bytes after the PLAIN values";
  return out;
}

inline void DecodeValues(std::string_view data, Encoding encoding, const ColumnDescriptor& c,
                         size_t n, const std::vector<std::string>& dict,
                         std::vector<std::string>* out) {
  if (encoding == Encoding::kPlain) {
    for (std::string& v : PlainValues(data, c, n)) {
      out->push_back(std::move(v));
    }
    return;
  }
  ASSERT_EQ(encoding, Encoding::kRleDictionary);
  ASSERT_FALSE(data.empty());
  int bw = static_cast<uint8_t>(data[0]);
  std::vector<uint32_t> idx(n);
  RleBpDecoder d(reinterpret_cast<const uint8_t*>(data.data()) + 1, data.size() - 1, bw);
  Result<int64_t> got = d.GetBatch(idx.data(), static_cast<int64_t>(n));
  ASSERT_TRUE(got.ok() && *got == static_cast<int64_t>(n));
  for (uint32_t i : idx) {
    ASSERT_LT(i, dict.size());
    out->push_back(dict[i]);
  }
}

inline size_t CountDefined(const std::vector<int16_t>& def, size_t from, int16_t max_def,
                           size_t n) {
  if (max_def == 0) {
    return n;
  }
  size_t k = 0;
  for (size_t i = from; i < from + n; ++i) {
    k += def[i] == max_def ? 1 : 0;
  }
  return k;
}

inline DecodedChunk DecodeChunk(std::string_view file, const ColumnChunk& cc,
                                const ColumnDescriptor& c) {
  DecodedChunk out;
  const ColumnMetaData& md = *cc.meta_data;
  auto codec = Codec::Create(md.codec);
  EXPECT_TRUE(codec.ok());
  auto pos = static_cast<size_t>(md.dictionary_page_offset.value_or(md.data_page_offset));
  size_t end = pos + static_cast<size_t>(md.total_compressed_size);
  std::vector<std::string> dict;
  std::string buf;
  while (pos < end) {
    PageHeader h;
    Result<size_t> hn = ParsePageHeader(file.substr(pos), &h);
    EXPECT_TRUE(hn.ok());
    if (!hn.ok()) {
      return out;
    }
    pos += *hn;
    std::string_view data = file.substr(pos, static_cast<size_t>(h.compressed_page_size));
    pos += data.size();
    out.pages.push_back(h);
    auto usize = static_cast<size_t>(h.uncompressed_page_size);
    if (h.type == PageType::kDictionaryPage) {
      EXPECT_TRUE((*codec)->Decompress(data, usize, &buf).ok());
      dict = PlainValues(buf, c, static_cast<size_t>(h.dictionary_page_header->num_values));
    } else if (h.type == PageType::kDataPage) {
      EXPECT_TRUE((*codec)->Decompress(data, usize, &buf).ok());
      auto n = static_cast<size_t>(h.data_page_header->num_values);
      std::string_view rest = buf;
      size_t first = out.def.size();
      for (int which = 0; which < 2; ++which) {
        int16_t max = which == 0 ? c.max_repetition_level : c.max_definition_level;
        if (max == 0) {
          continue;
        }
        uint32_t len = LoadLE<uint32_t>(rest.data());
        std::vector<int16_t> levels = DecodeLevels(rest.substr(4, len), max, n);
        auto& dst = which == 0 ? out.rep : out.def;
        dst.insert(dst.end(), levels.begin(), levels.end());
        rest.remove_prefix(4 + len);
      }
      size_t defined = CountDefined(out.def, first, c.max_definition_level, n);
      DecodeValues(rest, h.data_page_header->encoding, c, defined, dict, &out.values);
    } else {
      EXPECT_EQ(h.type, PageType::kDataPageV2);
      const DataPageHeaderV2& v2 = *h.data_page_header_v2;
      auto n = static_cast<size_t>(v2.num_values);
      auto rl = static_cast<size_t>(v2.repetition_levels_byte_length);
      auto dl = static_cast<size_t>(v2.definition_levels_byte_length);
      size_t first = out.def.size();
      if (c.max_repetition_level > 0) {
        std::vector<int16_t> l = DecodeLevels(data.substr(0, rl), c.max_repetition_level, n);
        out.rep.insert(out.rep.end(), l.begin(), l.end());
      }
      if (c.max_definition_level > 0) {
        std::vector<int16_t> l = DecodeLevels(data.substr(rl, dl), c.max_definition_level, n);
        out.def.insert(out.def.end(), l.begin(), l.end());
      }
      std::string_view values = data.substr(rl + dl);
      if (v2.is_compressed.value_or(true)) {
        EXPECT_TRUE((*codec)->Decompress(values, usize - rl - dl, &buf).ok());
        values = buf;
      }
      size_t defined = CountDefined(out.def, first, c.max_definition_level, n);
      EXPECT_EQ(n - defined, static_cast<size_t>(v2.num_nulls));
      DecodeValues(values, v2.encoding, c, defined, dict, &out.values);
    }
  }
  EXPECT_EQ(pos, end);
  return out;
}

}  // namespace ferry::parquet::testing
