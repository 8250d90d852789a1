// Value writers for BOOLEAN, INT32, INT64, FLOAT and DOUBLE (column_writer_internal.h).
#include <bit>
#include <cmath>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "ferry/parquet/column_writer_internal.h"
#include "ferry/parquet/rle.h"

namespace ferry::parquet::internal {
namespace {

using columnar::Int128;
using columnar::PrimitiveColumn;

template <typename P>
using BitsOf = std::conditional_t<sizeof(P) == 4, uint32_t, uint64_t>;

// Open-addressing hash table from a value's bit pattern to its dictionary index. Floats are
// keyed by bits, so -0.0 and +0.0 (and NaN payloads) stay distinct, as PLAIN would keep them.
template <typename U>
class FixedDictionary {
 public:
  FixedDictionary() { Reset(); }

  uint32_t GetOrInsert(U key) {
    size_t h = Hash(key) & mask_;
    while (true) {
      Slot& s = slots_[h];
      if (s.index_plus_one == 0) {
        auto index = static_cast<uint32_t>(values_.size());
        s.key = key;
        s.index_plus_one = index + 1;
        values_.push_back(key);
        if (values_.size() * 2 > slots_.size()) {
          Grow();
        }
        return index;
      }
      if (s.key == key) {
        return s.index_plus_one - 1;
      }
      h = (h + 1) & mask_;
    }
  }
  size_t size() const { return values_.size(); }
  const std::vector<U>& values() const { return values_; }
  void Reset() {
    slots_.assign(1024, Slot{});
    mask_ = slots_.size() - 1;
    values_.clear();
  }

 private:
  struct Slot {
    U key = 0;
    uint32_t index_plus_one = 0;
  };
  static size_t Hash(U key) {
    uint64_t x = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(x ^ (x >> 29));
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.index_plus_one != 0) {
        size_t h = Hash(s.key) & mask_;
        while (slots_[h].index_plus_one != 0) {
          h = (h + 1) & mask_;
        }
        slots_[h] = s;
      }
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::vector<U> values_;
};

// Min/max in the column's sort order; NaNs are counted, never bounds.
template <typename P, bool kUnsigned>
struct MinMax {
  bool has = false;
  P min{};
  P max{};
  int64_t nan_count = 0;

  static bool Less(P a, P b) {
    if constexpr (kUnsigned) {
      using U = std::make_unsigned_t<P>;
      return static_cast<U>(a) < static_cast<U>(b);
    } else {
      return a < b;
    }
  }
  void Update(std::span<const P> values) {
    size_t i = 0;
    if (!has) {
      for (; i < values.size(); ++i) {
        if constexpr (std::is_floating_point_v<P>) {
          if (std::isnan(values[i])) {
            ++nan_count;
            continue;
          }
        }
        min = max = values[i];
        has = true;
        ++i;
        break;
      }
    }
    P lo = min;
    P hi = max;
    for (; i < values.size(); ++i) {
      P v = values[i];
      if constexpr (std::is_floating_point_v<P>) {
        if (std::isnan(v)) {
          ++nan_count;
          continue;
        }
      }
      lo = Less(v, lo) ? v : lo;
      hi = Less(hi, v) ? v : hi;
    }
    min = lo;
    max = hi;
  }
  void Merge(const MinMax& o) {
    nan_count += o.nan_count;
    if (!o.has) {
      return;
    }
    if (!has) {
      *this = MinMax{true, o.min, o.max, nan_count};
      return;
    }
    min = Less(o.min, min) ? o.min : min;
    max = Less(max, o.max) ? o.max : max;
  }
  // Bounds as written: a zero minimum is -0.0 and a zero maximum +0.0 (parquet.thrift).
  P Lower() const {
    if constexpr (std::is_floating_point_v<P>) {
      return min == 0 ? -P{0} : min;
    }
    return min;
  }
  P Upper() const {
    if constexpr (std::is_floating_point_v<P>) {
      return max == 0 ? P{0} : max;
    }
    return max;
  }
  void Fill(Statistics* s) const {
    if constexpr (std::is_floating_point_v<P>) {
      s->nan_count = nan_count;
    }
    if (!has) {
      return;
    }
    P lo = Lower();
    P hi = Upper();
    s->min_value = std::string(reinterpret_cast<const char*>(&lo), sizeof(P));
    s->max_value = std::string(reinterpret_cast<const char*>(&hi), sizeof(P));
    if constexpr (!kUnsigned) {
      s->min = s->min_value;  // the deprecated fields are signed-order: fine here
      s->max = s->max_value;
    }
  }
};

// S: columnar storage type; P: Parquet physical type.
template <typename S, typename P, bool kUnsigned>
class NumericValueWriter final : public ValueWriter {
 public:
  NumericValueWriter(const ColumnDescriptor& column, const ValueWriterOptions& options)
      : max_def_(column.max_definition_level),
        options_(options),
        use_dictionary_(options.enable_dictionary),
        precision_(column.precision) {}

