// Value writers for BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY (column_writer_internal.h): strings,
// JSON, binary, fixed-width binary, and decimals wider than 18 digits (big-endian two's
// complement of the column's type_length).
#include <xxhash.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "ferry/base/bytes.h"
#include "ferry/base/endian.h"
#include "ferry/parquet/column_writer_internal.h"
#include "ferry/parquet/rle.h"

namespace ferry::parquet::internal {
namespace {

using columnar::BinaryColumn;
using columnar::DecimalColumn;
using columnar::Int128;

// a == b, inline: dictionary values are mostly a few bytes long, where a call to memcmp costs
// more than the comparison.
bool BytesEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    if (LoadLE<uint64_t>(a.data() + i) != LoadLE<uint64_t>(b.data() + i)) {
      return false;
    }
  }
  for (; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      return false;
    }
  }
  return true;
}

// Dictionary of byte strings: entries are appended to one buffer; the hash table's slots hold
// each entry's hash, index, offset and size, so that a lookup reads its slot and the entry's
// bytes and nothing else.
class BinaryDictionary {
 public:
  BinaryDictionary() { Reset(); }

  static uint64_t Hash(std::string_view v) { return XXH3_64bits(v.data(), v.size()); }
  // Hints that the value of this hash is looked up soon: with thousands of entries the table and
  // the entries are past the L2 cache, and each lookup would otherwise wait for both. The slot
  // is prefetched first; a few values later, the entry it points at (a hint only: the slot may
  // belong to another value or be filled by then).
  void PrefetchSlot(uint64_t hash) const {
    __builtin_prefetch(&slots_[static_cast<size_t>(hash) & mask_]);
  }
  void PrefetchEntry(uint64_t hash) const {
    const Slot& s = slots_[static_cast<size_t>(hash) & mask_];
    if (s.index_plus_one != 0) {
      __builtin_prefetch(data_.data() + s.offset);
    }
  }
  // Returns the index of v, inserted if new. Sets *first when no lookup before this one passed
  // the same `mark` for v (the writer passes its page number: min/max once per value and page).
  // REQUIRES: hash == Hash(v); mark > 0.
  uint32_t GetOrInsert(std::string_view v, uint64_t hash, uint64_t mark, bool* first) {
    size_t h = static_cast<size_t>(hash) & mask_;
    while (true) {
      Slot& s = slots_[h];
      if (s.index_plus_one == 0) {
        auto index = static_cast<uint32_t>(offsets_.size() - 1);
        s.hash = hash;
        s.index_plus_one = index + 1;
        s.offset = data_.size();
        s.size = static_cast<uint32_t>(v.size());
        s.mark = mark;
        *first = true;
        data_.append(v);
        offsets_.push_back(data_.size());
        if (offsets_.size() * 2 > slots_.size()) {
          Grow();
        }
        return index;
      }
      if (s.hash == hash && BytesEqual(std::string_view(data_.data() + s.offset, s.size), v)) {
        *first = s.mark != mark;
        s.mark = mark;
        return s.index_plus_one - 1;
      }
      h = (h + 1) & mask_;
    }
  }
  size_t size() const { return offsets_.size() - 1; }
  size_t data_bytes() const { return data_.size(); }
  std::string_view Entry(size_t i) const {
    return std::string_view(data_).substr(offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  void Reset() {
    slots_.assign(1024, Slot{});
    mask_ = slots_.size() - 1;
    data_.clear();
    offsets_.assign(1, 0);
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    size_t offset = 0;            // of the entry in data_
    uint32_t size = 0;            // Gather() refuses longer values
    uint32_t index_plus_one = 0;  // 0: empty
    uint64_t mark = 0;            // of the last lookup (GetOrInsert)
  };
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.index_plus_one != 0) {
        size_t h = static_cast<size_t>(s.hash) & mask_;
        while (slots_[h].index_plus_one != 0) {
          h = (h + 1) & mask_;
        }
        slots_[h] = s;
      }
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::string data_;
  std::vector<size_t> offsets_;
};

// Byte strings compare as unsigned bytes; big-endian decimals compare signed on the first byte.
struct BinaryMinMax {
  bool has = false;
  bool signed_first_byte = false;
  std::string min;
  std::string max;

