#include "ferry/parquet/column_chunk_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "ferry/parquet/level_decoder.h"
#include "ferry/parquet/value_conversion.h"
#include "ferry/parquet/value_decoder.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::TypeId;

// Bytes a decoded row costs in its column (validity, value or offset), for the budget. Binary
// data is charged separately once its size is known.
int64_t RowBytes(const columnar::DataType& type) {
  if (type.is_binary_like()) {
    return 1 + 8;
  }
  switch (type.id()) {
    case TypeId::kBoolean:
    case TypeId::kInt8:
    case TypeId::kUInt8:
      return 2;
    case TypeId::kInt16:
    case TypeId::kUInt16:
      return 3;
    case TypeId::kInt32:
    case TypeId::kUInt32:
    case TypeId::kFloat32:
    case TypeId::kDate:
      return 5;
    case TypeId::kDecimal:
      return 17;
    default:
      return 9;
  }
}

bool IsDictionaryEncoding(Encoding e) {
  return e == Encoding::kPlainDictionary || e == Encoding::kRleDictionary;
}

// Parses the page header at the window's position, reading more of the chunk while the header
// runs past the bytes in memory.
Result<size_t> ParseHeaderAt(ChunkWindow* window, PageHeader* header) {
  uint64_t want = window->lookahead();
  for (;;) {
    FERRY_RETURN_IF_ERROR(window->Ensure(want));
    std::string_view bytes = window->available();
    *header = PageHeader{};
    auto taken = ParsePageHeader(bytes, header);
    if (taken.ok() || bytes.size() >= window->left()) {
      return taken;
    }
    want = std::max<uint64_t>(2 * bytes.size(), window->lookahead());
  }
}

}  // namespace

bool WriterSizesChunksShort(std::string_view created_by) {
  constexpr std::string_view kApp = "parquet-mr";
  if (created_by.substr(0, kApp.size()) != kApp) {
    return false;
  }
  // "parquet-mr version 1.2.8 (build ...)"; no version counts as old.
  int major = 0;
  int minor = 0;
  int patch = 0;
  size_t at = created_by.find("version ");
  if (at != std::string_view::npos) {
    std::string version(created_by.substr(at + 8, 32));
    if (std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) < 1) {
      return true;
    }
  }
  return std::make_tuple(major, minor, patch) < std::make_tuple(1, 2, 9);
}

ColumnChunkReader::ColumnChunkReader(const RandomAccessFile* file, FileLayout layout,
                                     const LeafColumn* leaf, const ReaderOptions* options,
                                     DecodeBudget* budget, ChunkScratch* scratch)
    : file_(file),
      layout_(layout),
      leaf_(leaf),
      options_(options),
      budget_(budget),
      scratch_(scratch) {}

Status ColumnChunkReader::Read(const ColumnChunk& chunk, Column* out, LeafLevels* levels) {
  FERRY_RETURN_IF_ERROR(Begin(chunk));
  if (done()) {
    return Status::OK();
  }
  ReserveOutput(*chunk.meta_data, out);
  return ReadPagesWhile(out, levels, [] { return true; });
}

Status ColumnChunkReader::ReadRows(Column* out, int64_t rows) {
  if (leaf_->max_rep > 0) {
    return Internal("ReadRows on the repeated column {}", leaf_->dotted_path);
  }
  // No reservation for the rest of the chunk: a batch holds only part of it.
  extrapolated_ = true;
  in_parts_ = true;
  const int64_t target = out->length() + rows;
  while (out->length() < target) {
    if (part_.next < part_.positions) {
      FERRY_RETURN_IF_ERROR(AppendPart(target - out->length(), out)
                                .WithContext("page {} at offset {}", part_.index, part_.offset));
      continue;
    }
    if (values_seen_ >= chunk_values_) {
      break;
    }
    // The next data page (after a dictionary page, index pages) becomes the one in progress.
    FERRY_RETURN_IF_ERROR(
        ReadPagesWhile(out, nullptr, [&] { return part_.next == part_.positions; }));
  }
  return Status::OK();
}