  Status Append(const ShreddedLeaf& slice) override {
    std::span<const P> values;
    const auto& col = *slice.leaf->As<PrimitiveColumn<S>>();
    if constexpr (std::is_same_v<S, P>) {
      if (slice.dense && slice.num_values == slice.num_levels) {
        values = std::span<const P>(col.values().data() + slice.begin,
                                    static_cast<size_t>(slice.end - slice.begin));
      }
    }
    if (values.empty() && slice.num_values > 0) {
      FERRY_RETURN_IF_ERROR(Gather(col, slice));
      values = scratch_;
    }
    page_.Update(values);
    if (use_dictionary_) {
      for (P v : values) {
        indices_.push_back(dictionary_.GetOrInsert(std::bit_cast<BitsOf<P>>(v)));
      }
    } else {
      plain_.Append(values.data(), values.size_bytes());
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
        if (!DictionaryPays(out->size() - start, DictionaryBytes(),
                            static_cast<int64_t>(indices_.size() * sizeof(P)))) {
          FallBackToPlain();
        }
      }
      dictionary_used_ = true;
    } else {
      plain_.MoveTo(page);
    }
    indices_.clear();
    page_.Fill(stats);
    chunk_.Merge(page_);
    page_ = {};
    return encoding;
  }

  bool DictionaryFull() const override {
    return use_dictionary_ &&
           static_cast<int64_t>(dictionary_.size() * sizeof(P)) > options_.dictionary_max_bytes;
  }
  void FallBackToPlain() override {
    use_dictionary_ = false;
    always_plain_ = true;
  }
  bool FellBackToPlain() const override { return always_plain_; }
  int64_t DictionaryBytes() const override {
    return static_cast<int64_t>(dictionary_.size() * sizeof(P));
  }
  std::optional<int32_t> FinishDictionary(std::string* out) override {
    std::optional<int32_t> n;
    if (dictionary_used_) {
      const auto& v = dictionary_.values();
      out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(P));
      n = static_cast<int32_t>(v.size());
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
    chunk_ = {};
  }

  void FileMinMax(std::optional<StatValue>* min, std::optional<StatValue>* max,
                  bool /*whole_bounds*/) const override {
    if (file_.has) {
      *min = Typed(file_.Lower());
      *max = Typed(file_.Upper());
    }
  }

 private:
  static StatValue Typed(P v) {
    if constexpr (std::is_same_v<S, Int128>) {
      return StatValue(Int128{v});
    } else if constexpr (std::is_floating_point_v<P>) {
      return StatValue(static_cast<double>(v));
    } else if constexpr (kUnsigned) {
      return StatValue(static_cast<uint64_t>(static_cast<std::make_unsigned_t<P>>(v)));
    } else {
      return StatValue(static_cast<int64_t>(v));
    }
  }

  Status Gather(const PrimitiveColumn<S>& col, const ShreddedLeaf& slice) {
    scratch_.resize(static_cast<size_t>(slice.num_values));
    P* out = scratch_.data();
    const S* in = col.values().data();
    bool out_of_range = false;
    ForEachValueRow(slice, max_def_, [&](int64_t row) {
      S v = in[row];
      if constexpr (std::is_same_v<S, Int128>) {
        out_of_range |= v > Pow10Minus1() || v < -Pow10Minus1();
      }
      *out++ = static_cast<P>(v);
    });
    if (out_of_range) {
      return InvalidArgument("decimal value out of range for precision {}", precision_);
    }
    return Status::OK();
  }

  Int128 Pow10Minus1() const {
    Int128 p = 1;
    for (int32_t i = 0; i < precision_; ++i) {
      p *= 10;
    }
    return p - 1;
  }

  int16_t max_def_;
  ValueWriterOptions options_;
  bool use_dictionary_;
  bool always_plain_ = false;
  bool dictionary_checked_ = false;  // this chunk's dictionary was judged (DictionaryPays)
  bool dictionary_used_ = false;
  int32_t precision_;
  FixedDictionary<BitsOf<P>> dictionary_;
  std::vector<uint32_t> indices_;
  PlainPageValues plain_;
  std::vector<P> scratch_;
  MinMax<P, kUnsigned> page_;
  MinMax<P, kUnsigned> chunk_;
  MinMax<P, kUnsigned> file_;
};

class BooleanValueWriter final : public ValueWriter {
 public:
  explicit BooleanValueWriter(const ColumnDescriptor& column)
      : max_def_(column.max_definition_level) {}

