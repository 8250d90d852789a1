#include "ferry/parquet/column_writer.h"

#include <algorithm>
#include <set>

#include "ferry/base/endian.h"
#include "ferry/parquet/rle.h"

namespace ferry::parquet {

Result<std::unique_ptr<ColumnWriter>> ColumnWriter::Create(
    const ColumnDescriptor& column, columnar::DataTypePtr type, bool repeated,
    const ColumnWriterOptions& options, Codec* codec, CompressionPool* pool, PageArena* arena) {
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<internal::ValueWriter> values,
                         internal::MakeValueWriter(column, *type, options.values));
  return std::unique_ptr<ColumnWriter>(
      new ColumnWriter(column, std::move(type), repeated, options, codec,
                       codec->codec() == CompressionCodec::kUncompressed ? nullptr : pool, arena,
                       std::move(values)));
}

ColumnWriter::ColumnWriter(const ColumnDescriptor& column, columnar::DataTypePtr type,
                           bool repeated, const ColumnWriterOptions& options, Codec* codec,
                           CompressionPool* pool, PageArena* arena,
                           std::unique_ptr<internal::ValueWriter> values)
    : column_(column),
      type_(std::move(type)),
      repeated_(repeated),
      options_(options),
      codec_(codec),
      pool_(pool),
      arena_(pool == nullptr ? arena : nullptr),
      values_(std::move(values)) {}

int64_t ColumnWriter::PageBytesEstimate() const {
  int level_bits = BitWidth(static_cast<uint64_t>(column_.max_definition_level)) +
                   BitWidth(static_cast<uint64_t>(column_.max_repetition_level));
  return values_->PageBytes() + page_levels_ * level_bits / 8;
}

Status ColumnWriter::Write(const ShreddedLeaf& slice) {
  if (slice.num_levels == 0) {
    return Status::OK();
  }
  if (page_rows_ > 0) {
    // Cut before this slice if it would take the page past a limit.
    int64_t bytes = PageBytesEstimate();
    int64_t predicted = bytes + bytes / page_rows_ * slice.num_rows;
    if (page_rows_ + slice.num_rows > options_.page_max_rows ||
        predicted > options_.page_max_bytes) {
      FERRY_RETURN_IF_ERROR(FlushPage());
    }
  }
  if (column_.max_definition_level > 0) {
    page_def_.insert(page_def_.end(), slice.def_levels.begin(), slice.def_levels.end());
  }
  if (column_.max_repetition_level > 0) {
    page_rep_.insert(page_rep_.end(), slice.rep_levels.begin(), slice.rep_levels.end());
  }
  int64_t before = PageBytesEstimate();
  page_levels_ += slice.num_levels;
  page_values_ += slice.num_values;
  page_rows_ += slice.num_rows;
  FERRY_RETURN_IF_ERROR(values_->Append(slice));
  written_bytes_ += PageBytesEstimate() - before;
  written_rows_ += slice.num_rows;
  if (values_->DictionaryFull()) {
    // The page so far is dictionary-encoded; the rest of the chunk is PLAIN.
    FERRY_RETURN_IF_ERROR(FlushPage());
    values_->FallBackToPlain();
  } else if (PageBytesEstimate() >= options_.page_max_bytes) {
    FERRY_RETURN_IF_ERROR(FlushPage());
  }
  return Status::OK();
}

bool ColumnWriter::FellBackToPlain() const {
  return values_->FellBackToPlain();
}

int64_t ColumnWriter::EstimatedChunkBytes() const {
  return chunk_pages_bytes_ + PageBytesEstimate() + values_->DictionaryBytes();
}

void ColumnWriter::AppendLevels(const std::vector<int16_t>& levels, int16_t max_level,
                                bool length_prefix, std::string* out) {
  size_t start = out->size();
  if (length_prefix) {
    out->append(4, '\0');
  }
  RleBpEncode(levels.data(), levels.size(), BitWidth(static_cast<uint64_t>(max_level)), out);
  if (length_prefix) {
    StoreLE(out->data() + start, static_cast<uint32_t>(out->size() - start - 4));
  }
}