Status ColumnChunkReader::Begin(const ColumnChunk& chunk) {
  window_.reset();
  dictionary_.reset();
  values_seen_ = 0;
  chunk_values_ = 0;
  extrapolated_ = false;
  page_index_ = 0;
  in_parts_ = false;
  part_ = PartPage{};
  if (chunk.file_path.has_value()) {
    return NotSupported("the column chunk is in another file ('{}')", *chunk.file_path);
  }
  if (chunk.encrypted) {
    return NotSupported("the column chunk is encrypted");
  }
  if (!chunk.meta_data.has_value()) {
    return DataLoss("the column chunk has no metadata");
  }
  const ColumnMetaData& meta = *chunk.meta_data;
  if (meta.type != leaf_->physical.type) {
    return DataLoss("the chunk's type {} differs from the schema's {}", PhysicalTypeName(meta.type),
                    PhysicalTypeName(leaf_->physical.type));
  }
  if (meta.num_values < 0) {
    return DataLoss("negative value count {}", meta.num_values);
  }
  if (meta.num_values == 0) {
    return Status::OK();
  }
  if (scratch_->codec == nullptr || scratch_->codec->codec() != meta.codec) {
    FERRY_ASSIGN_OR_RETURN(scratch_->codec, Codec::Create(meta.codec));
  }
  codec_ = scratch_->codec.get();
  // Step 1: the byte range.
  int64_t start = meta.data_page_offset;
  if (meta.dictionary_page_offset.has_value() && *meta.dictionary_page_offset > 0 &&
      *meta.dictionary_page_offset < start) {
    start = *meta.dictionary_page_offset;
  }
  int64_t size = meta.total_compressed_size;
  const uint64_t begin = layout_.data_begin;
  const uint64_t end = layout_.data_end;
  if (start < static_cast<int64_t>(begin) || size < 0 || static_cast<uint64_t>(start) > end ||
      static_cast<uint64_t>(size) > end - static_cast<uint64_t>(start)) {
    return DataLoss("the chunk's bytes [{}, +{}) lie outside the file's data [{}, {})", start, size,
                    begin, end);
  }
  if (layout_.short_chunk_sizes) {
    size +=
        static_cast<int64_t>(std::min<uint64_t>(100, end - static_cast<uint64_t>(start + size)));
  }
  window_.emplace(file_, static_cast<uint64_t>(start), static_cast<uint64_t>(start + size),
                  static_cast<uint64_t>(std::max<int64_t>(options_->min_read_size, 1)),
                  &scratch_->bytes);
  chunk_values_ = meta.num_values;
  columnar::DataTypePtr storage = StorageTypeFor(leaf_->physical);
  if (scratch_->raw == nullptr || !scratch_->raw->type()->Equals(*storage)) {
    scratch_->raw = columnar::MakeColumn(storage);
  }
  if (scratch_->converted == nullptr || !scratch_->converted->type()->Equals(*leaf_->type)) {
    scratch_->converted = columnar::MakeColumn(leaf_->type);
  }
  return Status::OK();
}

template <typename More>
Status ColumnChunkReader::ReadPagesWhile(Column* out, LeafLevels* levels, More more) {
  // Step 2: the pages.
  PageHeader header;
  while (values_seen_ < chunk_values_ && more()) {
    ChunkWindow& window = *window_;
    const int index = page_index_++;
    const uint64_t offset = window.position();
    page_offset_ = offset;
    auto context = [&] { return fmt::format("page {} at offset {}", index, offset); };
    if (window.left() == 0) {
      return DataLoss("the chunk ends after {} of its {} values", values_seen_, chunk_values_)
          .WithContext(context());
    }
    auto taken = ParseHeaderAt(&window, &header);
    if (!taken.ok()) {
      return taken.status().WithContext(context());
    }
    window.Skip(*taken);
    if (header.compressed_page_size < 0 ||
        static_cast<uint64_t>(header.compressed_page_size) > window.left()) {
      return DataLoss("page size {} runs past the end of the chunk ({} bytes left)",
                      header.compressed_page_size, window.left())
          .WithContext(context());
    }
    auto body_size = static_cast<uint64_t>(header.compressed_page_size);
    FERRY_RETURN_IF_ERROR(window.Ensure(body_size + window.lookahead()).WithContext(context()));
    Page page{index, offset, &header, window.available().substr(0, body_size)};
    window.Skip(body_size);
    FERRY_RETURN_IF_ERROR(ReadPage(page, out, levels).WithContext(context()));
  }
  if (values_seen_ > chunk_values_) {
    return DataLoss("the pages hold {} values, the column metadata {}", values_seen_,
                    chunk_values_);
  }
  return Status::OK();
}