  bool Less(std::string_view a, std::string_view b) const {
    if (signed_first_byte && !a.empty() && !b.empty() && a[0] != b[0]) {
      return static_cast<int8_t>(a[0]) < static_cast<int8_t>(b[0]);
    }
    return BytesLess(a, b);
  }
  void Update(std::string_view v) {
    if (!has) {
      min.assign(v);
      max.assign(v);
      has = true;
      return;
    }
    if (Less(v, min)) {
      min.assign(v);
    } else if (Less(max, v)) {
      max.assign(v);
    }
  }
  void Merge(const BinaryMinMax& o) {
    if (o.has) {
      Update(o.min);
      Update(o.max);
    }
  }
  bool Writable() const {
    return has && min.size() <= kMaxStatisticsValueBytes && max.size() <= kMaxStatisticsValueBytes;
  }
  void Fill(Statistics* s) const {
    if (!Writable()) {
      return;
    }
    s->min_value = min;
    s->max_value = max;
    if (signed_first_byte) {
      s->min = min;  // decimals sort signed: the deprecated fields agree
      s->max = max;
    }
  }
  void Clear() {
    has = false;
    min.clear();
    max.clear();
  }
};

class BinaryValueWriter final : public ValueWriter {
 public:
  BinaryValueWriter(const ColumnDescriptor& column, const ValueWriterOptions& options, bool decimal)
      : max_def_(column.max_definition_level),
        fixed_(column.physical_type == PhysicalType::kFixedLenByteArray),
        width_(column.type_length),
        decimal_(decimal),
        precision_(column.precision),
        options_(options),
        use_dictionary_(options.enable_dictionary) {
    page_.signed_first_byte = chunk_.signed_first_byte = file_.signed_first_byte = decimal;
  }

  Status Append(const ShreddedLeaf& slice) override {
    FERRY_RETURN_IF_ERROR(Gather(slice));
    if (use_dictionary_) {
      // Hashed first, then looked up with the slot of the value kSlotAhead later and the entry
      // of the value kEntryAhead later prefetched.
      constexpr size_t kSlotAhead = 16;
      constexpr size_t kEntryAhead = 8;
      hashes_.resize(views_.size());
      for (size_t i = 0; i < views_.size(); ++i) {
        hashes_[i] = BinaryDictionary::Hash(views_[i]);
      }
      for (size_t i = 0; i < views_.size(); ++i) {
        if (i + kSlotAhead < views_.size()) {
          dictionary_.PrefetchSlot(hashes_[i + kSlotAhead]);
        }
        if (i + kEntryAhead < views_.size()) {
          dictionary_.PrefetchEntry(hashes_[i + kEntryAhead]);
        }
        // Min/max once per distinct value of the page: the comparisons of short strings that
        // share a prefix cost more than the lookup. The page number is kept in the value's
        // dictionary slot, which the lookup has in cache anyway.
        bool first = false;
        indices_.push_back(dictionary_.GetOrInsert(views_[i], hashes_[i], page_number_, &first));
        page_plain_bytes_ += static_cast<int64_t>(views_[i].size()) + (fixed_ ? 0 : 4);
        if (first) {
          page_.Update(views_[i]);
        }
      }
    } else {
      for (std::string_view v : views_) {
        page_.Update(v);
      }
      AppendPlainValues();
    }
    return Status::OK();
  }

  int64_t PageBytes() const override {
    if (use_dictionary_) {
      int bw = BitWidth(dictionary_.size());
      return static_cast<int64_t>(indices_.size() * static_cast<size_t>(bw) / 8 + 1);
    }
    return static_cast<int64_t>(plain_.size());
  }