Status ColumnWriter::CompressPage(Codec* codec, PageArena* arena, PageHeader header,
                                  std::string_view input, ChunkPage* page) {
  size_t bound = arena == nullptr ? 0 : codec->MaxCompressedSize(input.size());
  char* room = bound == 0 ? nullptr : arena->Reserve(bound);
  if (room != nullptr) {
    FERRY_ASSIGN_OR_RETURN(size_t n, codec->CompressInto(input, room, bound));
    arena->Commit(n);
    page->data = std::string_view(room, n);
  } else {
    FERRY_RETURN_IF_ERROR(codec->CompressToBuffer(input, &page->owned));
    page->data = page->owned.view();
  }
  header.compressed_page_size = static_cast<int32_t>(page->prefix.size() + page->data.size());
  SerializePageHeader(header, &page->header);
  return Status::OK();
}

Status ColumnWriter::AddPage(PageHeader header, std::string_view prefix,
                             internal::PageBuffer* input) {
  auto& page = chunk_pages_.emplace_back(std::make_unique<ChunkPage>());
  page->uncompressed_size = header.uncompressed_page_size;
  page->prefix.assign(prefix);
  ChunkPage* p = page.get();
  if (pool_ == nullptr) {
    FERRY_RETURN_IF_ERROR(CompressPage(codec_, arena_, std::move(header), input->view(), p));
    chunk_pages_bytes_ += p->size();
    return Status::OK();
  }
  // Counted at its uncompressed size (plus a header's) until the job has compressed it.
  const auto estimate = static_cast<int64_t>(prefix.size() + input->size()) + 64;
  chunk_pages_bytes_ += estimate;
  p->compressed = pool_->Submit([this, p, estimate, header = std::move(header),
                                 owned = std::move(*input)](Codec* codec) mutable {
    FERRY_RETURN_IF_ERROR(CompressPage(codec, nullptr, std::move(header), owned.view(), p));
    chunk_pages_bytes_ += p->size() - estimate;
    return Status::OK();
  });
  input->Clear();
  return Status::OK();
}

Status ColumnWriter::FlushPage() {
  if (page_levels_ == 0) {
    return Status::OK();
  }
  if (page_levels_ > INT32_MAX) {
    return InvalidArgument("column '{}': page of {} values", column_.PathString(), page_levels_);
  }
  Statistics stats;
  stats.null_count = page_levels_ - page_values_;
  PageHeader header;
  body_.Clear();
  Encoding encoding;
  if (!options_.data_page_v2) {
    if (column_.max_repetition_level > 0) {
      AppendLevels(page_rep_, column_.max_repetition_level, true, &body_.bytes);
    }
    if (column_.max_definition_level > 0) {
      AppendLevels(page_def_, column_.max_definition_level, true, &body_.bytes);
    }
    encoding = values_->FinishPage(&body_, &stats);
    header.type = PageType::kDataPage;
    header.uncompressed_page_size = static_cast<int32_t>(body_.size());
    DataPageHeader& d = header.data_page_header.emplace();
    d.num_values = static_cast<int32_t>(page_levels_);
    d.encoding = encoding;
    d.definition_level_encoding = Encoding::kRle;
    d.repetition_level_encoding = Encoding::kRle;
    d.statistics = std::move(stats);
    FERRY_RETURN_IF_ERROR(AddPage(std::move(header), {}, &body_));
  } else {
    if (column_.max_repetition_level > 0) {
      AppendLevels(page_rep_, column_.max_repetition_level, false, &body_.bytes);
    }
    size_t rep_bytes = body_.size();
    if (column_.max_definition_level > 0) {
      AppendLevels(page_def_, column_.max_definition_level, false, &body_.bytes);
    }
    size_t level_bytes = body_.size();
    values_buffer_.Clear();
    encoding = values_->FinishPage(&values_buffer_, &stats);
    header.type = PageType::kDataPageV2;
    header.uncompressed_page_size = static_cast<int32_t>(level_bytes + values_buffer_.size());
    DataPageHeaderV2& d = header.data_page_header_v2.emplace();
    d.num_values = static_cast<int32_t>(page_levels_);
    d.num_nulls = static_cast<int32_t>(page_levels_ - page_values_);
    d.num_rows = static_cast<int32_t>(page_rows_);
    d.encoding = encoding;
    d.definition_levels_byte_length = static_cast<int32_t>(level_bytes - rep_bytes);
    d.repetition_levels_byte_length = static_cast<int32_t>(rep_bytes);
    d.is_compressed = codec_->codec() != CompressionCodec::kUncompressed;
    d.statistics = std::move(stats);
    // The levels (body_) are never compressed; the values are.
    FERRY_RETURN_IF_ERROR(AddPage(std::move(header), body_.view(), &values_buffer_));
  }
  ++chunk_page_encodings_[{options_.data_page_v2 ? PageType::kDataPageV2 : PageType::kDataPage,
                           encoding}];
  chunk_levels_ += page_levels_;
  chunk_nulls_ += page_levels_ - page_values_;
  page_def_.clear();
  page_rep_.clear();
  page_levels_ = page_values_ = page_rows_ = 0;
  return Status::OK();
}