void ColumnChunkReader::ReserveOutput(const ColumnMetaData& meta, Column* out) {
  // Every leaf slot is a level position, so num_values bounds the rows; PLAIN binary data is
  // shorter than the chunk's uncompressed pages. Both are the file's word: the budget caps what
  // is reserved on it.
  int64_t rows = meta.num_values;
  int64_t row_bytes = 0;
  if (!__builtin_mul_overflow(rows, RowBytes(*leaf_->type), &row_bytes) &&
      budget_->Reserve(row_bytes)) {
    out->Reserve(out->length() + rows);
  }
  if (!out->type()->is_binary_like()) {
    return;
  }
  auto* binary = out->As<BinaryColumn>();
  int64_t data = meta.total_uncompressed_size;
  if (data > 0 && budget_->Reserve(data)) {
    binary->ReserveData(static_cast<int64_t>(binary->data().size()) + data);
  }
}

Status ColumnChunkReader::ReadPage(const Page& page, Column* out, LeafLevels* levels) {
  const PageHeader& h = *page.header;
  if (h.uncompressed_page_size < 0 || h.uncompressed_page_size > options_->max_page_size ||
      h.compressed_page_size > options_->max_page_size) {
    return ResourceExhausted(
        "page of {} bytes ({} compressed) is larger than ReaderOptions::max_page_size ({})",
        h.uncompressed_page_size, h.compressed_page_size, options_->max_page_size);
  }
  if (options_->verify_checksums && h.crc.has_value()) {
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(page.body.data()),
                static_cast<uInt>(page.body.size()));
    if (static_cast<uint32_t>(crc) != static_cast<uint32_t>(*h.crc)) {
      return DataLoss("page CRC mismatch: stored {:08x}, computed {:08x}",
                      static_cast<uint32_t>(*h.crc), static_cast<uint32_t>(crc));
    }
  }
  switch (h.type) {
    case PageType::kDictionaryPage:
      return ReadDictionaryPage(page);
    case PageType::kDataPage:
      return ReadDataPageV1(page, out, levels);
    case PageType::kDataPageV2:
      return ReadDataPageV2(page, out, levels);
    default:  // index pages and types newer than ferry
      return Status::OK();
  }
}

Status ColumnChunkReader::Decompress(std::string_view input, int64_t size, std::string_view* out) {
  if (codec_->codec() == CompressionCodec::kUncompressed) {
    *out = input;
    return Status::OK();
  }
  // The buffer only grows, as the window's does (ChunkWindow), and is not cleared: every byte is
  // written.
  ByteBuffer& buffer = scratch_->decompressed;
  auto n = static_cast<size_t>(size);
  if (buffer.size() < n || buffer.data() == nullptr) {
    FERRY_RETURN_IF_ERROR(buffer.Allocate(std::max(n + n / 4, buffer.size() * 3 / 2)));
  }
  FERRY_RETURN_IF_ERROR(codec_->Decompress(input, reinterpret_cast<uint8_t*>(buffer.data()), n));
  *out = buffer.view().substr(0, n);
  return Status::OK();
}