  Status Append(const ShreddedLeaf& slice) override {
    const uint8_t* in = slice.leaf->As<PrimitiveColumn<uint8_t>>()->values().data();
    ForEachValueRow(slice, max_def_, [&](int64_t row) {
      uint8_t v = in[row] != 0 ? 1 : 0;
      values_.push_back(v);
      seen_[v] = true;
    });
    return Status::OK();
  }
  int64_t PageBytes() const override { return static_cast<int64_t>(values_.size() / 8); }

  Encoding FinishPage(PageBuffer* page, Statistics* stats) override {
    BitPack(values_.data(), values_.size(), 1, &page->bytes);
    values_.clear();
    Fill(seen_, stats);
    chunk_seen_[0] |= seen_[0];
    chunk_seen_[1] |= seen_[1];
    seen_[0] = seen_[1] = false;
    return Encoding::kPlain;
  }
  void FinishChunk(Statistics* stats) override {
    Fill(chunk_seen_, stats);
    file_seen_[0] |= chunk_seen_[0];
    file_seen_[1] |= chunk_seen_[1];
    chunk_seen_[0] = chunk_seen_[1] = false;
  }
  void FileMinMax(std::optional<StatValue>* min, std::optional<StatValue>* max,
                  bool /*whole_bounds*/) const override {
    if (file_seen_[0] || file_seen_[1]) {
      *min = StatValue(!file_seen_[0]);
      *max = StatValue(file_seen_[1]);
    }
  }

 private:
  static void Fill(const bool seen[2], Statistics* s) {
    if (!seen[0] && !seen[1]) {
      return;
    }
    s->min_value = std::string(1, seen[0] ? '\0' : '\1');
    s->max_value = std::string(1, seen[1] ? '\1' : '\0');
    s->min = s->min_value;
    s->max = s->max_value;
  }

  int16_t max_def_;
  std::vector<uint8_t> values_;
  bool seen_[2] = {false, false};
  bool chunk_seen_[2] = {false, false};
  bool file_seen_[2] = {false, false};
};

template <typename S, typename P, bool kUnsigned = false>
std::unique_ptr<ValueWriter> Make(const ColumnDescriptor& c, const ValueWriterOptions& o) {
  return std::make_unique<NumericValueWriter<S, P, kUnsigned>>(c, o);
}

}  // namespace

Result<std::unique_ptr<ValueWriter>> MakeNumericValueWriter(const ColumnDescriptor& c,
                                                            const columnar::DataType& type,
                                                            const ValueWriterOptions& o) {
  using columnar::TypeId;
  switch (type.id()) {
    case TypeId::kBoolean:
      return std::unique_ptr<ValueWriter>(new BooleanValueWriter(c));
    case TypeId::kInt8:
      return Make<int8_t, int32_t>(c, o);
    case TypeId::kInt16:
      return Make<int16_t, int32_t>(c, o);
    case TypeId::kInt32:
    case TypeId::kDate:
      return Make<int32_t, int32_t>(c, o);
    case TypeId::kUInt8:
      return Make<uint8_t, int32_t, true>(c, o);
    case TypeId::kUInt16:
      return Make<uint16_t, int32_t, true>(c, o);
    case TypeId::kUInt32:
      return Make<uint32_t, int32_t, true>(c, o);
    case TypeId::kInt64:
    case TypeId::kTimestamp:
      return Make<int64_t, int64_t>(c, o);
    case TypeId::kUInt64:
      return Make<uint64_t, int64_t, true>(c, o);
    case TypeId::kFloat32:
      return Make<float, float>(c, o);
    case TypeId::kFloat64:
      return Make<double, double>(c, o);
    case TypeId::kDecimal:
      if (c.physical_type == PhysicalType::kInt32) {
        return Make<Int128, int32_t>(c, o);
      }
      if (c.physical_type == PhysicalType::kInt64) {
        return Make<Int128, int64_t>(c, o);
      }
      break;
    default:
      break;
  }
  return Internal("no numeric value writer for {} as {}", type.ToString(),
                  PhysicalTypeName(c.physical_type));
}

Result<std::unique_ptr<ValueWriter>> MakeValueWriter(const ColumnDescriptor& c,
                                                     const columnar::DataType& type,
                                                     const ValueWriterOptions& o) {
  if (c.physical_type == PhysicalType::kByteArray ||
      c.physical_type == PhysicalType::kFixedLenByteArray) {
    return MakeBinaryValueWriter(c, type, o);
  }
  return MakeNumericValueWriter(c, type, o);
}

}  // namespace ferry::parquet::internal