Status ColumnWriter::FlushChunk(OutputStream* sink, ColumnChunk* chunk) {
  FERRY_RETURN_IF_ERROR(FlushPage());
  ColumnMetaData md;
  md.type = column_.physical_type;
  md.path_in_schema = column_.path;
  md.codec = codec_->codec();
  md.num_values = chunk_levels_;
  auto start = static_cast<int64_t>(sink->Tell());
  // Every pool job of the chunk is waited for, even after an error: they write into the pages.
  Status compressed;
  for (const auto& page : chunk_pages_) {
    if (page->compressed.valid()) {
      Status s = page->compressed.get();
      if (compressed.ok() && !s.ok()) {
        compressed = std::move(s);
      }
    }
  }
  FERRY_RETURN_IF_ERROR(compressed);
  int64_t uncompressed = 0;  // headers + uncompressed page bytes
  for (const auto& page : chunk_pages_) {
    uncompressed += static_cast<int64_t>(page->header.size()) + page->uncompressed_size;
  }
  body_.Clear();
  std::optional<int32_t> dict_entries = values_->FinishDictionary(&body_.bytes);
  if (dict_entries) {
    PageHeader header;
    header.type = PageType::kDictionaryPage;
    header.uncompressed_page_size = static_cast<int32_t>(body_.size());
    header.dictionary_page_header = DictionaryPageHeader{*dict_entries, Encoding::kPlain, {}};
    ChunkPage dictionary;
    FERRY_RETURN_IF_ERROR(
        CompressPage(codec_, nullptr, std::move(header), body_.view(), &dictionary));
    FERRY_RETURN_IF_ERROR(sink->Append(dictionary.header));
    FERRY_RETURN_IF_ERROR(sink->Append(dictionary.data));
    uncompressed += static_cast<int64_t>(dictionary.header.size() + body_.size());
    md.dictionary_page_offset = start;
    chunk_page_encodings_[{PageType::kDictionaryPage, Encoding::kPlain}] += 1;
  }
  md.data_page_offset = static_cast<int64_t>(sink->Tell());
  for (const auto& page : chunk_pages_) {
    FERRY_RETURN_IF_ERROR(sink->Append(page->header));
    if (!page->prefix.empty()) {
      FERRY_RETURN_IF_ERROR(sink->Append(page->prefix));
    }
    FERRY_RETURN_IF_ERROR(sink->Append(page->data));
  }
  md.total_compressed_size = static_cast<int64_t>(sink->Tell()) - start;
  md.total_uncompressed_size = uncompressed;

  std::set<Encoding> encodings;
  if (column_.max_definition_level > 0 || column_.max_repetition_level > 0) {
    encodings.insert(Encoding::kRle);
  }
  md.encoding_stats.emplace();
  for (const auto& [key, count] : chunk_page_encodings_) {
    encodings.insert(key.second);
    md.encoding_stats->push_back(PageEncodingStats{key.first, key.second, count});
  }
  md.encodings.assign(encodings.begin(), encodings.end());
  Statistics stats;
  stats.null_count = chunk_nulls_;
  values_->FinishChunk(&stats);
  md.statistics = std::move(stats);

  *chunk = ColumnChunk();
  chunk->file_offset = 0;
  chunk->meta_data = std::move(md);

  file_levels_ += chunk_levels_;
  file_nulls_ += chunk_nulls_;
  chunk_pages_.clear();
  chunk_pages_bytes_ = 0;
  chunk_levels_ = chunk_nulls_ = 0;
  chunk_page_encodings_.clear();
  return Status::OK();
}

ColumnStatistics ColumnWriter::FileStatistics(bool whole_bounds) const {
  ColumnStatistics s;
  s.path = column_.path;
  s.type = type_;
  s.repeated = repeated_;
  s.num_values = file_levels_;
  s.null_count = file_nulls_;
  values_->FileMinMax(&s.min, &s.max, whole_bounds);
  return s;
}

}  // namespace ferry::parquet