Status ColumnChunkReader::ReadDictionaryPage(const Page& page) {
  const PageHeader& h = *page.header;
  if (!h.dictionary_page_header.has_value()) {
    return DataLoss("dictionary page without a dictionary_page_header");
  }
  if (dictionary_ != nullptr || values_seen_ > 0) {
    return DataLoss("a second dictionary page, or one after the data pages");
  }
  const DictionaryPageHeader& dh = *h.dictionary_page_header;
  if (dh.encoding != Encoding::kPlain && dh.encoding != Encoding::kPlainDictionary) {
    return NotSupported("dictionary page encoding {}", EncodingName(dh.encoding));
  }
  if (dh.num_values < 0) {
    return DataLoss("dictionary of {} values", dh.num_values);
  }
  FERRY_RETURN_IF_ERROR(budget_->Charge(dh.num_values * RowBytes(*leaf_->type)));
  std::string_view body;
  FERRY_RETURN_IF_ERROR(Decompress(page.body, h.uncompressed_page_size, &body));
  auto raw = columnar::MakeColumn(StorageTypeFor(leaf_->physical));
  FERRY_RETURN_IF_ERROR(
      DecodePlain(leaf_->physical, body, dh.num_values, raw.get()).WithContext("dictionary"));
  if (leaf_->conversion == ValueConversion::kNone) {
    dictionary_ = std::move(raw);
    return Status::OK();
  }
  dictionary_ = columnar::MakeColumn(leaf_->type);
  return ConvertValues(leaf_->conversion, *raw, dictionary_.get()).WithContext("dictionary");
}

Status ColumnChunkReader::ReadDataPageV1(const Page& page, Column* out, LeafLevels* levels) {
  const PageHeader& h = *page.header;
  if (!h.data_page_header.has_value()) {
    return DataLoss("data page without a data_page_header");
  }
  const DataPageHeader& dh = *h.data_page_header;
  if (dh.num_values < 0) {
    return DataLoss("data page of {} values", dh.num_values);
  }
  std::string_view body;
  FERRY_RETURN_IF_ERROR(Decompress(page.body, h.uncompressed_page_size, &body));
  FERRY_RETURN_IF_ERROR(budget_->Charge(int64_t{dh.num_values} * 4));
  if (leaf_->max_rep > 0) {
    FERRY_RETURN_IF_ERROR(DecodeLevelsV1(dh.repetition_level_encoding, &body, leaf_->max_rep,
                                         dh.num_values, &scratch_->rep)
                              .WithContext("repetition levels"));
  }
  if (leaf_->max_def > 0) {
    FERRY_RETURN_IF_ERROR(DecodeLevelsV1(dh.definition_level_encoding, &body, leaf_->max_def,
                                         dh.num_values, &scratch_->def)
                              .WithContext("definition levels"));
  }
  return DecodeDataPage(dh.num_values, dh.encoding, body, out, levels);
}

Status ColumnChunkReader::ReadDataPageV2(const Page& page, Column* out, LeafLevels* levels) {
  const PageHeader& h = *page.header;
  if (!h.data_page_header_v2.has_value()) {
    return DataLoss("data page v2 without a data_page_header_v2");
  }
  const DataPageHeaderV2& dh = *h.data_page_header_v2;
  int64_t rep_len = dh.repetition_levels_byte_length;
  int64_t def_len = dh.definition_levels_byte_length;
  if (dh.num_values < 0 || rep_len < 0 || def_len < 0 ||
      rep_len + def_len > static_cast<int64_t>(page.body.size()) ||
      rep_len + def_len > h.uncompressed_page_size) {
    return DataLoss("data page v2 with {} values, level lengths {} and {} in a page of {} bytes",
                    dh.num_values, rep_len, def_len, page.body.size());
  }
  FERRY_RETURN_IF_ERROR(budget_->Charge(int64_t{dh.num_values} * 4));
  std::string_view rep_bytes = page.body.substr(0, static_cast<size_t>(rep_len));
  std::string_view def_bytes =
      page.body.substr(static_cast<size_t>(rep_len), static_cast<size_t>(def_len));
  if (leaf_->max_rep > 0) {
    FERRY_RETURN_IF_ERROR(DecodeLevelsRle(rep_bytes, leaf_->max_rep, dh.num_values, &scratch_->rep)
                              .WithContext("repetition levels"));
  }
  if (leaf_->max_def > 0) {
    FERRY_RETURN_IF_ERROR(DecodeLevelsRle(def_bytes, leaf_->max_def, dh.num_values, &scratch_->def)
                              .WithContext("definition levels"));
  }
  std::string_view stored = page.body.substr(static_cast<size_t>(rep_len + def_len));
  std::string_view values = stored;
  // An empty section is not a valid stream for most codecs: nothing was compressed.
  if (dh.is_compressed.value_or(true) && !stored.empty()) {
    FERRY_RETURN_IF_ERROR(
        Decompress(stored, h.uncompressed_page_size - rep_len - def_len, &values));
  }
  return DecodeDataPage(dh.num_values, dh.encoding, values, out, levels);
}

