#include "ferry/delta/roaring_bitmap.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "ferry/base/endian.h"

namespace ferry::delta {
namespace {

constexpr uint32_t kCookieNoRuns = 12346;
constexpr uint32_t kCookieRuns = 12347;
constexpr uint32_t kMaxArray = 4096;
constexpr size_t kBitmapWords = 1024;
constexpr size_t kBitmapBytes = kBitmapWords * 8;
constexpr uint32_t kNoOffsetThreshold = 4;

// Sequential little-endian reads that fail instead of running past the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  size_t left() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  template <typename T>
  Result<T> Take() {
    if (left() < sizeof(T)) {
      return DataLoss("roaring bitmap: truncated at byte {}", pos_);
    }
    T v = LoadLE<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  Result<std::string_view> Bytes(size_t n) {
    if (left() < n) {
      return DataLoss("roaring bitmap: truncated at byte {} (wants {} more)", pos_, n);
    }
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Runs of consecutive values in a container: (start, length) pairs.
std::vector<std::pair<uint16_t, uint32_t>> Runs(const std::vector<uint16_t>& values) {
  std::vector<std::pair<uint16_t, uint32_t>> runs;
  for (uint16_t v : values) {
    if (!runs.empty() && runs.back().first + runs.back().second == v) {
      ++runs.back().second;
    } else {
      runs.emplace_back(v, 1);
    }
  }
  return runs;
}

}  // namespace

bool RoaringBitmap64::Container::Contains(uint16_t low) const {
  if (!bits.empty()) {
    return (bits[low >> 6] >> (low & 63)) & 1;
  }
  return std::binary_search(array.begin(), array.end(), low);
}

void RoaringBitmap64::Container::Add(uint16_t low) {
  if (!bits.empty()) {
    bits[low >> 6] |= uint64_t{1} << (low & 63);
    ++cardinality;
    return;
  }
  array.insert(std::lower_bound(array.begin(), array.end(), low), low);
  ++cardinality;
  if (cardinality > kMaxArray) {
    ToBitmap();
  }
}

void RoaringBitmap64::Container::ToBitmap() {
  bits.assign(kBitmapWords, 0);
  for (uint16_t v : array) {
    bits[v >> 6] |= uint64_t{1} << (v & 63);
  }
  array.clear();
  array.shrink_to_fit();
}

void RoaringBitmap64::Add(uint64_t value) {
  Container& c = containers_[value >> 16];
  const auto low = static_cast<uint16_t>(value & 0xFFFF);
  if (!c.Contains(low)) {
    c.Add(low);
    ++cardinality_;
  }
}

void RoaringBitmap64::AddRange(uint64_t begin, uint64_t end) {
  for (uint64_t v = begin; v < end; ++v) {
    Add(v);
  }
}

bool RoaringBitmap64::Contains(uint64_t value) const {
  auto it = containers_.find(value >> 16);
  return it != containers_.end() && it->second.Contains(static_cast<uint16_t>(value & 0xFFFF));
}

std::optional<uint64_t> RoaringBitmap64::Max() const {
  if (containers_.empty()) {
    return std::nullopt;
  }
  const auto& [key, c] = *containers_.rbegin();
  if (c.bits.empty()) {
    return (key << 16) | c.array.back();
  }
  for (size_t w = kBitmapWords; w-- > 0;) {
    if (c.bits[w] != 0) {
      return (key << 16) | (w * 64 + 63 - static_cast<uint64_t>(std::countl_zero(c.bits[w])));
    }
  }
  return std::nullopt;  // unreachable: containers are never empty
}

std::vector<uint64_t> RoaringBitmap64::ToVector() const {
  std::vector<uint64_t> out;
  out.reserve(cardinality_);
  for (const auto& [key, c] : containers_) {
    if (c.bits.empty()) {
      for (uint16_t v : c.array) {
        out.push_back((key << 16) | v);
      }
      continue;
    }
    for (size_t w = 0; w < kBitmapWords; ++w) {
      for (uint64_t word = c.bits[w]; word != 0; word &= word - 1) {
        out.push_back((key << 16) | (w * 64 + static_cast<uint64_t>(std::countr_zero(word))));
      }
    }
  }
  return out;
}

bool RoaringBitmap64::operator==(const RoaringBitmap64& other) const {
  return cardinality_ == other.cardinality_ && ToVector() == other.ToVector();
}

std::string RoaringBitmap64::Serialize() const {
  // Group the containers by their high 32 bits (the buckets).
  std::map<uint32_t, std::vector<std::pair<uint16_t, const Container*>>> buckets;
  for (const auto& [key, c] : containers_) {
    buckets[static_cast<uint32_t>(key >> 16)].emplace_back(static_cast<uint16_t>(key & 0xFFFF), &c);
  }
  std::string out;
  AppendLE<uint64_t>(&out, buckets.size());
  for (const auto& [high, list] : buckets) {
    AppendLE<uint32_t>(&out, high);
    // Choose each container's form.
    struct Form {
      std::vector<uint16_t> values;
      std::vector<std::pair<uint16_t, uint32_t>> runs;
      bool run = false;
      size_t bytes = 0;
    };
    std::vector<Form> forms(list.size());
    bool any_run = false;
    for (size_t i = 0; i < list.size(); ++i) {
      const Container& c = *list[i].second;
      Form& f = forms[i];
      if (c.bits.empty()) {
        f.values = c.array;
      } else {
        for (size_t w = 0; w < kBitmapWords; ++w) {
          for (uint64_t word = c.bits[w]; word != 0; word &= word - 1) {
            f.values.push_back(
                static_cast<uint16_t>(w * 64 + static_cast<size_t>(std::countr_zero(word))));
          }
        }
      }
      f.runs = Runs(f.values);
      const size_t plain = c.cardinality <= kMaxArray ? 2 * size_t{c.cardinality} : kBitmapBytes;
      const size_t run = 2 + 4 * f.runs.size();
      f.run = run < plain;
      f.bytes = f.run ? run : plain;
      any_run = any_run || f.run;
    }
    const auto n = static_cast<uint32_t>(list.size());
    size_t header = 0;
    if (any_run) {
      AppendLE<uint32_t>(&out, kCookieRuns | ((n - 1) << 16));
      std::string flags((n + 7) / 8, '\0');
      for (size_t i = 0; i < n; ++i) {
        if (forms[i].run) {
          flags[i / 8] = static_cast<char>(flags[i / 8] | (1 << (i % 8)));
        }
      }
      out += flags;
      header = 4 + flags.size();
    } else {
      AppendLE<uint32_t>(&out, kCookieNoRuns);
      AppendLE<uint32_t>(&out, n);
      header = 8;
    }
    for (size_t i = 0; i < n; ++i) {
      AppendLE<uint16_t>(&out, list[i].first);
      AppendLE<uint16_t>(&out, static_cast<uint16_t>(list[i].second->cardinality - 1));
    }
    header += 4 * size_t{n};
    if (!any_run || n >= kNoOffsetThreshold) {
      size_t offset = header + 4 * size_t{n};
      for (size_t i = 0; i < n; ++i) {
        AppendLE<uint32_t>(&out, static_cast<uint32_t>(offset));
        offset += forms[i].bytes;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      const Form& f = forms[i];
      if (f.run) {
        AppendLE<uint16_t>(&out, static_cast<uint16_t>(f.runs.size()));
        for (const auto& [start, length] : f.runs) {
          AppendLE<uint16_t>(&out, start);
          AppendLE<uint16_t>(&out, static_cast<uint16_t>(length - 1));
        }
      } else if (f.values.size() <= kMaxArray) {
        for (uint16_t v : f.values) {
          AppendLE<uint16_t>(&out, v);
        }
      } else {
        std::vector<uint64_t> words(kBitmapWords, 0);
        for (uint16_t v : f.values) {
          words[v >> 6] |= uint64_t{1} << (v & 63);
        }
        for (uint64_t w : words) {
          AppendLE<uint64_t>(&out, w);
        }
      }
    }
  }
  return out;
}

Result<RoaringBitmap64> RoaringBitmap64::Deserialize(std::string_view bytes,
                                                     uint64_t max_cardinality) {
  Reader in(bytes);
  RoaringBitmap64 out;
  FERRY_ASSIGN_OR_RETURN(uint64_t num_buckets, in.Take<uint64_t>());
  // A bucket takes at least 12 bytes (key, cookie, count).
  if (num_buckets > in.left() / 12) {
    return DataLoss("roaring bitmap: {} buckets in {} bytes", num_buckets, bytes.size());
  }
  std::optional<uint32_t> previous_high;
  for (uint64_t b = 0; b < num_buckets; ++b) {
    FERRY_ASSIGN_OR_RETURN(uint32_t high, in.Take<uint32_t>());
    if (high & 0x80000000u) {
      return DataLoss("roaring bitmap: bucket key {} has its top bit set", high);
    }
    if (previous_high && high <= *previous_high) {
      return DataLoss("roaring bitmap: bucket keys not ascending ({} after {})", high,
                      *previous_high);
    }
    previous_high = high;
    FERRY_ASSIGN_OR_RETURN(uint32_t cookie, in.Take<uint32_t>());
    uint32_t n = 0;
    std::string_view run_flags;
    if ((cookie & 0xFFFF) == kCookieRuns) {
      n = (cookie >> 16) + 1;
      FERRY_ASSIGN_OR_RETURN(run_flags, in.Bytes((n + 7) / 8));
    } else if (cookie == kCookieNoRuns) {
      FERRY_ASSIGN_OR_RETURN(n, in.Take<uint32_t>());
      if (n > 65536) {
        return DataLoss("roaring bitmap: {} containers in one bucket", n);
      }
    } else {
      return DataLoss("roaring bitmap: unknown cookie {}", cookie);
    }
    auto is_run = [&](uint32_t i) {
      return !run_flags.empty() && ((static_cast<uint8_t>(run_flags[i / 8]) >> (i % 8)) & 1);
    };
    // Step b, checked before any container is allocated.
    if (in.left() / 4 < n) {
      return DataLoss("roaring bitmap: {} containers in {} bytes", n, in.left());
    }
    std::vector<std::pair<uint16_t, uint32_t>> headers(n);
    uint64_t bucket_cardinality = 0;
    for (uint32_t i = 0; i < n; ++i) {
      FERRY_ASSIGN_OR_RETURN(headers[i].first, in.Take<uint16_t>());
      FERRY_ASSIGN_OR_RETURN(uint16_t card_minus_one, in.Take<uint16_t>());
      headers[i].second = uint32_t{card_minus_one} + 1;
      if (i > 0 && headers[i].first <= headers[i - 1].first) {
        return DataLoss("roaring bitmap: container keys not ascending");
      }
      bucket_cardinality += headers[i].second;
    }
    if (bucket_cardinality > max_cardinality - out.cardinality_) {
      return DataLoss("roaring bitmap: more than {} values", max_cardinality);
    }
    if (run_flags.empty() || n >= kNoOffsetThreshold) {
      FERRY_RETURN_IF_ERROR(in.Bytes(4 * size_t{n}).status());
    }
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t key = (uint64_t{high} << 16) | headers[i].first;
      const uint32_t card = headers[i].second;
      Container c;
      if (is_run(i)) {
        FERRY_ASSIGN_OR_RETURN(uint16_t runs, in.Take<uint16_t>());
        FERRY_ASSIGN_OR_RETURN(std::string_view pairs, in.Bytes(4 * size_t{runs}));
        uint64_t total = 0;
        uint32_t next = 0;  // the smallest start the next run may have
        for (size_t r = 0; r < runs; ++r) {
          const uint32_t start = LoadLE<uint16_t>(pairs.data() + 4 * r);
          const uint32_t length = uint32_t{LoadLE<uint16_t>(pairs.data() + 4 * r + 2)} + 1;
          if (start < next || start + length > 65536) {
            return DataLoss("roaring bitmap: overlapping or out-of-range run");
          }
          next = start + length;
          total += length;
        }
        if (total != card) {
          return DataLoss("roaring bitmap: runs hold {} values, header says {}", total, card);
        }
        if (card > kMaxArray) {
          c.bits.assign(kBitmapWords, 0);
        } else {
          c.array.reserve(card);
        }
        for (size_t r = 0; r < runs; ++r) {
          const uint32_t start = LoadLE<uint16_t>(pairs.data() + 4 * r);
          const uint32_t length = uint32_t{LoadLE<uint16_t>(pairs.data() + 4 * r + 2)} + 1;
          for (uint32_t v = start; v < start + length; ++v) {
            if (c.bits.empty()) {
              c.array.push_back(static_cast<uint16_t>(v));
            } else {
              c.bits[v >> 6] |= uint64_t{1} << (v & 63);
            }
          }
        }
      } else if (card <= kMaxArray) {
        FERRY_ASSIGN_OR_RETURN(std::string_view values, in.Bytes(2 * size_t{card}));
        c.array.resize(card);
        for (uint32_t k = 0; k < card; ++k) {
          c.array[k] = LoadLE<uint16_t>(values.data() + 2 * k);
          if (k > 0 && c.array[k] <= c.array[k - 1]) {
            return DataLoss("roaring bitmap: array container not ascending");
          }
        }
      } else {
        FERRY_ASSIGN_OR_RETURN(std::string_view words, in.Bytes(kBitmapBytes));
        c.bits.resize(kBitmapWords);
        uint64_t count = 0;
        for (size_t w = 0; w < kBitmapWords; ++w) {
          c.bits[w] = LoadLE<uint64_t>(words.data() + 8 * w);
          count += static_cast<uint64_t>(std::popcount(c.bits[w]));
        }
        if (count != card) {
          return DataLoss("roaring bitmap: bitmap holds {} values, header says {}", count, card);
        }
      }
      c.cardinality = card;
      out.cardinality_ += card;
      out.containers_.emplace(key, std::move(c));
    }
  }
  if (in.left() != 0) {
    return DataLoss("roaring bitmap: {} trailing bytes", in.left());
  }
  return out;
}

}  // namespace ferry::delta