  Encoding FinishPage(PageBuffer* page, Statistics* stats) override {
    Encoding encoding = Encoding::kPlain;
    std::string* out = &page->bytes;
    if (use_dictionary_ && dictionary_.size() > 0) {
      int bw = std::max(1, BitWidth(dictionary_.size() - 1));
      size_t start = out->size();
      out->push_back(static_cast<char>(bw));
      RleBpEncode(indices_.data(), indices_.size(), bw, out);
      encoding = Encoding::kRleDictionary;
      if (!dictionary_checked_ && indices_.size() >= kDictionaryCheckMinValues) {
        dictionary_checked_ = true;
        if (!DictionaryPays(out->size() - start, DictionaryBytes(), page_plain_bytes_)) {
          FallBackToPlain();
        }
      }
      dictionary_used_ = true;
    } else {
      plain_.MoveTo(page);
    }
    page_plain_bytes_ = 0;
    indices_.clear();
    ++page_number_;
    page_.Fill(stats);
    chunk_.Merge(page_);
    page_.Clear();
    return encoding;
  }

  bool DictionaryFull() const override {
    return use_dictionary_ && DictionaryBytes() > options_.dictionary_max_bytes;
  }
  void FallBackToPlain() override {
    use_dictionary_ = false;
    always_plain_ = true;
  }
  bool FellBackToPlain() const override { return always_plain_; }
  int64_t DictionaryBytes() const override {
    return static_cast<int64_t>(dictionary_.data_bytes() + (fixed_ ? 0 : 4 * dictionary_.size()));
  }
  std::optional<int32_t> FinishDictionary(std::string* out) override {
    std::optional<int32_t> n;
    if (dictionary_used_) {
      out->reserve(out->size() + static_cast<size_t>(DictionaryBytes()));
      for (size_t i = 0; i < dictionary_.size(); ++i) {
        AppendPlain(dictionary_.Entry(i), out);
      }
      n = static_cast<int32_t>(dictionary_.size());
    }
    dictionary_.Reset();
    dictionary_used_ = false;
    dictionary_checked_ = false;
    use_dictionary_ = options_.enable_dictionary && !always_plain_;
    return n;
  }

  void FinishChunk(Statistics* stats) override {
    chunk_.Fill(stats);
    file_.Merge(chunk_);
    chunk_.Clear();
  }

  void FileMinMax(std::optional<StatValue>* min, std::optional<StatValue>* max,
                  bool whole_bounds) const override {
    if (!file_.has || (!whole_bounds && !file_.Writable())) {
      return;
    }
    if (decimal_) {
      *min = StatValue(FromBigEndian(file_.min));
      *max = StatValue(FromBigEndian(file_.max));
    } else {
      *min = StatValue(file_.min);
      *max = StatValue(file_.max);
    }
  }

 private:
  void AppendPlain(std::string_view v, std::string* out) const {
    if (!fixed_) {
      AppendLE(out, static_cast<uint32_t>(v.size()));
    }
    out->append(v);
  }

  // views_ in PLAIN encoding at the end of plain_: sized once, then filled.
  void AppendPlainValues() {
    size_t bytes = 0;
    for (std::string_view v : views_) {
      bytes += v.size();
    }
    if (!fixed_) {
      bytes += 4 * views_.size();
    }
    char* out = plain_.Extend(bytes);
    for (std::string_view v : views_) {
      if (!fixed_) {
        StoreLE(out, static_cast<uint32_t>(v.size()));
        out += 4;
      }
      std::memcpy(out, v.data(), v.size());
      out += v.size();
    }
  }