Status ColumnChunkReader::DecodeDataPage(int64_t num_values, Encoding encoding,
                                         std::string_view values, Column* out, LeafLevels* levels) {
  values_seen_ += num_values;
  int64_t non_null = num_values;
  if (leaf_->max_def > 0) {
    const int16_t* def = scratch_->def.data();
    non_null = std::count(def, def + num_values, leaf_->max_def);
  }
  FERRY_RETURN_IF_ERROR(BeginPart(num_values, non_null, encoding, values));
  if (in_parts_) {
    return Status::OK();  // ReadRows takes the page's rows a batch at a time
  }
  if (levels != nullptr) {
    FERRY_RETURN_IF_ERROR(budget_->Charge(num_values * 4));
    if (leaf_->max_def > 0) {
      levels->def.insert(levels->def.end(), scratch_->def.begin(),
                         scratch_->def.begin() + num_values);
    }
    if (leaf_->max_rep > 0) {
      levels->rep.insert(levels->rep.end(), scratch_->rep.begin(),
                         scratch_->rep.begin() + num_values);
    }
    levels->size += num_values;
  }
  // Read: the whole page is one part.
  return AppendPart(num_values, out);
}

Status ColumnChunkReader::BeginPart(int64_t num_values, int64_t non_null, Encoding encoding,
                                    std::string_view values) {
  PartPage part;
  part.index = page_index_ - 1;
  part.offset = page_offset_;
  part.all_valid = non_null == num_values;
  part.non_null = non_null;
  if (IsDictionaryEncoding(encoding)) {
    if (dictionary_ == nullptr) {
      return DataLoss("dictionary-encoded page, but the chunk has no dictionary page");
    }
    FERRY_RETURN_IF_ERROR(
        DecodeDictionaryIndices(values, non_null, dictionary_->length(), &scratch_->indices));
    part.kind = PartPage::Values::kIndices;
  } else if (encoding == Encoding::kPlain && leaf_->physical.type != PhysicalType::kBoolean) {
    part.kind = PartPage::Values::kPlain;
    part.encoded = values;
  } else {
    part.kind = PartPage::Values::kEncoded;
    part.encoding = encoding;
    part.encoded = values;
  }
  part.positions = num_values;
  part_ = part;
  return Status::OK();
}

Status ColumnChunkReader::AppendPart(int64_t rows, Column* out) {
  const int64_t take = std::min(rows, part_.positions - part_.next);
  int64_t values = take;
  std::span<const int16_t> def;
  if (!part_.all_valid) {
    def = std::span<const int16_t>(scratch_->def.data() + part_.next, static_cast<size_t>(take));
    // The whole page (Read): BeginPart counted its values.
    values = take == part_.positions ? part_.non_null
                                     : std::count(def.begin(), def.end(), leaf_->max_def);
  }
  // Every position of this part a value: AppendLeafSlots takes that as an empty def.
  std::span<const int16_t> slot_levels = values == take ? std::span<const int16_t>() : def;
  const bool binary = out->type()->is_binary_like();
  FERRY_RETURN_IF_ERROR(budget_->Charge(take * RowBytes(*leaf_->type)));
  if (part_.kind == PartPage::Values::kEncoded) {
    if (take == part_.positions && part_.all_valid && leaf_->conversion == ValueConversion::kNone) {
      // The whole page, every position a value (each def is max_def, so each is also a slot):
      // decode straight into the column, with no copy through a page-sized column.
      const int64_t before = out->ByteSize();
      FERRY_RETURN_IF_ERROR(DecodeValues(part_.encoding, leaf_->physical, part_.encoded, values,
                                         options_->max_page_size, out));
      if (binary) {
        FERRY_RETURN_IF_ERROR(
            budget_->Charge(out->ByteSize() - before - values * RowBytes(*leaf_->type)));
      }
      part_.next += take;
      part_.next_value += values;
      return Status::OK();
    }
    // Taken in parts: the page's values decoded whole, once.
    FERRY_RETURN_IF_ERROR(
        DecodeDenseValues(part_.non_null, part_.encoding, part_.encoded, &part_.dense));
    part_.kind = PartPage::Values::kDense;
  }
  switch (part_.kind) {
    case PartPage::Values::kIndices: {
      const uint32_t* indices = scratch_->indices.data() + part_.next_value;
      if (binary) {
        const int64_t bytes = IndexedBytes(indices, values);
        FERRY_RETURN_IF_ERROR(budget_->Charge(bytes));
        auto* col = out->As<BinaryColumn>();
        col->ReserveData(static_cast<int64_t>(col->data().size()) + bytes +
                         ExtrapolatedBytes(bytes, take));
      }
      AppendLeafSlots(slot_levels, take, leaf_->slot_def, leaf_->max_def, *dictionary_, indices,
                      out);
      break;
    }
    case PartPage::Values::kPlain: {
      if (values == take && leaf_->conversion == ValueConversion::kNone) {
        // Straight into the column.
        const int64_t before = out->ByteSize();
        FERRY_RETURN_IF_ERROR(DecodePlainPrefix(leaf_->physical, &part_.encoded, values, out));
        if (binary) {
          FERRY_RETURN_IF_ERROR(
              budget_->Charge(out->ByteSize() - before - values * RowBytes(*leaf_->type)));
        }
        break;
      }
      scratch_->raw->Clear();
      FERRY_RETURN_IF_ERROR(
          DecodePlainPrefix(leaf_->physical, &part_.encoded, values, scratch_->raw.get()));
      const Column* dense = nullptr;
      FERRY_RETURN_IF_ERROR(ConvertRaw(&dense));
      AppendLeafSlots(slot_levels, take, leaf_->slot_def, leaf_->max_def, *dense, nullptr, out);
      break;
    }
    case PartPage::Values::kEncoded:  // decoded above
    case PartPage::Values::kDense:
      AppendLeafSlots(slot_levels, take, leaf_->slot_def, leaf_->max_def, *part_.dense, nullptr,
                      out, part_.next_value);
      break;
  }
  part_.next += take;
  part_.next_value += values;
  return Status::OK();
}

int64_t ColumnChunkReader::IndexedBytes(const uint32_t* indices, int64_t n) const {
  const auto& dict = *dictionary_->As<BinaryColumn>();
  int64_t bytes = 0;
  for (int64_t k = 0; k < n; k++) {
    bytes += dict.offsets()[indices[k] + 1] - dict.offsets()[indices[k]];
  }
  return bytes;
}

int64_t ColumnChunkReader::ExtrapolatedBytes(int64_t page_bytes, int64_t page_values) {
  if (extrapolated_ || page_values <= 0) {
    return 0;
  }
  extrapolated_ = true;
  int64_t rest = chunk_values_ - values_seen_;
  int64_t total = 0;
  if (rest <= 0 || __builtin_mul_overflow(page_bytes, rest, &total)) {
    return 0;
  }
  total /= page_values;
  return budget_->Reserve(total) ? total : 0;
}

Status ColumnChunkReader::DecodeDenseValues(int64_t count, Encoding encoding,
                                            std::string_view values, const Column** dense) {
  scratch_->raw->Clear();
  FERRY_RETURN_IF_ERROR(DecodeValues(encoding, leaf_->physical, values, count,
                                     options_->max_page_size, scratch_->raw.get()));
  return ConvertRaw(dense);
}

Status ColumnChunkReader::ConvertRaw(const Column** dense) {
  if (scratch_->raw->type()->is_binary_like()) {
    FERRY_RETURN_IF_ERROR(
        budget_->Charge(static_cast<int64_t>(scratch_->raw->As<BinaryColumn>()->data().size())));
  }
  if (leaf_->conversion == ValueConversion::kNone) {
    *dense = scratch_->raw.get();
    return Status::OK();
  }
  scratch_->converted->Clear();
  FERRY_RETURN_IF_ERROR(
      ConvertValues(leaf_->conversion, *scratch_->raw, scratch_->converted.get()));
  *dense = scratch_->converted.get();
  return Status::OK();
}

}  // namespace ferry::parquet