  Status Gather(const ShreddedLeaf& slice) {
    views_.clear();
    views_.reserve(static_cast<size_t>(slice.num_values));
    if (decimal_) {
      return GatherDecimals(slice);
    }
    const auto& col = *slice.leaf->As<BinaryColumn>();
    const int64_t* offsets = col.offsets().data();
    const char* data = col.data().data();
    ForEachValueRow(slice, max_def_, [&](int64_t row) {
      views_.emplace_back(data + offsets[row],
                          static_cast<size_t>(offsets[row + 1] - offsets[row]));
    });
    if (fixed_) {
      for (std::string_view v : views_) {
        if (v.size() != static_cast<size_t>(width_)) {
          return InvalidArgument("value of {} bytes in a FIXED_LEN_BYTE_ARRAY({}) column", v.size(),
                                 width_);
        }
      }
    }
    if (!fixed_ && col.data().size() > UINT32_MAX) {
      for (std::string_view v : views_) {
        if (v.size() > UINT32_MAX) {
          return InvalidArgument("value of {} bytes is too long for Parquet", v.size());
        }
      }
    }
    return Status::OK();
  }

  // Int128 → big-endian two's complement of width_ bytes.
  Status GatherDecimals(const ShreddedLeaf& slice) {
    const Int128* in = slice.leaf->As<DecimalColumn>()->values().data();
    auto w = static_cast<size_t>(width_);
    decimal_bytes_.resize(static_cast<size_t>(slice.num_values) * w);
    char* out = decimal_bytes_.data();
    Int128 limit = 1;
    for (int32_t i = 0; i < precision_; ++i) {
      limit *= 10;
    }
    bool out_of_range = false;
    ForEachValueRow(slice, max_def_, [&](int64_t row) {
      Int128 v = in[row];
      out_of_range = out_of_range || v >= limit || v <= -limit;
      auto u = static_cast<columnar::UInt128>(v);
      for (size_t b = 0; b < w; ++b) {
        out[w - 1 - b] = static_cast<char>(static_cast<uint8_t>(u >> (8 * b)));
      }
      views_.emplace_back(out, w);
      out += w;
    });
    if (out_of_range) {
      return InvalidArgument("decimal value out of range for precision {}", precision_);
    }
    return Status::OK();
  }

  static Int128 FromBigEndian(std::string_view b) {
    columnar::UInt128 u = static_cast<uint8_t>(b[0]) & 0x80 ? ~columnar::UInt128{0} : 0;
    for (char c : b) {
      u = (u << 8) | static_cast<uint8_t>(c);
    }
    return static_cast<Int128>(u);
  }

  int16_t max_def_;
  bool fixed_;
  int32_t width_;
  bool decimal_;
  int32_t precision_;
  ValueWriterOptions options_;
  bool use_dictionary_;
  bool always_plain_ = false;
  bool dictionary_checked_ = false;  // this chunk's dictionary was judged (DictionaryPays)
  int64_t page_plain_bytes_ = 0;     // PLAIN size of the current page's dictionary-encoded values
  bool dictionary_used_ = false;
  BinaryDictionary dictionary_;
  std::vector<uint32_t> indices_;
  // Numbers the pages for BinaryDictionary::GetOrInsert's marks; 2^64 pages are never reached,
  // so a value never seems seen by a page that did not see it.
  uint64_t page_number_ = 1;
  PlainPageValues plain_;
  std::vector<std::string_view> views_;
  std::vector<uint64_t> hashes_;  // of views_, for dictionary lookups
  std::string decimal_bytes_;
  BinaryMinMax page_;
  BinaryMinMax chunk_;
  BinaryMinMax file_;
};

}  // namespace

Result<std::unique_ptr<ValueWriter>> MakeBinaryValueWriter(const ColumnDescriptor& c,
                                                           const columnar::DataType& type,
                                                           const ValueWriterOptions& o) {
  bool decimal = type.id() == columnar::TypeId::kDecimal;
  if (!decimal && !type.is_binary_like()) {
    return Internal("no binary value writer for {}", type.ToString());
  }
  if (decimal && c.physical_type != PhysicalType::kFixedLenByteArray) {
    return Internal("decimal as {} needs the numeric writer", PhysicalTypeName(c.physical_type));
  }
  return std::unique_ptr<ValueWriter>(new BinaryValueWriter(c, o, decimal));
}

}  // namespace ferry::parquet::internal
